//! Code playgrounds (`/realm/playgrounds`): administrators configure where code blocks of a
//! language can be opened; every change sends `realm_playgrounds` with the whole list to
//! everyone.

use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::realm_config::playgrounds_changed;
use parley_domain::permissions::check_is_admin;
use parley_domain::playground::{check_playground, duplicate_playground, playground_not_found};
use parley_domain::user::User;
use parley_storage::{playgrounds, StorageError};

/// `POST /realm/playgrounds`: an administrator adds a playground; returns its ID. A language
/// may have several playgrounds, with different names.
pub async fn do_add_playground(
    ctx: &Context,
    caller: &User,
    name: String,
    pygments_language: String,
    url_template: String,
) -> ActionResult<i64> {
    check_is_admin(caller)?;
    let p = check_playground(&name, &pygments_language, &url_template)?;
    ctx.write(move |conn, events| {
        let taken = playgrounds::all(conn)?
            .iter()
            .any(|o| o.name == p.name && o.pygments_language == p.pygments_language);
        if taken {
            return Err(duplicate_playground().into());
        }
        let id = match playgrounds::insert(conn, &p.name, &p.pygments_language, &p.url_template) {
            Err(StorageError::UniqueViolation(_)) => return Err(duplicate_playground().into()),
            other => other?,
        };
        events.push(playgrounds_changed(conn)?);
        Ok(id)
    })
    .await
}

/// `DELETE /realm/playgrounds/{playground_id}`: an administrator removes a playground.
pub async fn do_remove_playground(ctx: &Context, caller: &User, id: i64) -> ActionResult<()> {
    check_is_admin(caller)?;
    ctx.write(move |conn, events| {
        if !playgrounds::delete(conn, id)? {
            return Err(playground_not_found().into());
        }
        events.push(playgrounds_changed(conn)?);
        Ok(())
    })
    .await
}

//! Muting people (`/users/me/muted_users/{muted_user_id}`) and the snapshot's `muted_users`.
//! Muting someone also marks the messages they sent to the caller as read, as the reference does.

use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::messages::flags_changed;
use crate::notify::people::{muted_users_changed, muted_users_list};
use crate::time::now;
use parley_domain::user::User;
use parley_domain::{RequestError, UserId};
use parley_storage::messages::{self, Condition};
use parley_storage::{muted_users, users, DbConn};

/// Anyone the caller may mute or unmute: bots and deactivated people included.
fn access_muted(conn: &mut DbConn, id: UserId) -> ActionResult<User> {
    Ok(users::by_id(conn, id)?.ok_or_else(|| RequestError::bad_request("No such user"))?)
}

/// `POST /users/me/muted_users/{muted_user_id}`.
pub async fn do_mute_user(ctx: &Context, user: User, muted: UserId) -> ActionResult<()> {
    if muted == user.id {
        return Err(RequestError::bad_request("Cannot mute self").into());
    }
    ctx.write(move |conn, events| {
        let muted = access_muted(conn, muted)?;
        if muted_users::is_muted(conn, user.id, muted.id)? {
            return Err(RequestError::bad_request("User already muted").into());
        }
        muted_users::add(conn, user.id, muted.id, now())?;
        let read = messages::mark_read_where(conn, user.id, &[Condition::Sender(muted.id)])?;
        if !read.is_empty() {
            events.push(flags_changed(user.id, true, "read", &read, None));
        }
        let all = muted_users::of_user(conn, user.id)?;
        events.push(muted_users_changed(user.id, &all));
        Ok(())
    })
    .await
}

/// `DELETE /users/me/muted_users/{muted_user_id}`.
pub async fn do_unmute_user(ctx: &Context, user: User, muted: UserId) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        let muted = access_muted(conn, muted)?;
        if !muted_users::remove(conn, user.id, muted.id)? {
            return Err(RequestError::bad_request("User is not muted").into());
        }
        let all = muted_users::of_user(conn, user.id)?;
        events.push(muted_users_changed(user.id, &all));
        Ok(())
    })
    .await
}

/// The snapshot's `muted_users`: `[{id, timestamp}]`.
pub(crate) fn snapshot(
    conn: &mut DbConn,
    user: UserId,
) -> ActionResult<Vec<parley_wire::user::MutedUser>> {
    Ok(muted_users_list(&muted_users::of_user(conn, user)?))
}

/// A new message from someone a recipient muted arrives already read for them, as in the
/// reference.
pub(crate) fn mark_read_for_muters(
    conn: &mut parley_storage::DbConn,
    sender: parley_domain::UserId,
    rows: &mut [(parley_domain::UserId, i64)],
) -> Result<(), parley_storage::StorageError> {
    let muters = crate::realm_cache::muters_of(conn, sender)?;
    if muters.is_empty() {
        return Ok(());
    }
    for (user, bits) in rows.iter_mut() {
        if muters.contains(user) {
            *bits |= parley_domain::message::flags::READ;
        }
    }
    Ok(())
}

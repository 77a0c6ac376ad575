//! Linkifiers (`/realm/linkifiers`, `/realm/filters`): administrators define patterns whose
//! matches in messages and topics become links; everyone reads them. Every change sends
//! `realm_linkifiers` with the whole list to the clients that understand URL templates.

use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::realm_config::linkifiers_changed;
use parley_domain::linkifier::{check_linkifier, check_reorder, duplicate_pattern};
use parley_domain::permissions::check_is_admin;
use parley_domain::user::User;
use parley_domain::RequestError;
use parley_storage::{linkifiers, DbConn, StorageError};
use std::collections::BTreeSet;

fn not_found() -> RequestError {
    RequestError::invalid_param("filter_id", "Linkifier not found.")
}

/// Whether another linkifier than `except` already uses `pattern`.
fn pattern_taken(conn: &mut DbConn, pattern: &str, except: Option<i64>) -> ActionResult<bool> {
    Ok(linkifiers::all(conn)?
        .iter()
        .any(|l| l.pattern == pattern && Some(l.id) != except))
}

/// A unique-key clash that a concurrent request won is the same error as the check before it.
fn unique_as_duplicate<T>(result: Result<T, StorageError>) -> ActionResult<T> {
    match result {
        Err(StorageError::UniqueViolation(_)) => Err(duplicate_pattern().into()),
        other => Ok(other?),
    }
}

/// `GET /realm/linkifiers`: every linkifier in processing order; any user may read them.
pub async fn get_linkifiers(ctx: &Context) -> ActionResult<Vec<parley_wire::realm::Linkifier>> {
    Ok(ctx.run(crate::present::realm::linkifiers).await?)
}

/// `POST /realm/filters`: an administrator adds a linkifier, processed after the existing ones;
/// returns its ID.
pub async fn do_add_linkifier(
    ctx: &Context,
    caller: &User,
    pattern: String,
    url_template: String,
) -> ActionResult<i64> {
    check_is_admin(caller)?;
    let (pattern, url_template) = check_linkifier(&pattern, &url_template)?;
    ctx.write(move |conn, events| {
        if pattern_taken(conn, &pattern, None)? {
            return Err(duplicate_pattern().into());
        }
        crate::realm_cache::changing();
        let id = unique_as_duplicate(linkifiers::insert(conn, &pattern, &url_template))?;
        events.push(linkifiers_changed(conn)?);
        Ok(id)
    })
    .await
}

/// `PATCH /realm/filters/{filter_id}`: an administrator replaces a linkifier's pattern and
/// template (validated as when adding); its place in the order stays.
pub async fn do_update_linkifier(
    ctx: &Context,
    caller: &User,
    id: i64,
    pattern: String,
    url_template: String,
) -> ActionResult<()> {
    check_is_admin(caller)?;
    ctx.write(move |conn, events| {
        if linkifiers::get(conn, id)?.is_none() {
            return Err(not_found().into());
        }
        let (pattern, url_template) = check_linkifier(&pattern, &url_template)?;
        if pattern_taken(conn, &pattern, Some(id))? {
            return Err(duplicate_pattern().into());
        }
        crate::realm_cache::changing();
        unique_as_duplicate(linkifiers::update(conn, id, &pattern, &url_template))?;
        events.push(linkifiers_changed(conn)?);
        Ok(())
    })
    .await
}

/// `DELETE /realm/filters/{filter_id}`: an administrator removes a linkifier.
pub async fn do_remove_linkifier(ctx: &Context, caller: &User, id: i64) -> ActionResult<()> {
    check_is_admin(caller)?;
    ctx.write(move |conn, events| {
        crate::realm_cache::changing();
        if !linkifiers::delete(conn, id)? {
            return Err(not_found().into());
        }
        events.push(linkifiers_changed(conn)?);
        Ok(())
    })
    .await
}

/// `PATCH /realm/linkifiers`: an administrator sets the processing order; the list must name
/// every linkifier exactly once. With no linkifiers, the empty list changes nothing and sends
/// no event.
pub async fn do_reorder_linkifiers(
    ctx: &Context,
    caller: &User,
    ordered_ids: Vec<i64>,
) -> ActionResult<()> {
    check_is_admin(caller)?;
    ctx.write(move |conn, events| {
        let existing: BTreeSet<i64> = linkifiers::all(conn)?.iter().map(|l| l.id).collect();
        check_reorder(&ordered_ids, &existing)?;
        if existing.is_empty() {
            return Ok(());
        }
        crate::realm_cache::changing();
        linkifiers::reorder(conn, &ordered_ids)?;
        events.push(linkifiers_changed(conn)?);
        Ok(())
    })
    .await
}

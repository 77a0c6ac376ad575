//! Saved snippets (`/saved_snippets`): a person's titled message text, seen only by them.

use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::personal::{saved_snippet_added, saved_snippet_removed, saved_snippet_updated};
use crate::time::now;
use parley_domain::saved_snippet::{check_content, check_title};
use parley_domain::user::User;
use parley_domain::RequestError;
use parley_storage::saved_snippets;
use parley_storage::DbConn;
use parley_wire::personal::SavedSnippet as WireSnippet;

fn not_found() -> RequestError {
    RequestError::bad_request("Saved snippet does not exist.").with_status(404)
}

fn list(conn: &mut DbConn, user: &User) -> ActionResult<Vec<WireSnippet>> {
    Ok(saved_snippets::of_user(conn, user.id)?
        .iter()
        .map(crate::present::personal::saved_snippet)
        .collect())
}

/// `GET /saved_snippets`: the caller's snippets, oldest first.
pub async fn get_saved_snippets(ctx: &Context, user: User) -> ActionResult<Vec<WireSnippet>> {
    ctx.run(move |conn| list(conn, &user)).await
}

/// `POST /saved_snippets`: creates a snippet; returns its ID.
pub async fn do_create_saved_snippet(
    ctx: &Context,
    user: User,
    title: String,
    content: String,
) -> ActionResult<i64> {
    let title = check_title(&title)?;
    let content = check_content(&content)?;
    ctx.write(move |conn, events| {
        let snippet = saved_snippets::insert(conn, user.id, &title, &content, now())?;
        events.push(saved_snippet_added(user.id, &snippet));
        Ok(snippet.id)
    })
    .await
}

/// `PATCH /saved_snippets/{saved_snippet_id}`: changes the title and/or content of a snippet
/// of the caller. Changing neither changes nothing (and sends no event).
pub async fn do_edit_saved_snippet(
    ctx: &Context,
    user: User,
    id: i64,
    title: Option<String>,
    content: Option<String>,
) -> ActionResult<()> {
    let title = title.as_deref().map(check_title).transpose()?;
    let content = content.as_deref().map(check_content).transpose()?;
    ctx.write(move |conn, events| {
        let mut snippet = saved_snippets::get(conn, user.id, id)?.ok_or_else(not_found)?;
        if title.is_none() && content.is_none() {
            return Ok(());
        }
        if let Some(title) = title {
            snippet.title = title;
        }
        if let Some(content) = content {
            snippet.content = content;
        }
        saved_snippets::update(conn, user.id, id, &snippet.title, &snippet.content)?;
        events.push(saved_snippet_updated(user.id, &snippet));
        Ok(())
    })
    .await
}

/// `DELETE /saved_snippets/{saved_snippet_id}`: deletes a snippet of the caller.
pub async fn do_delete_saved_snippet(ctx: &Context, user: User, id: i64) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        if !saved_snippets::delete(conn, user.id, id)? {
            return Err(not_found().into());
        }
        events.push(saved_snippet_removed(user.id, id));
        Ok(())
    })
    .await
}

/// The snapshot's `saved_snippets`.
pub(crate) fn snapshot(conn: &mut DbConn, user: &User) -> ActionResult<Vec<WireSnippet>> {
    list(conn, user)
}

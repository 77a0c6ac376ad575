//! Alert words: listing, adding and removing the caller's (`/users/me/alert_words`), the
//! snapshot's `alert_words`, and flagging messages that contain a recipient's word.

use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::people::alert_words_changed;
use parley_domain::alert_words::{clean_new_words, people_alerted};
use parley_domain::message::flags;
use parley_domain::user::User;
use parley_domain::{MessageId, UserId};
use parley_storage::{alert_words, DbConn};

/// `GET /users/me/alert_words`: the caller's words, in the order they were added.
pub async fn list_alert_words(ctx: &Context, user: User) -> ActionResult<Vec<String>> {
    ctx.run(move |conn| Ok(alert_words::of_user(conn, user.id)?))
        .await
}

/// `POST /users/me/alert_words`: adds words (at most 100 characters each; trimmed, blank ones
/// dropped, ones the caller has already, ignoring case, skipped); returns the whole list.
pub async fn do_add_alert_words(
    ctx: &Context,
    user: User,
    words: Vec<String>,
) -> ActionResult<Vec<String>> {
    let words = clean_new_words(&words)?;
    ctx.write(move |conn, events| {
        alert_words::add(conn, user.id, &words)?;
        let all = alert_words::of_user(conn, user.id)?;
        events.push(alert_words_changed(user.id, &all));
        Ok(all)
    })
    .await
}

/// `DELETE /users/me/alert_words`: removes words, ignoring case (unknown ones are ignored);
/// returns the whole list.
pub async fn do_remove_alert_words(
    ctx: &Context,
    user: User,
    words: Vec<String>,
) -> ActionResult<Vec<String>> {
    ctx.write(move |conn, events| {
        alert_words::remove(conn, user.id, &words)?;
        let all = alert_words::of_user(conn, user.id)?;
        events.push(alert_words_changed(user.id, &all));
        Ok(all)
    })
    .await
}

/// Adds `has_alert_word` to the rows of recipients (never the sender) with a word in `content`;
/// the recipients' words come from the organization cache (`realm_cache::alert_words_of`).
pub(crate) fn flag_alerted(
    conn: &mut DbConn,
    content: &str,
    sender: UserId,
    rows: &mut [(UserId, i64)],
) -> ActionResult<()> {
    let others: Vec<UserId> = rows
        .iter()
        .map(|(user, _)| *user)
        .filter(|user| *user != sender)
        .collect();
    if others.is_empty() {
        return Ok(());
    }
    let words = crate::realm_cache::alert_words_of(conn, others)?;
    flag_alerted_by(content, sender, rows, &words);
    Ok(())
}

/// [`flag_alerted`] with the recipients' words already read (others' words are ignored).
fn flag_alerted_by(
    content: &str,
    sender: UserId,
    rows: &mut [(UserId, i64)],
    words: &[(UserId, String)],
) {
    if words.is_empty() {
        return;
    }
    let alerted = people_alerted(content, words, sender);
    for (user, bits) in rows.iter_mut() {
        if alerted.contains(user) {
            *bits |= flags::HAS_ALERT_WORD;
        }
    }
}

/// After a content edit: sets `has_alert_word` on exactly the recipients (never the sender)
/// with a word in the new content.
pub(crate) fn reflag_after_edit(
    conn: &mut DbConn,
    message: MessageId,
    sender: UserId,
    content: &str,
) -> ActionResult<()> {
    let recipients: Vec<UserId> = parley_storage::messages::recipients_of(conn, message)?
        .into_iter()
        .filter(|user| *user != sender)
        .collect();
    let words = crate::realm_cache::alert_words_of(conn, recipients)?;
    let alerted: Vec<UserId> = people_alerted(content, &words, sender)
        .into_iter()
        .collect();
    alert_words::set_alerted(conn, message, &alerted)?;
    Ok(())
}

/// The snapshot's `alert_words`.
pub(crate) fn snapshot(conn: &mut DbConn, user: UserId) -> ActionResult<Vec<String>> {
    Ok(alert_words::of_user(conn, user)?)
}

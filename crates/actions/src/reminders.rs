//! Reminders (`/reminders`): a person asks to be reminded of a message at a time; the
//! notification bot then sends them a direct message quoting it. Stored and delivered with the
//! scheduled messages (`scheduled_messages.rs`, `scheduler.rs`).

use crate::access::{accessible_message, invalid_message};
use crate::context::Context;
use crate::error::ActionResult;
use crate::messages_send::{Destination, SendMessage};
use crate::notices::{notification_bot, silent_mention};
use crate::notify::scheduled::{added, removed};
use crate::policy;
use crate::present::scheduled::reminder;
use crate::scheduled_messages::{probe, to_store, SCHEDULER_CLIENT};
use crate::time::now;
use parley_domain::message::MessageKind;
use parley_domain::narrow::UserOperand;
use parley_domain::scheduled::{check_delivery_time, check_note};
use parley_domain::user::User;
use parley_domain::{ChannelId, MessageId, RequestError, UserId};
use parley_storage::scheduled_messages as stored;
use parley_storage::{channels, messages::MessageRow, users, DbConn};
use parley_wire::scheduled::Reminder;

fn not_found() -> RequestError {
    RequestError::bad_request("Reminder does not exist").with_status(404)
}

/// A fence of backticks longer than any run of backticks in `content`, so the quote holds.
fn fence_for(content: &str) -> String {
    let longest = content.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// The reminder's text, as the reference words it: what it is about, the note, and the
/// message quoted with a link to it.
fn reminder_content(
    conn: &mut DbConn,
    realm_url: &str,
    message: &MessageRow,
    note: Option<&str>,
) -> ActionResult<String> {
    let (about, near) = match message.channel_id {
        Some(channel) => {
            let name = channels::by_id(conn, ChannelId(channel))?
                .map(|c| c.name)
                .unwrap_or_default();
            (
                format!("#**{name}>{}@{}**", message.topic, message.id),
                format!(
                    "{realm_url}/#narrow/channel/{channel}/topic/{}/near/{}",
                    message.topic.replace(' ', "."),
                    message.id
                ),
            )
        }
        None => (
            "the following direct message".to_owned(),
            format!(
                "{realm_url}/#narrow/dm/{}/near/{}",
                message.dm_key.clone().unwrap_or_default(),
                message.id
            ),
        ),
    };
    let mut content = match note {
        Some(note) => format!("You requested a reminder for {about}. Note:\n > {note}"),
        None => format!("You requested a reminder for {about}."),
    };
    let sender = users::by_id(conn, UserId(message.sender_id))?;
    let said = sender.map(|s| silent_mention(&s)).unwrap_or_default();
    let fence = fence_for(&message.content);
    content.push_str(&format!(
        "\n\n{said} [said]({near}):\n{fence}quote\n{}\n{fence}",
        message.content
    ));
    Ok(content)
}

/// `POST /reminders`: a reminder of a message the caller can read, at a future time; returns
/// its ID.
pub async fn do_create_reminder(
    ctx: &Context,
    user: User,
    message_id: MessageId,
    at: i64,
    note: Option<String>,
) -> ActionResult<i64> {
    check_delivery_time(at, now())?;
    let note = check_note(note.as_deref())?;
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        let message = accessible_message(conn, &policy, &user, message_id)?
            .ok_or_else(invalid_message)?
            .row;
        let content = reminder_content(conn, &ctx2.realm.url, &message, note.as_deref())?;
        let request = SendMessage {
            kind: MessageKind::Direct,
            to: Destination::Users(vec![UserOperand::Id(user.id.0)]),
            topic: None,
            content: content.clone(),
            read_by_sender: None,
            client: SCHEDULER_CLIENT.to_owned(),
            local_echo: None,
        };
        let bot = notification_bot(conn)?;
        let probed = probe(&ctx2, conn, &bot, &request)?;
        let mut new = to_store(&user, probed, content, at, None);
        new.recipient_ids = serde_json::Value::from(vec![user.id.0]).to_string();
        new.reminder_target_message_id = Some(message.id);
        let row = stored::insert(conn, &new, now())?;
        events.push(added(&row));
        Ok(row.id)
    })
    .await
}

/// `GET /reminders`: the caller's unsent reminders, by delivery time.
pub async fn get_reminders(ctx: &Context, user: User) -> ActionResult<Vec<Reminder>> {
    ctx.run(move |conn| snapshot(conn, &user)).await
}

/// `DELETE /reminders/{id}`: cancels an unsent reminder.
pub async fn do_delete_reminder(ctx: &Context, user: User, id: i64) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        let row = stored::get(conn, user.id, id, true)?.ok_or_else(not_found)?;
        stored::delete(conn, row.id)?;
        events.push(removed(&row));
        Ok(())
    })
    .await
}

/// The snapshot's `reminders`.
pub(crate) fn snapshot(conn: &mut DbConn, user: &User) -> ActionResult<Vec<Reminder>> {
    Ok(stored::of_user(conn, user.id, true)?
        .iter()
        .map(reminder)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::fence_for;

    #[test]
    fn the_quote_fence_outlasts_backticks_in_the_message() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("```rust\nx\n```"), "````");
        assert_eq!(fence_for("a ````` b"), "``````");
    }
}

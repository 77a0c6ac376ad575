//! Scheduled messages (`/scheduled_messages`): messages a person asks to be sent later. Each is
//! checked when scheduled exactly as `POST /messages` would check it (the send runs in a
//! savepoint that is rolled back), kept until the scheduler sends it (`scheduler.rs`), and
//! checked again then, as the reference does.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::messages_send::{send_in, Destination, SendMessage};
use crate::notify::scheduled::{added, removed, updated};
use crate::present::scheduled::{recipient_ids, scheduled_message};
use crate::publish::Events;
use crate::time::now;
use parley_domain::message::{dm_participants, normalize_content, MessageKind};
use parley_domain::narrow::UserOperand;
use parley_domain::scheduled::check_delivery_time;
use parley_domain::user::User;
use parley_domain::{ChannelId, RequestError};
use parley_storage::savepoint::rolled_back;
use parley_storage::scheduled_messages::{self as stored, NewScheduled, ScheduledMessage};
use parley_storage::{messages, DbConn};
use parley_wire::scheduled::ScheduledMessage as WireScheduled;

/// The client name that scheduled messages and reminders are sent with.
pub(crate) const SCHEDULER_CLIENT: &str = "Internal";

/// A message to send later.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Channel or direct.
    pub kind: MessageKind,
    /// Recipient.
    pub to: Destination,
    /// Topic, for channel messages.
    pub topic: Option<String>,
    /// Markdown.
    pub content: String,
    /// When to send it, Unix seconds.
    pub scheduled_delivery_timestamp: i64,
    /// `read_by_sender` of the send.
    pub read_by_sender: Option<bool>,
}

/// Changes to a scheduled message; what is `None` stays as it is.
#[derive(Debug, Clone, Default)]
pub struct EditSchedule {
    /// New kind (needs `to`).
    pub kind: Option<MessageKind>,
    /// New recipient.
    pub to: Option<Destination>,
    /// New topic.
    pub topic: Option<String>,
    /// New content.
    pub content: Option<String>,
    /// New delivery time.
    pub scheduled_delivery_timestamp: Option<i64>,
}

fn not_found() -> RequestError {
    RequestError::bad_request("Scheduled message does not exist").with_status(404)
}

/// What a send stores, read from a dry run of it.
pub(crate) struct Probed {
    channel_id: Option<i64>,
    recipient_ids: Vec<i64>,
    topic: String,
    rendered: String,
}

/// Checks `request` exactly as sending it now would, and reads what it resolves to (channel,
/// recipients, topic, HTML), keeping nothing: the send runs in a savepoint that is rolled back.
pub(crate) fn probe(
    ctx: &Context,
    conn: &mut DbConn,
    sender: &User,
    request: &SendMessage,
) -> ActionResult<Probed> {
    let content = normalize_content(&request.content)?;
    rolled_back(conn, |conn| {
        let mut scratch = Events::default();
        let sent = send_in(ctx, conn, &mut scratch, sender, request, &content)?;
        let row = messages::by_id(conn, sent.id)?
            .ok_or_else(|| ActionError::Internal("the probed message vanished".into()))?;
        let recipient_ids = match &row.dm_key {
            Some(key) => {
                let others: Vec<i64> = dm_participants(key)
                    .into_iter()
                    .filter(|u| *u != sender.id)
                    .map(|u| u.0)
                    .collect();
                if others.is_empty() {
                    vec![sender.id.0]
                } else {
                    others
                }
            }
            None => Vec::new(),
        };
        Ok(Probed {
            channel_id: row.channel_id,
            recipient_ids,
            topic: row.topic,
            rendered: row.rendered_content,
        })
    })
}

/// The row a probed send is stored as.
pub(crate) fn to_store(
    owner: &User,
    probed: Probed,
    content: String,
    scheduled_at: i64,
    read_by_sender: Option<bool>,
) -> NewScheduled {
    let kind = match probed.channel_id {
        Some(_) => "stream",
        None => "private",
    };
    NewScheduled {
        sender_id: owner.id,
        kind: kind.to_owned(),
        channel_id: probed.channel_id,
        recipient_ids: serde_json::Value::from(probed.recipient_ids).to_string(),
        topic: probed.topic,
        content,
        rendered_content: probed.rendered,
        scheduled_at,
        read_by_sender,
        reminder_target_message_id: None,
    }
}

/// The send a stored scheduled message or reminder makes.
pub(crate) fn stored_request(row: &ScheduledMessage) -> SendMessage {
    let (kind, to) = match row.channel_id {
        Some(channel) => (
            MessageKind::Channel,
            Destination::ChannelId(ChannelId(channel)),
        ),
        None => (
            MessageKind::Direct,
            Destination::Users(
                recipient_ids(row)
                    .into_iter()
                    .map(UserOperand::Id)
                    .collect(),
            ),
        ),
    };
    SendMessage {
        kind,
        to,
        topic: Some(row.topic.clone()),
        content: row.content.clone(),
        read_by_sender: row.read_by_sender,
        client: SCHEDULER_CLIENT.to_owned(),
        local_echo: None,
    }
}

fn send_request(schedule: &Schedule) -> SendMessage {
    SendMessage {
        kind: schedule.kind,
        to: schedule.to.clone(),
        topic: schedule.topic.clone(),
        content: schedule.content.clone(),
        read_by_sender: schedule.read_by_sender,
        client: SCHEDULER_CLIENT.to_owned(),
        local_echo: None,
    }
}

/// `GET /scheduled_messages`: the caller's unsent scheduled messages, by delivery time.
pub async fn get_scheduled_messages(ctx: &Context, user: User) -> ActionResult<Vec<WireScheduled>> {
    ctx.run(move |conn| snapshot(conn, &user)).await
}

/// `POST /scheduled_messages`: checks the message as a send would and keeps it; returns its ID.
pub async fn do_schedule_message(
    ctx: &Context,
    user: User,
    schedule: Schedule,
) -> ActionResult<i64> {
    check_delivery_time(schedule.scheduled_delivery_timestamp, now())?;
    let content = normalize_content(&schedule.content)?;
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        let probed = probe(&ctx2, conn, &user, &send_request(&schedule))?;
        let new = to_store(
            &user,
            probed,
            content,
            schedule.scheduled_delivery_timestamp,
            schedule.read_by_sender,
        );
        let row = stored::insert(conn, &new, now())?;
        events.push(added(&row));
        Ok(row.id)
    })
    .await
}

/// The send an edit makes: the stored one with the changes applied.
fn edited_request(
    row: &ScheduledMessage,
    edit: &EditSchedule,
) -> Result<SendMessage, RequestError> {
    let mut request = stored_request(row);
    match (edit.kind, &edit.to) {
        (Some(_), None) => {
            return Err(RequestError::bad_request(
                "Scheduled message recipient must be specified when changing its type.",
            ))
        }
        (kind, Some(to)) => {
            request.kind = kind.unwrap_or(request.kind);
            request.to = to.clone();
        }
        (None, None) => {}
    }
    if let Some(topic) = &edit.topic {
        request.topic = Some(topic.clone());
    }
    if let Some(content) = &edit.content {
        request.content = content.clone();
    }
    Ok(request)
}

/// `PATCH /scheduled_messages/{id}`: changes what an unsent scheduled message sends or when,
/// checked again as a send; a message that failed is tried again at its time.
pub async fn do_edit_scheduled_message(
    ctx: &Context,
    user: User,
    id: i64,
    edit: EditSchedule,
) -> ActionResult<()> {
    if let Some(at) = edit.scheduled_delivery_timestamp {
        check_delivery_time(at, now())?;
    }
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        let row = stored::get(conn, user.id, id, false)?.ok_or_else(not_found)?;
        let request = edited_request(&row, &edit)?;
        let content = normalize_content(&request.content)?;
        let probed = probe(&ctx2, conn, &user, &request)?;
        let at = edit
            .scheduled_delivery_timestamp
            .unwrap_or(row.scheduled_at);
        let new = to_store(&user, probed, content, at, row.read_by_sender);
        stored::update(conn, id, &new)?;
        let row = stored::get(conn, user.id, id, false)?.ok_or_else(not_found)?;
        events.push(updated(&row));
        Ok(())
    })
    .await
}

/// `DELETE /scheduled_messages/{id}`: cancels an unsent scheduled message.
pub async fn do_delete_scheduled_message(ctx: &Context, user: User, id: i64) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        let row = stored::get(conn, user.id, id, false)?.ok_or_else(not_found)?;
        stored::delete(conn, row.id)?;
        events.push(removed(&row));
        Ok(())
    })
    .await
}

/// The snapshot's `scheduled_messages`.
pub(crate) fn snapshot(conn: &mut DbConn, user: &User) -> ActionResult<Vec<WireScheduled>> {
    Ok(stored::of_user(conn, user.id, false)?
        .iter()
        .map(scheduled_message)
        .collect())
}

//! Scheduled messages and reminders: messages sent later by the server's scheduler.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Params};
use crate::routes::messages::destination;
use actix_web::web;
use parley_actions::messages_send::Destination;
use parley_actions::scheduled_messages::{self, EditSchedule, Schedule};
use parley_actions::{reminders, Context};
use parley_domain::message::MessageKind;
use parley_domain::{MessageId, RequestError};

params! {
    /// `GET /scheduled_messages`, `GET /reminders` and the deletes.
    pub struct NoParams {}
}

params! {
    /// `POST /scheduled_messages`.
    pub struct ScheduleParams {
        r#type: String,
        to: String,
        content: String,
        topic: Option<String>,
        scheduled_delivery_timestamp: i64,
        read_by_sender: Option<bool>,
    }
}

params! {
    /// `PATCH /scheduled_messages/{scheduled_message_id}`.
    pub struct EditParams {
        r#type: Option<String>,
        to: Option<String>,
        content: Option<String>,
        topic: Option<String>,
        scheduled_delivery_timestamp: Option<i64>,
    }
}

params! {
    /// `POST /reminders`.
    pub struct ReminderParams {
        message_id: i64,
        scheduled_delivery_timestamp: i64,
        note: Option<String>,
    }
}

/// GET /scheduled_messages — the caller's unsent scheduled messages.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let list = scheduled_messages::get_scheduled_messages(&ctx, me).await?;
    Ok(Success::empty().with("scheduled_messages", list))
}

/// A scheduled message names its channel: an empty list is refused as the send path once
/// refused it (only sending now falls back to a bot's default channel).
fn scheduled_destination(kind: MessageKind, raw: &str) -> Result<Destination, RequestError> {
    match destination(kind, Some(raw))? {
        Destination::SenderDefault => Err(RequestError::invalid_param(
            "to",
            "Expected exactly one channel",
        )),
        other => Ok(other),
    }
}

/// POST /scheduled_messages — schedule a message; answers its ID.
pub async fn create(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<ScheduleParams>,
) -> ApiResult<Success> {
    let kind = MessageKind::parse(&p.r#type)?;
    let schedule = Schedule {
        kind,
        to: scheduled_destination(kind, &p.to)?,
        topic: p.topic,
        content: p.content,
        scheduled_delivery_timestamp: p.scheduled_delivery_timestamp,
        read_by_sender: p.read_by_sender,
    };
    let id = scheduled_messages::do_schedule_message(&ctx, me, schedule).await?;
    Ok(Success::empty().with("scheduled_message_id", id))
}

/// PATCH /scheduled_messages/{scheduled_message_id} — change an unsent scheduled message.
pub async fn edit(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<EditParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("scheduled_message_id", &path)?;
    let kind = p.r#type.as_deref().map(MessageKind::parse).transpose()?;
    let to = match &p.to {
        // Without a new type, the recipient is read as the kind the message has; a channel ID
        // parses the same for both, a list only as users.
        Some(raw) => Some(scheduled_destination(kind.unwrap_or(guess_kind(raw)), raw)?),
        None => None,
    };
    let edit = EditSchedule {
        kind,
        to,
        topic: p.topic,
        content: p.content,
        scheduled_delivery_timestamp: p.scheduled_delivery_timestamp,
    };
    scheduled_messages::do_edit_scheduled_message(&ctx, me, id, edit).await?;
    Ok(Success::empty())
}

/// The kind a bare `to` names: a JSON list is users, anything else a channel.
fn guess_kind(raw: &str) -> MessageKind {
    match raw.trim_start().starts_with('[') {
        true => MessageKind::Direct,
        false => MessageKind::Channel,
    }
}

/// DELETE /scheduled_messages/{scheduled_message_id} — cancel an unsent scheduled message.
pub async fn delete(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("scheduled_message_id", &path)?;
    scheduled_messages::do_delete_scheduled_message(&ctx, me, id).await?;
    Ok(Success::empty())
}

/// GET /reminders — the caller's unsent reminders.
pub async fn list_reminders(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let list = reminders::get_reminders(&ctx, me).await?;
    Ok(Success::empty().with("reminders", list))
}

/// POST /reminders — be reminded of a message; answers the reminder's ID.
pub async fn create_reminder(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<ReminderParams>,
) -> ApiResult<Success> {
    let id = reminders::do_create_reminder(
        &ctx,
        me,
        MessageId(p.message_id),
        p.scheduled_delivery_timestamp,
        p.note,
    )
    .await?;
    Ok(Success::empty().with("reminder_id", id))
}

/// DELETE /reminders/{reminder_id} — cancel an unsent reminder.
pub async fn delete_reminder(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("reminder_id", &path)?;
    reminders::do_delete_reminder(&ctx, me, id).await?;
    Ok(Success::empty())
}

//! Typing notifications: who is composing a message (or editing one), told to the people who
//! would receive it. Nothing is stored; the events are published at once. Only users whose
//! `receives_typing_notifications` is on get them, and typing in a channel reaches only clients
//! that declared `stream_typing_notifications`.

use crate::access::{accessible_message, invalid_message};
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::{body, to_users};
use crate::policy;
use crate::time::now;
use crate::user_settings::{flag, Settings};
use parley_domain::message::{dm_participants, normalize_topic, EMPTY_TOPIC_DISPLAY_NAME};
use parley_domain::user::User;
use parley_domain::{ChannelId, MessageId, RequestError, UserId};
use parley_events::{Body, Capability, Event};
use parley_storage::{channels, subscriptions, users, DbConn};
use parley_wire as wire;
use parley_wire::event::{EditRecipient, TypingEditEvent, TypingEvent};
use parley_wire::user::PersonRef;

/// Channels with more subscribers than this get no typing notifications (they would cost much
/// and say little).
pub const MAX_CHANNEL_SIZE_FOR_TYPING_NOTIFICATIONS: usize = 100;

/// Whether the user started or stopped typing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypingOp {
    /// Started (or is still) typing.
    Start,
    /// Stopped.
    Stop,
}

impl TypingOp {
    /// Parses the API's `op`.
    pub fn parse(raw: &str) -> Result<TypingOp, RequestError> {
        match raw {
            "start" => Ok(TypingOp::Start),
            "stop" => Ok(TypingOp::Stop),
            _ => Err(RequestError::invalid_param("op", "Invalid op")),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            TypingOp::Start => "start",
            TypingOp::Stop => "stop",
        }
    }
}

/// The parameters of `POST /typing`.
#[derive(Debug, Clone)]
pub struct TypingRequest {
    /// `start` or `stop`.
    pub op: String,
    /// `direct` (default; `private` is its old name) or `stream` / `channel`.
    pub kind: Option<String>,
    /// Recipients' IDs, for direct messages.
    pub to: Option<Vec<UserId>>,
    /// The channel, for channel messages.
    pub stream_id: Option<ChannelId>,
    /// The topic, for channel messages.
    pub topic: Option<String>,
}

fn user_ref(user: &User, host: &str) -> PersonRef {
    PersonRef {
        user_id: user.id,
        email: user.api_email(host),
        full_name: None,
    }
}

/// Of these users, those who are active and want typing notifications.
fn receivers<'a>(
    conn: &mut DbConn,
    people: impl IntoIterator<Item = &'a User> + Clone,
) -> ActionResult<Vec<UserId>> {
    let settings = Settings::load(conn, people.clone())?;
    let mut out: Vec<UserId> = Vec::new();
    for user in people {
        if user.is_active
            && settings.flag(user.id, "receives_typing_notifications")
            && !out.contains(&user.id)
        {
            out.push(user.id);
        }
    }
    Ok(out)
}

/// The active subscribers of a channel who want typing notifications; none when the channel is
/// too large.
fn channel_receivers(conn: &mut DbConn, channel: ChannelId) -> ActionResult<Vec<UserId>> {
    let subscribers = subscriptions::active_recipients(conn, channel)?;
    if subscribers.len() > MAX_CHANNEL_SIZE_FOR_TYPING_NOTIFICATIONS {
        return Ok(Vec::new());
    }
    let people = users::by_ids(conn, &subscribers)?;
    receivers(conn, &people)
}

fn disabled(what: &str) -> ActionError {
    RequestError::bad_request(format!(
        "User has disabled typing notifications for {what} messages"
    ))
    .into()
}

/// A channel typing event's body: clients without `empty_topic_name` see the empty topic under
/// its display name.
fn channel_typing_body(event: TypingEvent) -> Body {
    if event.topic.as_deref() != Some("") {
        return body(wire::Event::Typing(event));
    }
    let shown = TypingEvent {
        topic: Some(EMPTY_TOPIC_DISPLAY_NAME.into()),
        ..event.clone()
    };
    Body::by_capability(
        Capability::EmptyTopicName,
        body(wire::Event::Typing(event)),
        Some(body(wire::Event::Typing(shown))),
    )
}

/// `typing_edit_message` to `audience`.
fn edit_typing(
    audience: Vec<UserId>,
    op: TypingOp,
    user: &User,
    message_id: MessageId,
    recipient: EditRecipient,
) -> Event {
    to_users(
        audience,
        wire::Event::TypingEditMessage(TypingEditEvent {
            op: op.as_str(),
            sender_id: user.id,
            message_id,
            recipient,
        }),
    )
}

/// Publishes events that change no stored state, under the same gate as committed writes so
/// that a register never sees them half-way.
async fn publish(ctx: &Context, events: Vec<Event>) {
    ctx.events.publish_transient(&ctx.db, events).await;
}

/// `POST /typing`: tells a direct message's recipients (the sender included) or a channel's
/// subscribers that the user started or stopped typing.
pub async fn send_typing(ctx: &Context, sender: User, request: TypingRequest) -> ActionResult<()> {
    let op = TypingOp::parse(&request.op)?;
    let channel_typing = match request.kind.as_deref().unwrap_or("direct") {
        "direct" | "private" => false,
        "stream" | "channel" => true,
        _ => return Err(RequestError::invalid_param("type", "Invalid type").into()),
    };
    let host = ctx.realm.host.clone();
    let event = if channel_typing {
        let channel_id = request.stream_id.ok_or_else(|| {
            RequestError::bad_request("Missing 'stream_id' argument").with("var_name", "stream_id")
        })?;
        let raw_topic = request
            .topic
            .ok_or_else(|| RequestError::bad_request("Missing topic").with("var_name", "topic"))?;
        let topic = normalize_topic(&raw_topic, "topic")?;
        ctx.run(move |conn| {
            if !flag(conn, &sender, "send_stream_typing_notifications")? {
                return Err(disabled("channel"));
            }
            let policy = policy::load(conn)?;
            let (channel, subscribed) =
                crate::access::access_channel_by_id(conn, &policy, &sender, channel_id)?;
            crate::messages_send::check_may_post(&policy, &sender, &channel, subscribed)?;
            let audience = channel_receivers(conn, channel.id)?;
            let event = TypingEvent {
                op: op.as_str(),
                message_type: "stream",
                sender: user_ref(&sender, &host),
                recipients: None,
                stream_id: Some(channel.id),
                topic: Some(topic),
            };
            Ok::<_, ActionError>(Event::to_users(
                audience,
                Body::by_capability(
                    Capability::StreamTypingNotifications,
                    channel_typing_body(event),
                    None,
                ),
            ))
        })
        .await?
    } else {
        let mut ids = request.to.ok_or_else(|| {
            RequestError::bad_request("Missing 'to' argument").with("var_name", "to")
        })?;
        if ids.is_empty() {
            return Err(RequestError::bad_request("Empty 'to' list").into());
        }
        if !ids.contains(&sender.id) {
            ids.push(sender.id);
        }
        let mut seen = Vec::with_capacity(ids.len());
        ids.retain(|id| {
            let new = !seen.contains(id);
            seen.push(*id);
            new
        });
        ctx.run(move |conn| {
            if !flag(conn, &sender, "send_private_typing_notifications")? {
                return Err(disabled("direct"));
            }
            let found = users::by_ids(conn, &ids)?;
            let mut recipients: Vec<&User> = Vec::with_capacity(ids.len());
            for id in &ids {
                // Every ID must name a user: a partial list would point at another
                // conversation. Deactivated users stay in the list (it identifies the
                // conversation) but are not notified.
                let user = found.iter().find(|u| u.id == *id).ok_or_else(|| {
                    RequestError::bad_request(format!("Invalid user ID {}", id.0))
                })?;
                recipients.push(user);
            }
            let event = wire::Event::Typing(TypingEvent {
                op: op.as_str(),
                message_type: "direct",
                sender: user_ref(&sender, &host),
                recipients: Some(recipients.iter().map(|u| user_ref(u, &host)).collect()),
                stream_id: None,
                topic: None,
            });
            let audience = receivers(conn, recipients.iter().copied())?;
            Ok::<_, ActionError>(to_users(audience, event))
        })
        .await?
    };
    publish(ctx, vec![event]).await;
    Ok(())
}

/// `POST /messages/{message_id}/typing`: tells the people who see a message that its sender is
/// editing it. Only someone who could edit the message now may say so.
pub async fn send_edit_typing(
    ctx: &Context,
    user: User,
    message_id: MessageId,
    op: String,
) -> ActionResult<()> {
    let op = TypingOp::parse(&op)?;
    let event = ctx
        .run(move |conn| {
            let policy = policy::load(conn)?;
            let message = accessible_message(conn, &policy, &user, message_id)?
                .ok_or_else(invalid_message)?;
            let row = message.row;
            if let Some(channel_id) = row.channel_id {
                let channel =
                    channels::by_id(conn, ChannelId(channel_id))?.ok_or_else(invalid_message)?;
                if channel.is_archived {
                    return Err(invalid_message());
                }
            }
            crate::messages_edit::check_can_edit_content(&policy, &user, &row, now())?;
            let event = match row.channel_id {
                Some(channel_id) => {
                    if !flag(conn, &user, "send_stream_typing_notifications")? {
                        return Err(disabled("channel"));
                    }
                    let audience = channel_receivers(conn, ChannelId(channel_id))?;
                    let recipient = EditRecipient::Channel {
                        channel_id: ChannelId(channel_id),
                        topic: row.topic.clone(),
                    };
                    edit_typing(audience, op, &user, message_id, recipient)
                }
                None => {
                    if !flag(conn, &user, "send_private_typing_notifications")? {
                        return Err(disabled("direct"));
                    }
                    let mut participants = row
                        .dm_key
                        .as_deref()
                        .map(dm_participants)
                        .unwrap_or_default();
                    if participants.is_empty() {
                        participants.push(user.id);
                    }
                    let people = users::by_ids(conn, &participants)?;
                    let audience = receivers(conn, &people)?;
                    let recipient = EditRecipient::Direct {
                        user_ids: audience.clone(),
                    };
                    edit_typing(audience, op, &user, message_id, recipient)
                }
            };
            Ok::<_, ActionError>(event)
        })
        .await?;
    publish(ctx, vec![event]).await;
    Ok(())
}

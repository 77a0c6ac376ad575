//! Events about messages: new messages, edits and moves, deletions.

use super::emit::{body, to_users};
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::present::messages::{new_message as present_new, Presentation};
use parley_domain::message::flags;
use parley_domain::user::{gravatar_url, EmailAddressVisibility, User};
use parley_domain::{MessageId, UserId};
use parley_events::{Body, Capability, Event, MessagePayload, MessageRecipient};
use parley_storage::messages::{self, MessageRow, ReadMessage};
use parley_storage::DbConn;
use parley_wire as wire;
use parley_wire::event::{DeleteMessage, FlagsEvent, ReactionEvent, UpdateMessage};
use parley_wire::user::{avatar_url, PersonRef};
use serde_json::{Map, Value};

/// Who receives a new message and with which flags.
pub struct MessageAudience<'a> {
    /// Recipients and their flag bits, as stored.
    pub rows: &'a [(UserId, i64)],
    /// The channel's name, for channel messages.
    pub channel_name: Option<String>,
    /// Whether `all_public_streams` queues get it.
    pub public_channel: bool,
    /// `(queue_id, local_id)` of the sending client.
    pub local_echo: Option<(String, String)>,
}

/// The `message` event for a newly sent message, read back by ID.
pub fn message_sent(
    ctx: &Context,
    conn: &mut DbConn,
    sender: &User,
    id: MessageId,
    audience: MessageAudience<'_>,
) -> ActionResult<Event> {
    let row = messages::by_id(conn, id)?
        .ok_or_else(|| ActionError::Internal(format!("message {id} vanished")))?;
    new_message_sent(ctx, conn, sender, row, &[], audience)
}

/// The `message` event for a message just written as `row`, built from what the send holds:
/// the sender and, for a direct message, its `participants` (else read by ID), with no
/// reactions yet.
pub fn new_message_sent(
    ctx: &Context,
    conn: &mut DbConn,
    sender: &User,
    row: MessageRow,
    participants: &[User],
    audience: MessageAudience<'_>,
) -> ActionResult<Event> {
    let content_markdown = row.content.clone();
    let content_html = row.rendered_content.clone();
    let topic = row.topic.clone();
    let options = Presentation {
        apply_markdown: true,
        client_gravatar: false,
        allow_empty_topic_name: true,
    };
    let read = ReadMessage {
        row,
        flags: Some(0),
    };
    let record = present_new(
        ctx,
        conn,
        sender,
        read,
        participants,
        audience.channel_name.as_deref(),
        options,
    )?;
    let Ok(Value::Object(mut message)) = serde_json::to_value(record) else {
        return Err(ActionError::Internal("message presentation failed".into()));
    };
    // The engine adds these per client.
    for key in ["content", "content_type", "avatar_url", "flags"] {
        message.remove(key);
    }
    // Clients compute Gravatar URLs themselves only when the address is visible to everyone.
    let gravatar = gravatar_url(&sender.delivery_email, sender.avatar_version);
    let everyone_sees_address = sender.email_address_visibility == EmailAddressVisibility::Everyone;
    let avatar_url = avatar_url(sender, &ctx.realm.url, everyone_sees_address);
    let mut recipients: Vec<MessageRecipient> = audience
        .rows
        .iter()
        .map(|(user, bits)| MessageRecipient {
            user_id: *user,
            flags: flags::names(*bits).into_iter().map(str::to_owned).collect(),
        })
        .collect();
    if !recipients.iter().any(|r| r.user_id == sender.id) {
        // A sender outside the channel still sees their own message in their other clients.
        recipients.push(MessageRecipient {
            user_id: sender.id,
            flags: vec!["read".to_owned()],
        });
    }
    let payload = MessagePayload {
        message,
        content_markdown,
        content_html,
        avatar_url,
        gravatar_url: gravatar,
        channel_name: audience.channel_name,
        topic,
        sender_email: sender.api_email(&ctx.realm.host),
        public_channel: audience.public_channel,
        local_echo: audience.local_echo,
    };
    Ok(Event::message(recipients, payload))
}

/// Everyone who may see a message: its recipients, and for channels whose history subscribers
/// can read, every subscriber.
pub fn message_viewers(conn: &mut DbConn, row: &messages::MessageRow) -> ActionResult<Vec<UserId>> {
    let mut users = messages::recipients_of(conn, MessageId(row.id))?;
    if let Some(channel) = row.channel_id {
        let channel = parley_storage::channels::by_id(conn, parley_domain::ChannelId(channel))?;
        if let Some(channel) = channel.filter(|c| c.is_public() || c.history_public_to_subscribers)
        {
            users.extend(parley_storage::subscriptions::active_recipients(
                conn, channel.id,
            )?);
        }
    }
    users.sort_unstable();
    users.dedup();
    Ok(users)
}

/// `update_message` events: the same body for everyone, with each user's flags on the edited
/// message (one event per distinct flag set, so delivery stays a shared copy).
pub fn message_updated(
    conn: &mut DbConn,
    body: UpdateMessage,
    message: MessageId,
    audience: &[UserId],
) -> ActionResult<Vec<Event>> {
    let own: std::collections::HashMap<UserId, i64> = messages::recipient_flags(conn, message)?
        .into_iter()
        .collect();
    let mut groups: std::collections::BTreeMap<Option<i64>, Vec<UserId>> = Default::default();
    for user in audience {
        groups
            .entry(own.get(user).copied())
            .or_default()
            .push(*user);
    }
    Ok(groups
        .into_iter()
        .map(|(bits, users)| {
            let flags = bits.map(flags::names).unwrap_or_default();
            let event = UpdateMessage {
                flags,
                ..body.clone()
            };
            to_users(users, wire::Event::UpdateMessage(Box::new(event)))
        })
        .collect())
}

/// Where deleted messages were, for `delete_message` events.
pub struct DeletedFrom {
    /// The channel, for channel messages.
    pub channel: Option<parley_domain::ChannelId>,
    /// The topic, for channel messages.
    pub topic: String,
}

/// `delete_message`: the bulk form for clients with `bulk_message_deletion`, one event per
/// message for the others.
pub fn messages_deleted(ids: &[MessageId], from: &DeletedFrom, audience: Vec<UserId>) -> Event {
    let common = DeleteMessage {
        message_type: if from.channel.is_some() {
            "stream"
        } else {
            "private"
        },
        message_ids: None,
        message_id: None,
        stream_id: from.channel,
        topic: from.channel.map(|_| from.topic.clone()),
    };
    let bulk = DeleteMessage {
        message_ids: Some(ids.to_vec()),
        ..common.clone()
    };
    let singles: Vec<Body> = ids
        .iter()
        .map(|id| {
            body(wire::Event::DeleteMessage(DeleteMessage {
                message_id: Some(*id),
                ..common.clone()
            }))
        })
        .collect();
    Event::to_users(
        audience,
        Body::by_capability(
            Capability::BulkMessageDeletion,
            body(wire::Event::DeleteMessage(bulk)),
            Some(Body::Many(singles)),
        ),
    )
}

/// `reaction` `add` or `remove`, to everyone who may see the message.
pub fn reaction_changed(
    ctx: &Context,
    add: bool,
    user: &User,
    reaction: &parley_storage::reactions::Reaction,
    audience: Vec<UserId>,
) -> Event {
    to_users(
        audience,
        wire::Event::Reaction(ReactionEvent {
            op: if add { "add" } else { "remove" },
            user_id: user.id,
            user: PersonRef {
                user_id: user.id,
                email: user.api_email(&ctx.realm.host),
                full_name: Some(user.full_name.clone()),
            },
            message_id: reaction.message_id,
            emoji_name: reaction.emoji_name.clone(),
            emoji_code: reaction.emoji_code.clone(),
            reaction_type: reaction.reaction_type.clone(),
        }),
    )
}

/// `update_message_flags` for the user who changed their flags (`message_details` when
/// messages became unread).
pub fn flags_changed(
    user: UserId,
    add: bool,
    flag: &str,
    ids: &[MessageId],
    details: Option<Map<String, Value>>,
) -> Event {
    let op = if add { "add" } else { "remove" };
    to_users(
        vec![user],
        wire::Event::UpdateMessageFlags(FlagsEvent {
            op,
            operation: op,
            flag: flag.to_owned(),
            messages: ids.to_vec(),
            all: false,
            message_details: details,
        }),
    )
}

//! Events about messages: new messages, edits and moves, deletions.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::messages_read::{present, Presentation};
use parley_domain::message::flags;
use parley_domain::user::{gravatar_url, AvatarSource, EmailAddressVisibility, User};
use parley_domain::{MessageId, UserId};
use parley_events::{Body, Capability, Event, MessagePayload, MessageRecipient};
use parley_storage::messages::{self, ReadMessage};
use parley_storage::DbConn;
use serde_json::{Map, Value};
use std::sync::Arc;

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

/// The `message` event for a newly sent message.
pub fn message_sent(
    ctx: &Context,
    conn: &mut DbConn,
    sender: &User,
    id: MessageId,
    audience: MessageAudience<'_>,
) -> ActionResult<Event> {
    let row = messages::by_id(conn, id)?
        .ok_or_else(|| ActionError::Internal(format!("message {id} vanished")))?;
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
    let mut list = present(ctx, conn, sender, &[read], options)?;
    let Some(Value::Object(mut message)) = list.pop() else {
        return Err(ActionError::Internal("message presentation failed".into()));
    };
    for key in ["content", "content_type", "avatar_url", "flags"] {
        message.remove(key);
    }
    // Clients compute Gravatar URLs themselves only when the address is visible to everyone.
    let gravatar = gravatar_url(&sender.delivery_email, sender.avatar_version);
    let avatar_url = match sender.avatar_source {
        AvatarSource::Gravatar
            if sender.email_address_visibility == EmailAddressVisibility::Everyone =>
        {
            None
        }
        AvatarSource::Gravatar => Some(gravatar.clone()),
        AvatarSource::Uploaded => Some(format!(
            "{}/user_avatars/{}.png?version={}",
            ctx.realm.url, sender.id, sender.avatar_version
        )),
    };
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
    body: Map<String, Value>,
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
            let mut body = body.clone();
            let names: Vec<&str> = bits.map(flags::names).unwrap_or_default();
            body.insert("flags".into(), names.into());
            Event::to_users(users, Body::Json(Arc::new(body)))
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
    let mut common = Map::new();
    common.insert("type".into(), "delete_message".into());
    match from.channel {
        Some(channel) => {
            common.insert("message_type".into(), "stream".into());
            common.insert("stream_id".into(), channel.0.into());
            common.insert("topic".into(), from.topic.clone().into());
        }
        None => {
            common.insert("message_type".into(), "private".into());
        }
    }
    let mut bulk = common.clone();
    bulk.insert(
        "message_ids".into(),
        ids.iter().map(|m| m.0).collect::<Vec<_>>().into(),
    );
    let singles: Vec<Body> = ids
        .iter()
        .map(|id| {
            let mut one = common.clone();
            one.insert("message_id".into(), id.0.into());
            Body::Json(Arc::new(one))
        })
        .collect();
    Event::to_users(
        audience,
        Body::by_capability(
            Capability::BulkMessageDeletion,
            Body::Json(Arc::new(bulk)),
            Some(Body::Many(singles)),
        ),
    )
}

/// `reaction` `add` or `remove`, to everyone who may see the message.
pub fn reaction_changed(
    ctx: &Context,
    op: &str,
    user: &User,
    reaction: &parley_storage::reactions::Reaction,
    audience: Vec<UserId>,
) -> Event {
    Event::json(
        audience,
        serde_json::json!({
            "type": "reaction",
            "op": op,
            "user_id": user.id,
            "user": {"user_id": user.id, "email": user.api_email(&ctx.realm.host), "full_name": user.full_name},
            "message_id": reaction.message_id,
            "emoji_name": reaction.emoji_name,
            "emoji_code": reaction.emoji_code,
            "reaction_type": reaction.reaction_type,
        }),
    )
}

/// `update_message_flags` for the user who changed their flags (`message_details` when
/// messages became unread).
pub fn flags_changed(
    user: UserId,
    op: &str,
    flag: &str,
    ids: &[MessageId],
    details: Option<Map<String, Value>>,
) -> Event {
    let mut body = serde_json::json!({
        "type": "update_message_flags",
        "op": op,
        "operation": op,
        "flag": flag,
        "messages": ids.iter().map(|m| m.0).collect::<Vec<_>>(),
        "all": false,
    });
    if let Some(details) = details {
        body["message_details"] = Value::Object(details);
    }
    Event::json(vec![user], body)
}

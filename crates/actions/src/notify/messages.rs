//! Events about messages: new messages, edits and moves, deletions.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::messages_read::{present, Presentation};
use parley_domain::message::flags;
use parley_domain::user::{gravatar_url, AvatarSource, EmailAddressVisibility, User};
use parley_domain::{MessageId, UserId};
use parley_events::{Event, MessagePayload, MessageRecipient};
use parley_storage::messages::{self, ReadMessage};
use parley_storage::DbConn;
use serde_json::Value;

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

//! What actions publish: an event's audience and a body computed once, which the engine
//! resolves per queue (capabilities at delivery, rendering at read time).

use parley_domain::UserId;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// A capability a body can branch on.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum Capability {
    /// See [`crate::ClientCapabilities::notification_settings_null`].
    NotificationSettingsNull,
    /// See [`crate::ClientCapabilities::bulk_message_deletion`].
    BulkMessageDeletion,
    /// See [`crate::ClientCapabilities::user_avatar_url_field_optional`].
    UserAvatarUrlFieldOptional,
    /// See [`crate::ClientCapabilities::stream_typing_notifications`].
    StreamTypingNotifications,
    /// See [`crate::ClientCapabilities::user_settings_object`].
    UserSettingsObject,
    /// See [`crate::ClientCapabilities::linkifier_url_template`].
    LinkifierUrlTemplate,
    /// See [`crate::ClientCapabilities::user_list_incomplete`].
    UserListIncomplete,
    /// See [`crate::ClientCapabilities::include_deactivated_groups`].
    IncludeDeactivatedGroups,
    /// See [`crate::ClientCapabilities::archived_channels`].
    ArchivedChannels,
    /// See [`crate::ClientCapabilities::empty_topic_name`].
    EmptyTopicName,
    /// See [`crate::ClientCapabilities::simplified_presence_events`].
    SimplifiedPresenceEvents,
}

/// What a queue receives: resolved per client when delivered.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Body {
    /// The same JSON object for every client (must contain "type"; the engine adds "id").
    Json(Arc<Map<String, Value>>),
    /// Clients with the capability get `with`; the others get `without` (None = nothing).
    ByCapability {
        /// The capability that decides.
        capability: Capability,
        /// For clients that declared the capability.
        with: Box<Body>,
        /// For the others; None sends them nothing.
        without: Option<Box<Body>>,
    },
    /// Several events, each queued with its own ID, in order (e.g. one delete_message per
    /// message for legacy clients).
    Many(Vec<Body>),
    /// A message event: differs per recipient (flags) and per client (markdown vs HTML,
    /// gravatar, local echo ID).
    Message(Arc<MessagePayload>),
}

impl Body {
    /// A JSON body from a `serde_json::Value`, so that actions can write `json!({...})`.
    ///
    /// A non-object is a programming error: it is logged and becomes an empty body (nothing is
    /// queued) rather than a panic in the middle of a delivery.
    pub fn json(value: Value) -> Self {
        match value {
            Value::Object(map) => Body::Json(Arc::new(map)),
            other => {
                tracing::error!(value = %other, "event body is not a JSON object; dropped");
                Body::Many(Vec::new())
            }
        }
    }

    /// `with` for clients that declared `capability`, `without` for the others.
    pub fn by_capability(capability: Capability, with: Body, without: Option<Body>) -> Self {
        Body::ByCapability {
            capability,
            with: Box::new(with),
            without: without.map(Box::new),
        }
    }
}

/// A new message as every recipient's queues will see it, minus what differs per client.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MessagePayload {
    /// The message object without `content`, `content_type` and `avatar_url` (the engine adds
    /// them per client).
    pub message: Map<String, Value>,
    /// The content for clients without `apply_markdown`.
    pub content_markdown: String,
    /// The content for clients with `apply_markdown`.
    pub content_html: String,
    /// The sender's avatar URL when it must always be sent (uploaded avatar); None when it is a
    /// gravatar URL that clients with client_gravatar compute themselves — then `gravatar_url`
    /// holds what non-client_gravatar clients get.
    pub avatar_url: Option<String>,
    /// See `avatar_url`.
    pub gravatar_url: String,
    /// For the narrow filter and all_public_streams: the channel's name (None for direct
    /// messages).
    pub channel_name: Option<String>,
    /// For the narrow filter: the topic ("" for direct messages).
    pub topic: String,
    /// For the narrow filter: the sender's email as recipients see it.
    pub sender_email: String,
    /// Whether the channel is public (web-public or public), for all_public_streams queues.
    pub public_channel: bool,
    /// Local echo: (queue_id, local_id) of the sending client, if it sent them.
    pub local_echo: Option<(String, String)>,
}

/// One recipient of a message and that recipient's flags, which differ per user.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MessageRecipient {
    /// The recipient; each of their queues gets the message.
    pub user_id: UserId,
    /// Flag names as the API spells them, e.g. ["read","mentioned"].
    pub flags: Vec<String>,
}

/// Who receives an event. Actions compute it (permissions are theirs); the engine only maps
/// users to queues.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Audience {
    /// Every queue of these users.
    Users(Vec<UserId>),
    /// A message's recipients with their flags; plus, when the message's `public_channel` is
    /// true, every queue with all_public_streams (with flags [] when its user is not a
    /// recipient, as the reference server does).
    Message(Vec<MessageRecipient>),
    /// Every queue of the realm (one deployment = one realm).
    Everyone,
}

/// One published event: computed once by an action, delivered to many queues.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Event {
    /// Who gets it.
    pub audience: Audience,
    /// What they get.
    pub body: Body,
}

impl Event {
    /// An event for every queue of `users`.
    pub fn to_users(users: Vec<UserId>, body: Body) -> Self {
        Self {
            audience: Audience::Users(users),
            body,
        }
    }

    /// Convenience for the common case: the same JSON object for every queue of `users`
    /// (`value` must be an object; see [`Body::json`]).
    pub fn json(users: Vec<UserId>, value: Value) -> Self {
        Self::to_users(users, Body::json(value))
    }

    /// An event for every queue.
    pub fn everyone(body: Body) -> Self {
        Self {
            audience: Audience::Everyone,
            body,
        }
    }

    /// A message event for its recipients (and all_public_streams queues when public).
    pub fn message(recipients: Vec<MessageRecipient>, payload: MessagePayload) -> Self {
        Self {
            audience: Audience::Message(recipients),
            body: Body::Message(Arc::new(payload)),
        }
    }
}

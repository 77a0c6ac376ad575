//! What a client asked for when it registered its queue: the options that decide which events
//! it receives and how each one is rendered for it.

use crate::event::Capability;
use parley_domain::UserId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The register `client_capabilities`: older clients cannot parse newer event shapes, so the
/// engine keeps what each queue declared and picks the matching variant of every event.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ClientCapabilities {
    /// Subscription notification settings may be `null` (inherit the user's default).
    pub notification_settings_null: bool,
    /// One `delete_message` event may carry several message IDs.
    pub bulk_message_deletion: bool,
    /// `avatar_url` may be omitted from user objects.
    pub user_avatar_url_field_optional: bool,
    /// Typing notifications in channels are understood.
    pub stream_typing_notifications: bool,
    /// The `user_settings` event replaces the legacy settings events.
    pub user_settings_object: bool,
    /// Linkifiers use RFC 6570 URL templates.
    pub linkifier_url_template: bool,
    /// The user list may omit users the client cannot access.
    pub user_list_incomplete: bool,
    /// Deactivated user groups are sent and filtered by the client.
    pub include_deactivated_groups: bool,
    /// Archived channels are sent and shown as such by the client.
    pub archived_channels: bool,
    /// The empty topic `""` is shown by the client itself.
    pub empty_topic_name: bool,
    /// Presence events use the modern, slim format.
    pub simplified_presence_events: bool,
}

impl ClientCapabilities {
    /// Whether the client declared `c`, so that a [`crate::Body::ByCapability`] can be resolved.
    pub fn has(&self, c: Capability) -> bool {
        match c {
            Capability::NotificationSettingsNull => self.notification_settings_null,
            Capability::BulkMessageDeletion => self.bulk_message_deletion,
            Capability::UserAvatarUrlFieldOptional => self.user_avatar_url_field_optional,
            Capability::StreamTypingNotifications => self.stream_typing_notifications,
            Capability::UserSettingsObject => self.user_settings_object,
            Capability::LinkifierUrlTemplate => self.linkifier_url_template,
            Capability::UserListIncomplete => self.user_list_incomplete,
            Capability::IncludeDeactivatedGroups => self.include_deactivated_groups,
            Capability::ArchivedChannels => self.archived_channels,
            Capability::EmptyTopicName => self.empty_topic_name,
            Capability::SimplifiedPresenceEvents => self.simplified_presence_events,
        }
    }
}

/// One term of the register `narrow` (only message events are filtered by it).
///
/// Every term must match for a message to be queued; names and emails compare
/// case-insensitively, as the reference server does.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum NarrowFilter {
    /// `channel:<name>`: messages in the channel of that name.
    Channel(String),
    /// `topic:<name>`: channel messages in that topic.
    Topic(String),
    /// `sender:<email>`: messages sent by that user.
    Sender(String),
    /// `is:dm`: direct messages.
    IsDm,
    /// `is:starred`: messages the recipient starred.
    IsStarred,
    /// `is:mentioned`: messages mentioning the recipient, personally or by a wildcard.
    IsMentioned,
    /// `is:unread`: messages the recipient has not read.
    IsUnread,
    /// `is:alerted`: messages containing one of the recipient's alert words.
    IsAlerted,
}

/// Everything the engine keeps about a queue's client: it is fixed at registration, dumped with
/// the queue across restarts, and consulted on every delivery and every read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueueOptions {
    /// The owner; only they may read or delete the queue.
    pub user_id: UserId,
    /// Message content as HTML (`true`) or as the Markdown source (`false`).
    pub apply_markdown: bool,
    /// The client computes gravatar URLs itself, so `avatar_url` may be `null`.
    pub client_gravatar: bool,
    /// Also receive messages of every public channel, subscribed or not (mirroring bots).
    pub all_public_streams: bool,
    /// None = all event types; Some(set) = only these `type`s (plus "heartbeat", always delivered).
    pub event_types: Option<BTreeSet<String>>,
    /// Message filter; empty means every message the user receives.
    #[serde(default)]
    pub narrow: Vec<NarrowFilter>,
    /// Which newer event shapes the client understands.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
    /// Client name (User-Agent derived) — informational.
    #[serde(default)]
    pub client_name: String,
    /// What to show instead of the empty topic "" to clients without `empty_topic_name` (realm
    /// setting, e.g. "general chat").
    #[serde(default)]
    pub empty_topic_display_name: String,
}

impl QueueOptions {
    /// Options with the reference server's register defaults for an authenticated client
    /// (`apply_markdown` false, `client_gravatar` true), so callers and tests only spell out what
    /// differs.
    pub fn new(user_id: UserId) -> Self {
        Self {
            user_id,
            apply_markdown: false,
            client_gravatar: true,
            all_public_streams: false,
            event_types: None,
            narrow: Vec::new(),
            capabilities: ClientCapabilities::default(),
            client_name: String::new(),
            empty_topic_display_name: String::new(),
        }
    }
}

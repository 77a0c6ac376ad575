//! The organization (realm) that a deployment hosts, and its organization-wide policy.

use crate::groups::{GroupGraph, GroupSetting, SystemGroup};
use std::collections::HashMap;

/// The organization's stored settings that this layer reasons about.
#[derive(Debug, Clone, PartialEq)]
pub struct Realm {
    /// Database ID; one deployment has exactly one realm.
    pub id: i64,
    /// Display name.
    pub name: String,
    /// Markdown description; the API returns it rendered.
    pub description: String,
    /// A deactivated organization refuses every request.
    pub deactivated: bool,
    /// Whether spectators (no account) may read web-public channels.
    pub enable_spectator_access: bool,
    /// Creation time, Unix seconds.
    pub date_created: i64,
}

/// The limits on message and topic size that register returns.
pub mod limits {
    /// `max_message_length`.
    pub const MAX_MESSAGE_LENGTH: usize = 10_000;
    /// `max_topic_length`.
    pub const MAX_TOPIC_LENGTH: usize = 60;
}

/// Organization-wide permissions and limits that govern channels and messages. Stored as named
/// JSON values; a value never set takes the reference server's default for a new organization.
#[derive(Debug, Clone, PartialEq)]
pub struct RealmPolicy {
    /// Who may create public channels.
    pub can_create_public_channel_group: GroupSetting,
    /// Who may create private channels.
    pub can_create_private_channel_group: GroupSetting,
    /// Who may create web-public channels.
    pub can_create_web_public_channel_group: GroupSetting,
    /// Who may add others to channels.
    pub can_add_subscribers_group: GroupSetting,
    /// Who may use wildcard mentions in large channels and topics.
    pub can_mention_many_users_group: GroupSetting,
    /// Who may move messages between channels.
    pub can_move_messages_between_channels_group: GroupSetting,
    /// Who may move messages between topics.
    pub can_move_messages_between_topics_group: GroupSetting,
    /// Who may resolve topics.
    pub can_resolve_topics_group: GroupSetting,
    /// Who may delete any message.
    pub can_delete_any_message_group: GroupSetting,
    /// Who may delete their own messages.
    pub can_delete_own_message_group: GroupSetting,
    /// Whether message content may be edited at all.
    pub allow_message_editing: bool,
    /// Seconds after sending during which content may be edited; None is unlimited.
    pub message_content_edit_limit_seconds: Option<i64>,
    /// Seconds during which messages may be moved between topics; None is unlimited.
    pub move_messages_within_stream_limit_seconds: Option<i64>,
    /// Seconds during which messages may be moved between channels; None is unlimited.
    pub move_messages_between_streams_limit_seconds: Option<i64>,
    /// Seconds during which senders may delete their messages; None is unlimited.
    pub message_content_delete_limit_seconds: Option<i64>,
    /// Whether channel messages need a topic (`disable_empty_topic`) or may use the empty one.
    pub topics_policy: String,
}

impl RealmPolicy {
    /// The group-setting names, for validation and storage.
    pub const GROUP_SETTINGS: [&'static str; 10] = [
        "can_create_public_channel_group",
        "can_create_private_channel_group",
        "can_create_web_public_channel_group",
        "can_add_subscribers_group",
        "can_mention_many_users_group",
        "can_move_messages_between_channels_group",
        "can_move_messages_between_topics_group",
        "can_resolve_topics_group",
        "can_delete_any_message_group",
        "can_delete_own_message_group",
    ];

    /// The group-setting values, in the order of [`RealmPolicy::GROUP_SETTINGS`].
    pub fn group_settings(&self) -> [&GroupSetting; 10] {
        [
            &self.can_create_public_channel_group,
            &self.can_create_private_channel_group,
            &self.can_create_web_public_channel_group,
            &self.can_add_subscribers_group,
            &self.can_mention_many_users_group,
            &self.can_move_messages_between_channels_group,
            &self.can_move_messages_between_topics_group,
            &self.can_resolve_topics_group,
            &self.can_delete_any_message_group,
            &self.can_delete_own_message_group,
        ]
    }

    /// The policy from stored values (`name -> JSON text`), defaults for the rest. System group
    /// IDs come from `groups`.
    pub fn from_stored(stored: &HashMap<String, String>, groups: &GroupGraph) -> RealmPolicy {
        let group = |name: &str, default: SystemGroup| {
            stored
                .get(name)
                .and_then(|text| GroupSetting::from_json(text))
                .or_else(|| groups.system_id(default).map(GroupSetting::Group))
                .unwrap_or(GroupSetting::Anonymous {
                    direct_members: Vec::new(),
                    direct_subgroups: Vec::new(),
                })
        };
        let seconds = |name: &str, default: Option<i64>| match stored.get(name) {
            Some(text) => serde_json::from_str::<Option<i64>>(text).unwrap_or(default),
            None => default,
        };
        RealmPolicy {
            can_create_public_channel_group: group(
                "can_create_public_channel_group",
                SystemGroup::Members,
            ),
            can_create_private_channel_group: group(
                "can_create_private_channel_group",
                SystemGroup::Members,
            ),
            can_create_web_public_channel_group: group(
                "can_create_web_public_channel_group",
                SystemGroup::Owners,
            ),
            can_add_subscribers_group: group("can_add_subscribers_group", SystemGroup::Members),
            can_mention_many_users_group: group(
                "can_mention_many_users_group",
                SystemGroup::Administrators,
            ),
            can_move_messages_between_channels_group: group(
                "can_move_messages_between_channels_group",
                SystemGroup::Members,
            ),
            can_move_messages_between_topics_group: group(
                "can_move_messages_between_topics_group",
                SystemGroup::Everyone,
            ),
            can_resolve_topics_group: group("can_resolve_topics_group", SystemGroup::Everyone),
            can_delete_any_message_group: group(
                "can_delete_any_message_group",
                SystemGroup::Administrators,
            ),
            can_delete_own_message_group: group(
                "can_delete_own_message_group",
                SystemGroup::Everyone,
            ),
            allow_message_editing: stored
                .get("allow_message_editing")
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or(true),
            message_content_edit_limit_seconds: seconds(
                "message_content_edit_limit_seconds",
                Some(600),
            ),
            move_messages_within_stream_limit_seconds: seconds(
                "move_messages_within_stream_limit_seconds",
                Some(604_800),
            ),
            move_messages_between_streams_limit_seconds: seconds(
                "move_messages_between_streams_limit_seconds",
                Some(604_800),
            ),
            message_content_delete_limit_seconds: seconds(
                "message_content_delete_limit_seconds",
                Some(600),
            ),
            topics_policy: stored
                .get("topics_policy")
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or_else(|| "allow_empty_topic".to_owned()),
        }
    }
}

//! The organization (realm) that a deployment hosts, and its organization-wide policy.

use crate::groups::{GroupGraph, GroupSetting, SystemGroup};
use crate::realm_settings::{stored_or_default, stored_value, RealmSetting};
use serde_json::Value;
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

impl Realm {
    /// The current value of `spec`: from this organization row or the stored named values,
    /// else the default. A stored value that no longer parses reads as the default.
    pub fn setting_value(&self, spec: &RealmSetting, stored: &HashMap<String, String>) -> Value {
        match spec.name {
            "name" => return Value::from(self.name.clone()),
            "description" => return Value::from(self.description.clone()),
            "enable_spectator_access" => return Value::Bool(self.enable_spectator_access),
            _ => {}
        }
        stored_value(spec, stored)
    }
}

/// The limits on message and topic size that register returns.
pub mod limits {
    /// `max_message_length`.
    pub const MAX_MESSAGE_LENGTH: usize = 10_000;
    /// `max_topic_length`.
    pub const MAX_TOPIC_LENGTH: usize = 60;
}

/// The organization's group settings: `(name, default system group)`, in the order
/// [`RealmPolicy::group_settings`] returns them. Defaults are the reference's for a new
/// organization.
pub const REALM_GROUP_SETTINGS: [(&str, SystemGroup); 22] = [
    ("can_create_public_channel_group", SystemGroup::Members),
    ("can_create_private_channel_group", SystemGroup::Members),
    ("can_create_web_public_channel_group", SystemGroup::Owners),
    ("can_add_subscribers_group", SystemGroup::Members),
    ("can_mention_many_users_group", SystemGroup::Administrators),
    (
        "can_move_messages_between_channels_group",
        SystemGroup::Members,
    ),
    (
        "can_move_messages_between_topics_group",
        SystemGroup::Everyone,
    ),
    ("can_resolve_topics_group", SystemGroup::Everyone),
    ("can_delete_any_message_group", SystemGroup::Administrators),
    ("can_delete_own_message_group", SystemGroup::Everyone),
    ("can_access_all_users_group", SystemGroup::Everyone),
    ("can_add_custom_emoji_group", SystemGroup::Members),
    ("can_create_bots_group", SystemGroup::Members),
    ("can_create_write_only_bots_group", SystemGroup::Members),
    ("can_create_groups", SystemGroup::Members),
    ("can_invite_users_group", SystemGroup::Members),
    ("can_manage_all_groups", SystemGroup::Owners),
    ("can_manage_billing_group", SystemGroup::Administrators),
    ("can_summarize_topics_group", SystemGroup::Everyone),
    ("create_multiuse_invite_group", SystemGroup::Administrators),
    ("direct_message_initiator_group", SystemGroup::Everyone),
    ("direct_message_permission_group", SystemGroup::Everyone),
];

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
    /// Who may see every user (others see only users they share channels or messages with).
    pub can_access_all_users_group: GroupSetting,
    /// Who may add custom emoji.
    pub can_add_custom_emoji_group: GroupSetting,
    /// Who may create any kind of bot.
    pub can_create_bots_group: GroupSetting,
    /// Who may create bots that can only send messages (incoming webhooks).
    pub can_create_write_only_bots_group: GroupSetting,
    /// Who may create user groups.
    pub can_create_groups: GroupSetting,
    /// Who may send invitations (by email).
    pub can_invite_users_group: GroupSetting,
    /// Who may manage every user group, whatever the group's own settings say.
    pub can_manage_all_groups: GroupSetting,
    /// Who may manage billing (kept for clients; Parley has no billing).
    pub can_manage_billing_group: GroupSetting,
    /// Who may ask for topic summaries (kept for clients; Parley has no summaries).
    pub can_summarize_topics_group: GroupSetting,
    /// Who may create reusable invitation links.
    pub create_multiuse_invite_group: GroupSetting,
    /// Who may start direct-message conversations.
    pub direct_message_initiator_group: GroupSetting,
    /// Who may take part in direct-message conversations.
    pub direct_message_permission_group: GroupSetting,
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
    pub const GROUP_SETTINGS: [&'static str; 22] = {
        let mut names = [""; 22];
        let mut i = 0;
        while i < 22 {
            names[i] = REALM_GROUP_SETTINGS[i].0;
            i += 1;
        }
        names
    };

    /// The group-setting values, in the order of [`RealmPolicy::GROUP_SETTINGS`].
    pub fn group_settings(&self) -> [&GroupSetting; 22] {
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
            &self.can_access_all_users_group,
            &self.can_add_custom_emoji_group,
            &self.can_create_bots_group,
            &self.can_create_write_only_bots_group,
            &self.can_create_groups,
            &self.can_invite_users_group,
            &self.can_manage_all_groups,
            &self.can_manage_billing_group,
            &self.can_summarize_topics_group,
            &self.create_multiuse_invite_group,
            &self.direct_message_initiator_group,
            &self.direct_message_permission_group,
        ]
    }

    /// The group setting called `name`, if the organization has one.
    pub fn group_setting(&self, name: &str) -> Option<&GroupSetting> {
        Self::GROUP_SETTINGS
            .iter()
            .position(|n| *n == name)
            .map(|i| self.group_settings()[i])
    }

    /// The policy from stored values (`name -> JSON text`), defaults for the rest. System group
    /// IDs come from `groups`.
    pub fn from_stored(stored: &HashMap<String, String>, groups: &GroupGraph) -> RealmPolicy {
        let group = |name: &str| {
            let default = REALM_GROUP_SETTINGS
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(SystemGroup::Nobody, |(_, g)| *g);
            stored
                .get(name)
                .and_then(|text| GroupSetting::from_json(text))
                .or_else(|| groups.system_id(default).map(GroupSetting::Group))
                .unwrap_or(GroupSetting::Anonymous {
                    direct_members: Vec::new(),
                    direct_subgroups: Vec::new(),
                })
        };
        // Plain settings read through the registry, so defaults live in one place.
        let setting = |name: &str| stored_or_default(name, stored);
        let seconds = |name: &str| setting(name).as_i64();
        RealmPolicy {
            can_create_public_channel_group: group("can_create_public_channel_group"),
            can_create_private_channel_group: group("can_create_private_channel_group"),
            can_create_web_public_channel_group: group("can_create_web_public_channel_group"),
            can_add_subscribers_group: group("can_add_subscribers_group"),
            can_mention_many_users_group: group("can_mention_many_users_group"),
            can_move_messages_between_channels_group: group(
                "can_move_messages_between_channels_group",
            ),
            can_move_messages_between_topics_group: group("can_move_messages_between_topics_group"),
            can_resolve_topics_group: group("can_resolve_topics_group"),
            can_delete_any_message_group: group("can_delete_any_message_group"),
            can_delete_own_message_group: group("can_delete_own_message_group"),
            can_access_all_users_group: group("can_access_all_users_group"),
            can_add_custom_emoji_group: group("can_add_custom_emoji_group"),
            can_create_bots_group: group("can_create_bots_group"),
            can_create_write_only_bots_group: group("can_create_write_only_bots_group"),
            can_create_groups: group("can_create_groups"),
            can_invite_users_group: group("can_invite_users_group"),
            can_manage_all_groups: group("can_manage_all_groups"),
            can_manage_billing_group: group("can_manage_billing_group"),
            can_summarize_topics_group: group("can_summarize_topics_group"),
            create_multiuse_invite_group: group("create_multiuse_invite_group"),
            direct_message_initiator_group: group("direct_message_initiator_group"),
            direct_message_permission_group: group("direct_message_permission_group"),
            allow_message_editing: setting("allow_message_editing").as_bool().unwrap_or(true),
            message_content_edit_limit_seconds: seconds("message_content_edit_limit_seconds"),
            move_messages_within_stream_limit_seconds: seconds(
                "move_messages_within_stream_limit_seconds",
            ),
            move_messages_between_streams_limit_seconds: seconds(
                "move_messages_between_streams_limit_seconds",
            ),
            message_content_delete_limit_seconds: seconds("message_content_delete_limit_seconds"),
            topics_policy: setting("topics_policy")
                .as_str()
                .unwrap_or("allow_empty_topic")
                .to_owned(),
        }
    }
}

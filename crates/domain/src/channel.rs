//! Channels (the API's "streams"): their settings, the rules for names and descriptions, and how
//! a channel is presented to a user.

use crate::error::RequestError;
use crate::groups::GroupSetting;
use crate::ids::{ChannelId, UserId};
use serde::Serialize;
use serde_json::Value;

/// `max_stream_name_length`.
pub const MAX_CHANNEL_NAME_LENGTH: usize = 60;
/// `max_stream_description_length`.
pub const MAX_CHANNEL_DESCRIPTION_LENGTH: usize = 1024;

/// Whether a channel's messages may use the empty topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopicsPolicy {
    /// Follow the organization's setting.
    Inherit,
    /// The empty topic is allowed.
    AllowEmptyTopic,
    /// Every message needs a topic.
    DisableEmptyTopic,
    /// Only the empty topic is allowed.
    EmptyTopicOnly,
}

impl TopicsPolicy {
    /// The API name.
    pub fn name(self) -> &'static str {
        match self {
            TopicsPolicy::Inherit => "inherit",
            TopicsPolicy::AllowEmptyTopic => "allow_empty_topic",
            TopicsPolicy::DisableEmptyTopic => "disable_empty_topic",
            TopicsPolicy::EmptyTopicOnly => "empty_topic_only",
        }
    }

    /// The policy with this API name.
    pub fn from_name(name: &str) -> Option<TopicsPolicy> {
        use TopicsPolicy::*;
        [Inherit, AllowEmptyTopic, DisableEmptyTopic, EmptyTopicOnly]
            .into_iter()
            .find(|p| p.name() == name)
    }
}

/// How long a channel keeps messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retention {
    /// The organization's policy (stored as no value).
    RealmDefault,
    /// Forever.
    Unlimited,
    /// This many days.
    Days(i64),
}

impl Retention {
    /// Parses the API value: `realm_default`, `unlimited` or a positive integer.
    pub fn parse(value: &Value, var_name: &str) -> Result<Retention, RequestError> {
        match value {
            Value::String(s) if s == "realm_default" => Ok(Retention::RealmDefault),
            Value::String(s) if s == "unlimited" => Ok(Retention::Unlimited),
            Value::Number(n) => match n.as_i64() {
                Some(days) if days >= 1 => Ok(Retention::Days(days)),
                _ => Err(RequestError::invalid_param(
                    var_name,
                    format!("Bad value for '{var_name}': {n}"),
                )),
            },
            other => Err(RequestError::invalid_param(
                var_name,
                format!("Bad value for '{var_name}': {other}"),
            )),
        }
    }

    /// The stored form: None for the organization default, -1 for unlimited.
    pub fn to_column(self) -> Option<i64> {
        match self {
            Retention::RealmDefault => None,
            Retention::Unlimited => Some(-1),
            Retention::Days(days) => Some(days),
        }
    }

    /// The stored form back.
    pub fn from_column(value: Option<i64>) -> Retention {
        match value {
            None => Retention::RealmDefault,
            Some(-1) => Retention::Unlimited,
            Some(days) => Retention::Days(days),
        }
    }

    /// The API's `message_retention_days`: null for the default, -1 for unlimited.
    pub fn api_value(self) -> Option<i64> {
        self.to_column()
    }
}

/// The channel permissions that take a group-setting value, with the API names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelPermissions {
    /// Who may add subscribers.
    pub can_add_subscribers_group: GroupSetting,
    /// Who may administer the channel.
    pub can_administer_channel_group: GroupSetting,
    /// Who may delete any message (with content access).
    pub can_delete_any_message_group: GroupSetting,
    /// Who may delete their own messages.
    pub can_delete_own_message_group: GroupSetting,
    /// Who may move messages out of the channel.
    pub can_move_messages_out_of_channel_group: GroupSetting,
    /// Who may move messages between the channel's topics.
    pub can_move_messages_within_channel_group: GroupSetting,
    /// Who may remove subscribers.
    pub can_remove_subscribers_group: GroupSetting,
    /// Who may post.
    pub can_send_message_group: GroupSetting,
    /// Who may subscribe themselves.
    pub can_subscribe_group: GroupSetting,
    /// Who may resolve topics.
    pub can_resolve_topics_group: GroupSetting,
}

impl ChannelPermissions {
    /// The permission names, in the order [`ChannelPermissions::values`] returns them.
    pub const NAMES: [&'static str; 10] = [
        "can_add_subscribers_group",
        "can_administer_channel_group",
        "can_delete_any_message_group",
        "can_delete_own_message_group",
        "can_move_messages_out_of_channel_group",
        "can_move_messages_within_channel_group",
        "can_remove_subscribers_group",
        "can_send_message_group",
        "can_subscribe_group",
        "can_resolve_topics_group",
    ];

    /// The values, in the order of [`ChannelPermissions::NAMES`].
    pub fn values(&self) -> [&GroupSetting; 10] {
        [
            &self.can_add_subscribers_group,
            &self.can_administer_channel_group,
            &self.can_delete_any_message_group,
            &self.can_delete_own_message_group,
            &self.can_move_messages_out_of_channel_group,
            &self.can_move_messages_within_channel_group,
            &self.can_remove_subscribers_group,
            &self.can_send_message_group,
            &self.can_subscribe_group,
            &self.can_resolve_topics_group,
        ]
    }

    /// A mutable reference to the permission with this API name.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut GroupSetting> {
        Some(match name {
            "can_add_subscribers_group" => &mut self.can_add_subscribers_group,
            "can_administer_channel_group" => &mut self.can_administer_channel_group,
            "can_delete_any_message_group" => &mut self.can_delete_any_message_group,
            "can_delete_own_message_group" => &mut self.can_delete_own_message_group,
            "can_move_messages_out_of_channel_group" => {
                &mut self.can_move_messages_out_of_channel_group
            }
            "can_move_messages_within_channel_group" => {
                &mut self.can_move_messages_within_channel_group
            }
            "can_remove_subscribers_group" => &mut self.can_remove_subscribers_group,
            "can_send_message_group" => &mut self.can_send_message_group,
            "can_subscribe_group" => &mut self.can_subscribe_group,
            "can_resolve_topics_group" => &mut self.can_resolve_topics_group,
            _ => return None,
        })
    }
}

/// A channel as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// ID.
    pub id: ChannelId,
    /// Display name; unique ignoring case.
    pub name: String,
    /// Markdown description.
    pub description: String,
    /// HTML description.
    pub rendered_description: String,
    /// Private channel.
    pub invite_only: bool,
    /// Readable by spectators.
    pub is_web_public: bool,
    /// New subscribers see earlier messages.
    pub history_public_to_subscribers: bool,
    /// Retention policy.
    pub retention: Retention,
    /// Empty-topic policy.
    pub topics_policy: TopicsPolicy,
    /// Archived (deleted) channels keep their messages but take no new ones.
    pub is_archived: bool,
    /// Creation time, Unix seconds.
    pub date_created: i64,
    /// Creator, when known.
    pub creator_id: Option<UserId>,
    /// The first message's ID, once there is one.
    pub first_message_id: Option<i64>,
    /// The channel folder, if any.
    pub folder_id: Option<i64>,
    /// New users are subscribed to it.
    pub is_default: bool,
    /// Group-setting permissions.
    pub permissions: ChannelPermissions,
}

impl Channel {
    /// Public channels are those that are not invite-only.
    pub fn is_public(&self) -> bool {
        !self.invite_only
    }

    /// The fields every channel object of the API carries (`GET /streams`, subscriptions).
    pub fn api_fields(&self, subscriber_count: i64) -> serde_json::Map<String, Value> {
        let mut fields = serde_json::Map::new();
        let mut put = |key: &str, value: Value| {
            fields.insert(key.to_owned(), value);
        };
        put("stream_id", self.id.0.into());
        put("name", self.name.clone().into());
        put("description", self.description.clone().into());
        put(
            "rendered_description",
            self.rendered_description.clone().into(),
        );
        put("date_created", self.date_created.into());
        put("creator_id", self.creator_id.map(|id| id.0).into());
        put("invite_only", self.invite_only.into());
        put("is_web_public", self.is_web_public.into());
        put("is_announcement_only", false.into());
        put("stream_post_policy", 1.into());
        put(
            "history_public_to_subscribers",
            self.history_public_to_subscribers.into(),
        );
        put("message_retention_days", self.retention.api_value().into());
        put("first_message_id", self.first_message_id.into());
        put("folder_id", self.folder_id.into());
        put("topics_policy", self.topics_policy.name().into());
        put("is_archived", self.is_archived.into());
        put("is_recently_active", true.into());
        put("stream_weekly_traffic", Value::Null);
        put("subscriber_count", subscriber_count.into());
        for (name, setting) in ChannelPermissions::NAMES
            .iter()
            .zip(self.permissions.values())
        {
            put(name, serde_json::to_value(setting).unwrap_or(Value::Null));
        }
        fields
    }
}

/// Validates a channel name and returns it trimmed.
pub fn check_channel_name(raw: &str, var_name: &str) -> Result<String, RequestError> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(RequestError::invalid_param(
            var_name,
            "Channel name can't be empty.",
        ));
    }
    if name.chars().count() > MAX_CHANNEL_NAME_LENGTH {
        return Err(RequestError::invalid_param(
            var_name,
            format!("Channel name too long (limit: {MAX_CHANNEL_NAME_LENGTH} characters)."),
        ));
    }
    if let Some(bad) = name.chars().find(|c| c.is_control()) {
        return Err(RequestError::invalid_param(
            var_name,
            format!(
                "Invalid character in channel name, at position {}.",
                name.chars().position(|c| c == bad).unwrap_or(0) + 1
            ),
        ));
    }
    Ok(name.to_owned())
}

/// Validates a channel description (Markdown; newlines are folded to spaces as the reference
/// does) and returns it.
pub fn check_channel_description(raw: &str, var_name: &str) -> Result<String, RequestError> {
    let description = raw.replace(['\r', '\n'], " ");
    if description.chars().count() > MAX_CHANNEL_DESCRIPTION_LENGTH {
        return Err(RequestError::invalid_param(
            var_name,
            format!("Channel description too long (limit: {MAX_CHANNEL_DESCRIPTION_LENGTH} characters)."),
        ));
    }
    Ok(description.trim().to_owned())
}

/// The key that makes channel names unique regardless of case.
pub fn channel_name_key(name: &str) -> String {
    name.trim().to_lowercase()
}

/// Per-user settings of a subscription.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubscriptionSettings {
    /// Color in the UI, `#rrggbb`.
    pub color: String,
    /// Pinned to the top of the channel list.
    pub pin_to_top: bool,
    /// Muted.
    pub is_muted: bool,
    /// Null inherits the user's default.
    pub desktop_notifications: Option<bool>,
    /// Null inherits the user's default.
    pub audible_notifications: Option<bool>,
    /// Null inherits the user's default.
    pub push_notifications: Option<bool>,
    /// Null inherits the user's default.
    pub email_notifications: Option<bool>,
    /// Null inherits the user's default.
    pub wildcard_mentions_notify: Option<bool>,
}

/// The palette new subscriptions take colors from, in turn.
pub const SUBSCRIPTION_COLORS: [&str; 24] = [
    "#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd", "#addfe5",
    "#f5ce6e", "#c2726a", "#94c849", "#bd86e5", "#ee7e4a", "#a6dcbf", "#95a5fd", "#53a063",
    "#9987e1", "#e4523d", "#c2c2c2", "#4f8de4", "#c6a8ad", "#e7cc4d", "#c8bebf", "#a47462",
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_checked() {
        assert_eq!(check_channel_name("  general ", "name").unwrap(), "general");
        assert!(check_channel_name("", "name").is_err());
        assert!(check_channel_name(&"x".repeat(61), "name").is_err());
        assert_eq!(
            check_channel_name("a\u{7}b", "name").unwrap_err().data["var_name"],
            "name"
        );
        assert_eq!(channel_name_key(" General "), "general");
    }

    #[test]
    fn retention_values() {
        assert_eq!(
            Retention::parse(&json!("realm_default"), "r").unwrap(),
            Retention::RealmDefault
        );
        assert_eq!(
            Retention::parse(&json!("unlimited"), "r").unwrap(),
            Retention::Unlimited
        );
        assert_eq!(
            Retention::parse(&json!(30), "r").unwrap(),
            Retention::Days(30)
        );
        assert!(Retention::parse(&json!(0), "r").is_err());
        assert!(Retention::parse(&json!("forever"), "r").is_err());
        for r in [
            Retention::RealmDefault,
            Retention::Unlimited,
            Retention::Days(7),
        ] {
            assert_eq!(Retention::from_column(r.to_column()), r);
        }
    }

    #[test]
    fn topics_policies_round_trip() {
        for name in [
            "inherit",
            "allow_empty_topic",
            "disable_empty_topic",
            "empty_topic_only",
        ] {
            assert_eq!(TopicsPolicy::from_name(name).unwrap().name(), name);
        }
        assert!(TopicsPolicy::from_name("sometimes").is_none());
    }
}

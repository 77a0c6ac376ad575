//! The registry of organization (realm) settings: one row per setting drives `PATCH /realm`
//! parsing and validation, storage, the register snapshot (`realm_<name>`) and the `realm`
//! events, so the snapshot and the events cannot disagree. Group settings (`can_*_group`) are
//! listed in [`crate::realm::REALM_GROUP_SETTINGS`]; their extra rules are here too.

use crate::groups::SystemGroup;
use crate::RequestError;
use serde_json::Value;
use std::collections::HashMap;

/// The type of a setting's value and the values it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealmSettingKind {
    /// `true` or `false`.
    Bool,
    /// A positive number of seconds, or `"unlimited"` (stored and reported as null).
    TimeLimit,
    /// An integer of at least 0.
    NonNegativeInt,
    /// An integer from a fixed set.
    IntChoice(&'static [i64]),
    /// A string from a fixed set.
    StrChoice(&'static [&'static str]),
    /// A language code the server knows.
    Language,
    /// Text of at most this many characters.
    Text(usize),
    /// A channel ID, or -1 for none (the caller checks that the channel exists).
    ChannelId,
    /// A positive number of days, or `"unlimited"` (stored and reported as -1).
    RetentionDays,
}

/// Where a setting's value lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// A column of the organization row (`name`, `description`, `enable_spectator_access`).
    RealmRow,
    /// The organization's named JSON values (`realm_permissions`).
    Named,
}

/// The shape of the event a change sends, as the reference server sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventStyle {
    /// `{"type":"realm","op":"update","property":name,"value":value}`.
    Update,
    /// `{"type":"realm","op":"update_dict","property":"default","data":{name: value}}`.
    UpdateDict,
}

/// A default value, kept `const`-constructible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealmDefault {
    /// Boolean.
    Bool(bool),
    /// Integer.
    Int(i64),
    /// String.
    Str(&'static str),
    /// Null (an unlimited time limit).
    Null,
}

impl RealmDefault {
    /// As JSON.
    pub fn to_json(self) -> Value {
        match self {
            RealmDefault::Bool(b) => Value::Bool(b),
            RealmDefault::Int(i) => Value::from(i),
            RealmDefault::Str(s) => Value::from(s),
            RealmDefault::Null => Value::Null,
        }
    }
}

/// One organization setting (not a group setting).
#[derive(Debug, Clone, Copy)]
pub struct RealmSetting {
    /// The API name; register reports it as `realm_<name>`.
    pub name: &'static str,
    /// Type and allowed values.
    pub kind: RealmSettingKind,
    /// The value of a new organization (the reference server's default).
    pub default: RealmDefault,
    /// Only organization owners may change it (administrators may change the rest).
    pub owner_only: bool,
    /// Where it is stored.
    pub storage: Storage,
    /// The event a change sends.
    pub event: EventStyle,
}

use RealmDefault::{Bool as B, Int as I, Str as S};
use RealmSettingKind::*;

macro_rules! realm_settings {
    ($($name:ident : $kind:expr, $default:expr, $owner:expr, $storage:ident, $event:ident;)*) => {
        /// Every organization setting `PATCH /realm` accepts, besides the group settings.
        pub const REALM_SETTINGS: &[RealmSetting] = &[
            $(RealmSetting {
                name: stringify!($name),
                kind: $kind,
                default: $default,
                owner_only: $owner,
                storage: Storage::$storage,
                event: EventStyle::$event,
            },)*
        ];
    };
}

const OWNER: bool = true;
const ADMIN: bool = false;

/// Realm name length limit (the reference's `MAX_REALM_NAME_LENGTH`).
pub const MAX_REALM_NAME_LENGTH: usize = 40;
/// Realm description length limit (the reference's `MAX_REALM_DESCRIPTION_LENGTH`).
pub const MAX_REALM_DESCRIPTION_LENGTH: usize = 1000;

/// `video_chat_provider` values: 0 none, 1 Jitsi Meet (the only providers Parley offers).
pub const VIDEO_CHAT_PROVIDERS: &[i64] = &[0, 1];

realm_settings! {
    name: Text(MAX_REALM_NAME_LENGTH), S(""), ADMIN, RealmRow, Update;
    description: Text(MAX_REALM_DESCRIPTION_LENGTH), S(""), ADMIN, RealmRow, UpdateDict;
    enable_spectator_access: Bool, B(false), ADMIN, RealmRow, Update;
    allow_message_editing: Bool, B(true), ADMIN, Named, UpdateDict;
    message_content_edit_limit_seconds: TimeLimit, I(600), ADMIN, Named, UpdateDict;
    move_messages_within_stream_limit_seconds: TimeLimit, I(604_800), ADMIN, Named, Update;
    move_messages_between_streams_limit_seconds: TimeLimit, I(604_800), ADMIN, Named, Update;
    message_content_delete_limit_seconds: TimeLimit, I(600), ADMIN, Named, Update;
    allow_edit_history: Bool, B(true), ADMIN, Named, Update;
    topics_policy: StrChoice(&["allow_empty_topic", "disable_empty_topic"]),
        S("allow_empty_topic"), ADMIN, Named, UpdateDict;
    invite_required: Bool, B(true), OWNER, Named, Update;
    emails_restricted_to_domains: Bool, B(false), OWNER, Named, Update;
    disallow_disposable_email_addresses: Bool, B(true), OWNER, Named, Update;
    waiting_period_threshold: NonNegativeInt, I(0), OWNER, Named, Update;
    message_retention_days: RetentionDays, I(-1), OWNER, Named, Update;
    inline_image_preview: Bool, B(true), ADMIN, Named, Update;
    inline_url_embed_preview: Bool, B(false), ADMIN, Named, Update;
    new_stream_announcements_stream_id: ChannelId, I(-1), ADMIN, Named, Update;
    signup_announcements_stream_id: ChannelId, I(-1), ADMIN, Named, Update;
    zulip_update_announcements_stream_id: ChannelId, I(-1), ADMIN, Named, Update;
    moderation_request_channel_id: ChannelId, I(-1), ADMIN, Named, Update;
    default_language: Language, S("en"), ADMIN, Named, Update;
    default_code_block_language: Text(100), S(""), ADMIN, Named, Update;
    video_chat_provider: IntChoice(VIDEO_CHAT_PROVIDERS), I(0), ADMIN, Named, Update;
    giphy_rating: IntChoice(&[0, 1, 2, 3]), I(2), ADMIN, Named, Update;
    digest_emails_enabled: Bool, B(false), ADMIN, Named, Update;
    digest_weekday: IntChoice(&[0, 1, 2, 3, 4, 5, 6]), I(1), ADMIN, Named, Update;
    send_welcome_emails: Bool, B(true), ADMIN, Named, Update;
    message_content_allowed_in_email_notifications: Bool, B(true), ADMIN, Named, Update;
    want_advertise_in_communities_directory: Bool, B(false), ADMIN, Named, Update;
    org_type: IntChoice(&[0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100]), I(0), ADMIN, Named,
        Update;
    require_unique_names: Bool, B(false), ADMIN, Named, Update;
    enable_read_receipts: Bool, B(false), ADMIN, Named, Update;
    enable_guest_user_indicator: Bool, B(true), ADMIN, Named, Update;
    enable_guest_user_dm_warning: Bool, B(true), ADMIN, Named, Update;
    presence_disabled: Bool, B(false), ADMIN, Named, Update;
    name_changes_disabled: Bool, B(false), ADMIN, Named, Update;
    email_changes_disabled: Bool, B(false), ADMIN, Named, Update;
    avatar_changes_disabled: Bool, B(false), ADMIN, Named, Update;
}

/// The setting with this name.
pub fn find(name: &str) -> Option<&'static RealmSetting> {
    REALM_SETTINGS.iter().find(|s| s.name == name)
}

/// The reference's legacy boolean alias of `topics_policy`: true is `disable_empty_topic`.
pub const MANDATORY_TOPICS: &str = "mandatory_topics";

/// Group settings only organization owners may change (the reference's `update_realm`).
pub const OWNER_ONLY_GROUP_SETTINGS: &[&str] = &[
    "create_multiuse_invite_group",
    "can_create_groups",
    "can_invite_users_group",
    "can_manage_all_groups",
];

/// Group settings that may include everyone (guests too); the others may not be set to
/// `role:everyone`, as in the reference's permission configuration. No setting accepts
/// `role:internet`.
pub const GROUP_SETTINGS_ALLOWING_EVERYONE: &[&str] = &[
    "can_access_all_users_group",
    "can_delete_own_message_group",
    "can_mention_many_users_group",
    "can_move_messages_between_topics_group",
    "can_resolve_topics_group",
    "can_summarize_topics_group",
    "direct_message_initiator_group",
    "direct_message_permission_group",
];

/// Whether a group setting may name this system group directly.
pub fn group_setting_allows(setting: &str, group: SystemGroup) -> bool {
    match group {
        SystemGroup::Internet => false,
        SystemGroup::Everyone => GROUP_SETTINGS_ALLOWING_EVERYONE.contains(&setting),
        _ => true,
    }
}

/// Whether only owners may change the setting (plain or group) called `name`.
pub fn owner_only(name: &str) -> bool {
    OWNER_ONLY_GROUP_SETTINGS.contains(&name) || find(name).is_some_and(|s| s.owner_only)
}

fn bad_value(name: &str, raw: &str) -> RequestError {
    RequestError::invalid_param(name, format!("Bad value for '{name}': {raw}"))
}

/// Parses the form text sent for `spec` into the value to store and report. Channel IDs are
/// checked for existence by the caller.
pub fn parse_value(spec: &RealmSetting, raw: &str) -> Result<Value, RequestError> {
    let name = spec.name;
    let text = raw.trim();
    let as_int = || -> Result<i64, RequestError> {
        text.parse::<i64>()
            .map_err(|_| RequestError::invalid_param(name, format!("{name} is not an integer")))
    };
    // Strings may come plain or JSON-encoded (`"unlimited"`).
    let as_str = || serde_json::from_str::<String>(text).unwrap_or_else(|_| raw.to_owned());
    match spec.kind {
        Bool => match text {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(RequestError::invalid_param(
                name,
                format!("{name} is not a boolean"),
            )),
        },
        TimeLimit => {
            if as_str() == "unlimited" {
                return Ok(Value::Null);
            }
            match text.parse::<i64>() {
                Ok(n) if n > 0 => Ok(Value::from(n)),
                _ => Err(bad_value(name, text)),
            }
        }
        RetentionDays => {
            if as_str() == "unlimited" {
                return Ok(Value::from(-1));
            }
            match text.parse::<i64>() {
                Ok(n) if n > 0 => Ok(Value::from(n)),
                _ => Err(bad_value(name, text)),
            }
        }
        NonNegativeInt => match as_int()? {
            n if n >= 0 => Ok(Value::from(n)),
            _ => Err(bad_value(name, text)),
        },
        IntChoice(allowed) => match as_int()? {
            n if allowed.contains(&n) => Ok(Value::from(n)),
            n => Err(RequestError::invalid_param(
                name,
                format!("Invalid {name} {n}"),
            )),
        },
        ChannelId => match as_int()? {
            n if n < 0 => Ok(Value::from(-1)),
            n => Ok(Value::from(n)),
        },
        StrChoice(allowed) => {
            let value = as_str();
            if allowed.contains(&value.as_str()) {
                Ok(Value::from(value))
            } else {
                Err(RequestError::invalid_param(name, format!("Invalid {name}")))
            }
        }
        Language => {
            let value = as_str();
            if crate::locale::language_name(&value).is_some() {
                Ok(Value::from(value))
            } else {
                Err(RequestError::invalid_param(
                    name,
                    format!("Invalid language '{value}'"),
                ))
            }
        }
        Text(max) => {
            if raw.contains('\0') {
                return Err(RequestError::invalid_param(
                    name,
                    format!("{name} contains NULL (0x00) characters."),
                ));
            }
            let value = raw.to_owned();
            if value.chars().count() > max {
                return Err(RequestError::invalid_param(
                    name,
                    format!("{name} is too long (limit: {max} characters)"),
                ));
            }
            if name == "name" && value.trim().is_empty() {
                return Err(RequestError::invalid_param(
                    name,
                    "Organization name can't be empty.",
                ));
            }
            Ok(Value::from(value))
        }
    }
}

/// The `mandatory_topics` alias as the `topics_policy` value it stands for.
pub fn parse_mandatory_topics(raw: &str) -> Result<Value, RequestError> {
    match raw.trim() {
        "true" => Ok(Value::from("disable_empty_topic")),
        "false" => Ok(Value::from("allow_empty_topic")),
        _ => Err(RequestError::invalid_param(
            MANDATORY_TOPICS,
            format!("{MANDATORY_TOPICS} is not a boolean"),
        )),
    }
}

/// The value of a [`Storage::Named`] setting from the stored named values, else its default.
pub fn stored_value(spec: &RealmSetting, stored: &HashMap<String, String>) -> Value {
    stored
        .get(spec.name)
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .filter(|v| value_fits(spec.kind, v))
        .unwrap_or_else(|| spec.default.to_json())
}

/// The stored value of the setting called `name`, else its default; `Null` for unknown names.
pub fn stored_or_default(name: &str, stored: &HashMap<String, String>) -> Value {
    find(name).map_or(Value::Null, |spec| stored_value(spec, stored))
}

fn value_fits(kind: RealmSettingKind, value: &Value) -> bool {
    match kind {
        Bool => value.is_boolean(),
        TimeLimit => value.is_null() || value.is_i64(),
        NonNegativeInt => value.as_i64().is_some_and(|n| n >= 0),
        IntChoice(allowed) => value.as_i64().is_some_and(|n| allowed.contains(&n)),
        ChannelId | RetentionDays => value.is_i64(),
        StrChoice(allowed) => value.as_str().is_some_and(|s| allowed.contains(&s)),
        Language | Text(_) => value.is_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> &'static RealmSetting {
        find(name).unwrap()
    }

    #[test]
    fn time_limits_take_unlimited_or_positive_seconds() {
        let s = spec("message_content_edit_limit_seconds");
        assert_eq!(parse_value(s, "unlimited").unwrap(), Value::Null);
        assert_eq!(parse_value(s, "\"unlimited\"").unwrap(), Value::Null);
        assert_eq!(parse_value(s, "3600").unwrap(), Value::from(3600));
        let err = parse_value(s, "0").unwrap_err();
        assert_eq!(err.data["var_name"], "message_content_edit_limit_seconds");
        assert!(parse_value(s, "soon").is_err());
    }

    #[test]
    fn retention_unlimited_is_minus_one() {
        let s = spec("message_retention_days");
        assert_eq!(parse_value(s, "unlimited").unwrap(), Value::from(-1));
        assert_eq!(parse_value(s, "30").unwrap(), Value::from(30));
        assert!(parse_value(s, "-5").is_err());
    }

    #[test]
    fn choices_languages_and_text_are_checked() {
        assert!(parse_value(spec("video_chat_provider"), "99").is_err());
        assert!(parse_value(spec("default_language"), "xx-nope").is_err());
        assert_eq!(
            parse_value(spec("default_language"), "de").unwrap(),
            Value::from("de")
        );
        assert!(parse_value(spec("name"), "  ").is_err());
        assert!(parse_value(spec("name"), &"x".repeat(41)).is_err());
        assert!(parse_value(spec("topics_policy"), "empty_topic_only").is_err());
        assert!(parse_value(spec("invite_required"), "yes").is_err());
    }

    #[test]
    fn stored_values_fall_back_to_defaults() {
        let mut stored = HashMap::new();
        stored.insert("giphy_rating".to_owned(), "3".to_owned());
        stored.insert("digest_weekday".to_owned(), "\"junk\"".to_owned());
        assert_eq!(stored_or_default("giphy_rating", &stored), Value::from(3));
        assert_eq!(stored_or_default("digest_weekday", &stored), Value::from(1));
        assert_eq!(
            stored_or_default("message_content_edit_limit_seconds", &stored),
            Value::from(600)
        );
    }

    #[test]
    fn group_setting_rules() {
        assert!(owner_only("can_create_groups"));
        assert!(owner_only("invite_required"));
        assert!(!owner_only("can_create_public_channel_group"));
        assert!(!group_setting_allows(
            "can_create_public_channel_group",
            SystemGroup::Everyone
        ));
        assert!(group_setting_allows(
            "can_resolve_topics_group",
            SystemGroup::Everyone
        ));
        assert!(!group_setting_allows(
            "can_resolve_topics_group",
            SystemGroup::Internet
        ));
    }
}

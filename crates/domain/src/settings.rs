//! The registry of personal settings: one row per setting drives validation, storage, the
//! register snapshot, the settings endpoints and the legacy events. Adding a setting is one row.

use crate::RequestError;
use serde_json::Value;

/// The type of a setting's value and the values it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingKind {
    /// `true` or `false`.
    Bool,
    /// An integer from a fixed set (`&[]` = any integer).
    Int(&'static [i64]),
    /// A string from a fixed set (`&[]` = any string, checked elsewhere).
    Str(&'static [&'static str]),
}

/// Which legacy event reports a change to clients without `user_settings_object`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegacyGroup {
    /// `update_display_settings`.
    Display,
    /// `update_global_notifications`.
    Notification,
    /// Neither (settings newer than the legacy events).
    None,
}

/// Where a setting may be changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Where {
    /// Accepted by `PATCH /settings`.
    pub own: bool,
    /// Accepted by `PATCH /realm/user_settings_defaults`.
    pub defaults: bool,
}

const SD: Where = Where {
    own: true,
    defaults: true,
};
const S: Where = Where {
    own: true,
    defaults: false,
};

/// One personal setting.
#[derive(Debug, Clone, Copy)]
pub struct SettingSpec {
    /// The API name.
    pub name: &'static str,
    /// Type and allowed values.
    pub kind: SettingKind,
    /// The value of a new organization's defaults (the reference server's).
    pub default: DefaultValue,
    /// Where it may be changed.
    pub accepted: Where,
    /// Legacy event family.
    pub legacy: LegacyGroup,
}

/// A default value, kept `const`-constructible.
#[derive(Debug, Clone, Copy)]
pub enum DefaultValue {
    /// Boolean.
    Bool(bool),
    /// Integer.
    Int(i64),
    /// String.
    Str(&'static str),
}

impl DefaultValue {
    /// As JSON.
    pub fn to_json(self) -> Value {
        match self {
            DefaultValue::Bool(b) => Value::Bool(b),
            DefaultValue::Int(i) => Value::from(i),
            DefaultValue::Str(s) => Value::from(s),
        }
    }
}

macro_rules! settings {
    ($($name:ident : $kind:expr, $default:expr, $where:expr, $legacy:ident;)*) => {
        /// Every personal setting, in the order the reference lists them.
        pub const SETTINGS: &[SettingSpec] = &[
            $(SettingSpec {
                name: stringify!($name),
                kind: $kind,
                default: $default,
                accepted: $where,
                legacy: LegacyGroup::$legacy,
            },)*
        ];
    };
}

use DefaultValue::{Bool as B, Int as I, Str as T};
use SettingKind::{Bool, Int, Str};

const ONE_TO_THREE: &[i64] = &[1, 2, 3];
const ONE_TO_FOUR: &[i64] = &[1, 2, 3, 4];

settings! {
    twenty_four_hour_time: Bool, B(false), SD, Display;
    web_mark_read_on_scroll_policy: Int(ONE_TO_THREE), I(1), SD, None;
    web_channel_default_view: Int(ONE_TO_FOUR), I(1), SD, None;
    starred_message_counts: Bool, B(true), SD, Display;
    receives_typing_notifications: Bool, B(true), SD, None;
    web_suggest_update_timezone: Bool, B(true), SD, None;
    fluid_layout_width: Bool, B(false), SD, Display;
    high_contrast_mode: Bool, B(false), SD, Display;
    web_font_size_px: Int(&[]), I(16), SD, None;
    web_line_height_percent: Int(&[]), I(140), SD, None;
    color_scheme: Int(ONE_TO_THREE), I(1), SD, Display;
    enable_drafts_synchronization: Bool, B(true), SD, None;
    translate_emoticons: Bool, B(false), SD, Display;
    display_emoji_reaction_users: Bool, B(true), SD, None;
    default_language: Str(&[]), T("en"), S, Display;
    web_home_view: Str(&["recent_topics", "inbox", "all_messages"]), T("inbox"), SD, Display;
    web_escape_navigates_to_home_view: Bool, B(true), SD, None;
    left_side_userlist: Bool, B(false), SD, Display;
    emojiset: Str(&["google", "twitter", "text"]), T("google"), SD, Display;
    demote_inactive_streams: Int(ONE_TO_THREE), I(1), SD, Display;
    user_list_style: Int(ONE_TO_THREE), I(2), SD, None;
    web_animate_image_previews: Str(&["always", "on_hover", "never"]), T("on_hover"), SD, None;
    web_stream_unreads_count_display_policy: Int(ONE_TO_THREE), I(2), SD, None;
    hide_ai_features: Bool, B(false), SD, None;
    web_left_sidebar_show_channel_folders: Bool, B(true), SD, None;
    web_left_sidebar_unreads_count_summary: Bool, B(true), SD, None;
    timezone: Str(&[]), T(""), S, Display;
    enable_stream_desktop_notifications: Bool, B(false), SD, Notification;
    enable_stream_email_notifications: Bool, B(false), SD, Notification;
    enable_stream_push_notifications: Bool, B(false), SD, Notification;
    enable_stream_audible_notifications: Bool, B(false), SD, Notification;
    notification_sound: Str(&[]), T("zulip"), SD, Notification;
    enable_desktop_notifications: Bool, B(true), SD, Notification;
    enable_sounds: Bool, B(true), SD, Notification;
    email_notifications_batching_period_seconds: Int(&[]), I(120), SD, Notification;
    enable_offline_email_notifications: Bool, B(true), SD, Notification;
    enable_offline_push_notifications: Bool, B(true), SD, Notification;
    enable_online_push_notifications: Bool, B(true), SD, Notification;
    enable_followed_topic_desktop_notifications: Bool, B(true), SD, None;
    enable_followed_topic_email_notifications: Bool, B(true), SD, None;
    enable_followed_topic_push_notifications: Bool, B(true), SD, None;
    enable_followed_topic_audible_notifications: Bool, B(true), SD, None;
    enable_digest_emails: Bool, B(true), SD, Notification;
    message_content_in_email_notifications: Bool, B(true), SD, Notification;
    pm_content_in_desktop_notifications: Bool, B(true), SD, Notification;
    wildcard_mentions_notify: Bool, B(true), SD, Notification;
    enable_followed_topic_wildcard_mentions_notify: Bool, B(true), SD, None;
    desktop_icon_count_display: Int(ONE_TO_FOUR), I(1), SD, Notification;
    realm_name_in_email_notifications_policy: Int(ONE_TO_THREE), I(1), SD, Notification;
    automatically_follow_topics_policy: Int(ONE_TO_FOUR), I(3), SD, None;
    automatically_unmute_topics_in_muted_streams_policy: Int(ONE_TO_FOUR), I(2), SD, None;
    automatically_follow_topics_where_mentioned: Bool, B(true), SD, None;
    resolved_topic_notice_auto_read_policy: Str(&["always", "except_followed", "never"]), T("except_followed"), SD, None;
    presence_enabled: Bool, B(true), SD, Notification;
    enter_sends: Bool, B(false), SD, None;
    send_private_typing_notifications: Bool, B(true), SD, None;
    send_stream_typing_notifications: Bool, B(true), SD, None;
    send_read_receipts: Bool, B(true), SD, None;
    web_navigate_to_sent_message: Bool, B(true), SD, None;
    allow_private_data_export: Bool, B(false), SD, None;
    enable_login_emails: Bool, B(true), SD, Notification;
    enable_marketing_emails: Bool, B(true), SD, Notification;
}

/// The setting with this name.
pub fn find(name: &str) -> Option<&'static SettingSpec> {
    SETTINGS.iter().find(|s| s.name == name)
}

/// `web_channel_default_view` values `PATCH /settings` accepts (the defaults endpoint accepts
/// all four).
const OWN_CHANNEL_DEFAULT_VIEWS: &[i64] = &[1, 2, 4];

/// Parses and checks a value sent for a setting (form text: `true`, `3`, `google`, or JSON).
/// `own`: for `PATCH /settings` rather than the organization defaults.
pub fn parse_value(spec: &SettingSpec, raw: &str, own: bool) -> Result<Value, RequestError> {
    let name = spec.name;
    let invalid = || RequestError::invalid_param(name, format!("Invalid {name}"));
    let text = raw.trim();
    match spec.kind {
        SettingKind::Bool => match text {
            "true" | "True" | "1" => Ok(Value::Bool(true)),
            "false" | "False" | "0" => Ok(Value::Bool(false)),
            _ => Err(RequestError::invalid_param(
                name,
                format!("{name} is not a boolean"),
            )),
        },
        SettingKind::Int(allowed) => {
            let value: i64 = text.parse().map_err(|_| {
                RequestError::invalid_param(name, format!("{name} is not an integer"))
            })?;
            let allowed = if own && name == "web_channel_default_view" {
                OWN_CHANNEL_DEFAULT_VIEWS
            } else {
                allowed
            };
            let in_range = match name {
                "web_font_size_px" => (12..=24).contains(&value),
                "web_line_height_percent" => (122..=158).contains(&value),
                "email_notifications_batching_period_seconds" => {
                    (120..=7 * 24 * 3600).contains(&value)
                }
                _ => allowed.is_empty() || allowed.contains(&value),
            };
            if in_range {
                Ok(Value::from(value))
            } else {
                Err(invalid())
            }
        }
        SettingKind::Str(allowed) => {
            let value = serde_json::from_str::<String>(text).unwrap_or_else(|_| text.to_owned());
            let ok = match name {
                "default_language" => crate::locale::language_name(&value).is_some(),
                "timezone" => crate::locale::check_timezone(&value).is_ok(),
                "notification_sound" => {
                    value == "none" || NOTIFICATION_SOUNDS.contains(&value.as_str())
                }
                _ => allowed.contains(&value.as_str()),
            };
            if ok {
                Ok(Value::from(value))
            } else {
                Err(invalid())
            }
        }
    }
}

/// Notification sounds the server offers (`available_notification_sounds`).
pub const NOTIFICATION_SOUNDS: &[&str] = &["chime-saved", "ding", "zulip"];

/// The "Topics the user starts" value of the automatic follow/unmute policies.
pub mod topic_policy {
    /// Topics the user participates in.
    pub const ON_PARTICIPATION: i64 = 1;
    /// Topics the user sends a message to.
    pub const ON_SEND: i64 = 2;
    /// Topics the user starts.
    pub const ON_INITIATION: i64 = 3;
    /// Never.
    pub const NEVER: i64 = 4;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_defaults_fit_their_kind() {
        let mut names: Vec<&str> = SETTINGS.iter().map(|s| s.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "duplicate setting name");
        for s in SETTINGS {
            match (s.kind, s.default) {
                (SettingKind::Bool, DefaultValue::Bool(_)) => {}
                (SettingKind::Int(allowed), DefaultValue::Int(i)) => {
                    assert!(allowed.is_empty() || allowed.contains(&i), "{}", s.name)
                }
                (SettingKind::Str(allowed), DefaultValue::Str(v)) => {
                    assert!(allowed.is_empty() || allowed.contains(&v), "{}", s.name)
                }
                _ => panic!("default of {} does not match its kind", s.name),
            }
        }
        assert!(find("receives_typing_notifications").is_some());
        let spec = |n| find(n).unwrap();
        assert_eq!(
            parse_value(spec("enter_sends"), "true", false).ok(),
            Some(Value::Bool(true))
        );
        assert!(parse_value(spec("enter_sends"), "yes", false).is_err());
        assert!(parse_value(spec("web_channel_default_view"), "3", true).is_err());
        assert!(parse_value(spec("web_channel_default_view"), "3", false).is_ok());
        assert!(parse_value(spec("emojiset"), "twitter", true).is_ok());
        assert!(parse_value(spec("emojiset"), "apple", true).is_err());
        assert!(parse_value(spec("default_language"), "de", true).is_ok());
        assert!(parse_value(spec("timezone"), "Asia/Tokyo", true).is_ok());
        assert!(find("nonsense").is_none());
    }
}

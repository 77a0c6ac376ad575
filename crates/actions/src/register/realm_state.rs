//! The organization and server part of a snapshot: versions, limits and `realm_*` settings.

use super::input::Snapshot;
use crate::context::Context;
use crate::error::ActionResult;
use crate::policy::Policy;
use parley_domain::message::EMPTY_TOPIC_DISPLAY_NAME;
use parley_domain::realm::{limits, Realm, RealmPolicy};
use parley_domain::realm_settings;
use parley_domain::user::User;
use parley_domain::version;
use parley_storage::DbConn;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// Stream names and descriptions are limited like the reference's.
const MAX_STREAM_NAME_LENGTH: i64 = 60;
const MAX_STREAM_DESCRIPTION_LENGTH: i64 = 1024;

/// Always present: which server this is.
pub(super) fn versions(out: &mut Snapshot) {
    out.insert("zulip_version".into(), version::service_version().into());
    out.insert("zulip_feature_level".into(), version::FEATURE_LEVEL.into());
    out.insert(
        "zulip_merge_base".into(),
        version::service_merge_base().into(),
    );
    out.insert("service_version".into(), version::service_version().into());
    out.insert(
        "service_feature_level".into(),
        version::FEATURE_LEVEL.into(),
    );
    out.insert(
        "service_merge_base".into(),
        version::service_merge_base().into(),
    );
}

/// The `realm` part: organization settings, limits and server facts.
pub(super) fn realm_fields(
    ctx: &Context,
    policy: &Policy,
    stored_realm: &HashMap<String, String>,
    conn: &mut DbConn,
    everyone: &[User],
    realm: &Realm,
    out: &mut Snapshot,
) -> ActionResult<()> {
    let policy: &RealmPolicy = &policy.realm;
    let url = &ctx.realm.url;
    let description = crate::rendering::render(conn, url, &realm.description).html;
    // Anonymous settings list active users only, as the reference (and user groups) do.
    let active: std::collections::HashSet<parley_domain::UserId> = everyone
        .iter()
        .filter(|u| u.is_active)
        .map(|u| u.id)
        .collect();
    let mut put = |key: &str, value: Value| {
        out.insert(key.to_owned(), value);
    };
    put(
        "max_message_length",
        (limits::MAX_MESSAGE_LENGTH as i64).into(),
    );
    put("max_topic_length", (limits::MAX_TOPIC_LENGTH as i64).into());
    put(
        "max_channel_folder_name_length",
        (parley_domain::channel_folder::MAX_NAME_LENGTH as i64).into(),
    );
    put(
        "max_channel_folder_description_length",
        (parley_domain::channel_folder::MAX_DESCRIPTION_LENGTH as i64).into(),
    );
    put("max_stream_name_length", MAX_STREAM_NAME_LENGTH.into());
    put(
        "max_stream_description_length",
        MAX_STREAM_DESCRIPTION_LENGTH.into(),
    );
    put(
        "realm_empty_topic_display_name",
        EMPTY_TOPIC_DISPLAY_NAME.into(),
    );
    put(
        "event_queue_longpoll_timeout_seconds",
        version::EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS.into(),
    );
    put("server_presence_ping_interval_seconds", 60.into());
    put("server_presence_offline_threshold_seconds", 140.into());
    put(
        "server_typing_started_expiry_period_milliseconds",
        45000.into(),
    );
    put(
        "server_typing_stopped_wait_period_milliseconds",
        5000.into(),
    );
    put(
        "server_typing_started_wait_period_milliseconds",
        10000.into(),
    );
    put("max_file_upload_size_mib", 25.into());
    put("max_avatar_file_size_mib", 5.into());
    put("max_icon_file_size_mib", 5.into());
    put("max_logo_file_size_mib", 5.into());
    put("server_inline_image_preview", true.into());
    put(
        "server_thumbnail_formats",
        parley_domain::thumbnail::server_thumbnail_formats(),
    );
    put("server_inline_url_embed_preview", false.into());
    put("server_avatar_changes_disabled", false.into());
    put("server_name_changes_disabled", false.into());
    put("server_needs_upgrade", false.into());
    put("server_web_public_streams_enabled", true.into());
    put(
        "server_emoji_data_url",
        format!("{url}{}", crate::emoji_data::EMOJI_DATA_PATH).into(),
    );
    put("server_jitsi_server_url", Value::Null);
    put("jitsi_server_url", "https://meet.jit.si".into());
    put("development_environment", false.into());
    put("server_generation", 0.into());
    put(
        "password_min_length",
        (crate::secrets::MIN_PASSWORD_LENGTH as i64).into(),
    );
    put("password_min_guesses", 10000.into());
    put("giphy_rating_options", json!({}));
    put(
        "server_supported_permission_settings",
        json!({"group": supported_group_permission_settings()}),
    );
    put("realm_description", description.into());
    put("realm_date_created", realm.date_created.into());
    put("realm_uri", url.clone().into());
    put("realm_url", url.clone().into());
    // The icon the server serves (the login page and the web client show the same one).
    put(
        "realm_icon_url",
        format!("{url}/static/images/logo/parley-icon.svg").into(),
    );
    put("realm_icon_source", "G".into());
    put("realm_logo_url", "".into());
    put("realm_logo_source", "D".into());
    put("realm_night_logo_url", "".into());
    put("realm_night_logo_source", "D".into());
    put("realm_bot_domain", ctx.realm.host.clone().into());
    put("realm_plan_type", 1.into());
    put("zulip_plan_is_not_limited", true.into());
    put("realm_upload_quota_mib", Value::Null);
    put("realm_is_zephyr_mirror_realm", false.into());
    put("realm_email_auth_enabled", true.into());
    put("realm_password_auth_enabled", true.into());
    put(
        "realm_push_notifications_enabled",
        crate::push_devices::push_enabled(ctx).into(),
    );
    put(
        "realm_push_notifications_enabled_end_timestamp",
        Value::Null,
    );
    put(
        "realm_authentication_methods",
        json!({"Email": {"enabled": true, "available": true}}),
    );
    put(
        "realm_available_video_chat_providers",
        json!({
            "disabled": {"name": "None", "id": 0},
            "jitsi_meet": {"name": "Jitsi Meet", "id": 1},
        }),
    );
    put("realm_jitsi_server_url", Value::Null);
    put("realm_default_external_accounts", json!({}));
    // Every plain organization setting, from the registry that PATCH /realm also uses.
    for spec in realm_settings::REALM_SETTINGS {
        if spec.name != "description" {
            put(
                &format!("realm_{}", spec.name),
                realm.setting_value(spec, stored_realm),
            );
        }
    }
    put(
        "realm_mandatory_topics",
        (policy.topics_policy == "disable_empty_topic").into(),
    );
    for (name, setting) in RealmPolicy::GROUP_SETTINGS
        .iter()
        .zip(policy.group_settings())
    {
        put(
            &format!("realm_{name}"),
            serde_json::to_value(crate::present::groups::setting_value(setting, &active))
                .unwrap_or(Value::Null),
        );
    }
    // Legacy policy names read by older clients; the group settings above are authoritative.
    put("realm_create_public_stream_policy", 1.into());
    put("realm_create_private_stream_policy", 1.into());
    put("realm_create_web_public_stream_policy", 7.into());
    put("realm_wildcard_mention_policy", 5.into());
    Ok(())
}

/// The `group` part of the register's `server_supported_permission_settings`: each user group
/// setting's configuration as the reference describes it.
pub fn supported_group_permission_settings() -> Value {
    use parley_domain::group_permissions::{SettingDefault, GROUP_SETTINGS};
    let mut out = Map::new();
    for config in GROUP_SETTINGS {
        let default = match config.default {
            SettingDefault::Creator => "group_creator",
            SettingDefault::System(group) => group.name(),
        };
        out.insert(
            config.name.into(),
            json!({
                "require_system_group": false,
                "allow_internet_group": false,
                "allow_nobody_group": true,
                "allow_everyone_group": config.allow_everyone_group,
                "default_group_name": default,
                "default_for_system_groups": "role:nobody",
                "allowed_system_groups": [],
            }),
        );
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supported_settings_describe_every_group_setting() {
        let value = supported_group_permission_settings();
        assert_eq!(value.as_object().map(|m| m.len()), Some(6));
        assert_eq!(
            value["can_manage_group"]["default_group_name"],
            "group_creator"
        );
        assert_eq!(value["can_leave_group"]["allow_everyone_group"], true);
        assert_eq!(value["can_join_group"]["default_group_name"], "role:nobody");
    }
}

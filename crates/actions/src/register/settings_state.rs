//! The settings part of a snapshot: `user_settings`, the legacy top-level copies for clients
//! without `user_settings_object`, and the organization's defaults for new users.

use super::input::{Snapshot, SnapshotInput, Wanted};
use crate::error::ActionResult;
use crate::user_settings::effective_settings;
use parley_domain::settings::{LegacyGroup, NOTIFICATION_SOUNDS, SETTINGS};
use parley_storage::DbConn;
use serde_json::{json, Map, Value};

/// Fills `user_settings`, the legacy fields and `realm_user_settings_defaults`.
pub(super) fn fill(
    input: &SnapshotInput<'_>,
    wanted: &Wanted,
    conn: &mut DbConn,
    out: &mut Snapshot,
) -> ActionResult<()> {
    let settings = effective_settings(conn, input.user)?;
    let extras = |map: &mut Map<String, Value>| {
        map.insert(
            "available_notification_sounds".into(),
            json!(NOTIFICATION_SOUNDS),
        );
        map.insert("emojiset_choices".into(), emojiset_choices());
    };
    if wanted.wants("user_settings") {
        let mut object = settings.clone();
        extras(&mut object);
        out.insert("user_settings".into(), Value::Object(object));
    }
    if !input.request.client_capabilities.user_settings_object {
        for (kind, group) in [
            ("update_display_settings", LegacyGroup::Display),
            ("update_global_notifications", LegacyGroup::Notification),
        ] {
            if !wanted.wants(kind) {
                continue;
            }
            for spec in SETTINGS.iter().filter(|s| s.legacy == group) {
                if let Some(value) = settings.get(spec.name) {
                    out.insert(spec.name.to_owned(), value.clone());
                }
            }
            if group == LegacyGroup::Display {
                let mut legacy = Map::new();
                extras(&mut legacy);
                for (key, value) in legacy {
                    out.insert(key, value);
                }
            }
        }
    }
    if wanted.wants("realm_user_settings_defaults") {
        let mut defaults = crate::settings_changes::realm_defaults(conn)?;
        extras(&mut defaults);
        out.insert(
            "realm_user_settings_defaults".into(),
            Value::Object(defaults),
        );
    }
    Ok(())
}

fn emojiset_choices() -> Value {
    json!([
        {"key": "google", "text": "Google"},
        {"key": "twitter", "text": "Twitter"},
        {"key": "text", "text": "Plain text"},
    ])
}

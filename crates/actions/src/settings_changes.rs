//! Changing settings: a person's own (`PATCH /settings`) and the organization's defaults for new
//! users (`PATCH /realm/user_settings_defaults`), with their events.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::channels::active_users;
use crate::notify::{body, to_users};
use crate::publish::Events;
use crate::secrets;
use crate::user_settings::Settings;
use parley_domain::locale::language_name;
use parley_domain::settings::{self, LegacyGroup, SettingSpec, SETTINGS};
use parley_domain::user::{
    can_access_delivery_email, check_full_name, EmailAddressVisibility, User,
};
use parley_domain::RequestError;
use parley_events::{Body, Capability, Event};
use parley_storage::{settings as stored, users, DbConn};
use parley_wire as wire;
use parley_wire::event::{PersonUpdate, SettingEvent};
use serde_json::{Map, Value};

/// A `PATCH /settings` request: raw setting values by name, and the account fields.
#[derive(Debug, Clone, Default)]
pub struct SettingsChange {
    /// Setting name and the text sent for it.
    pub values: Vec<(String, String)>,
    /// New display name.
    pub full_name: Option<String>,
    /// The current password, required with `new_password`.
    pub old_password: Option<String>,
    /// New password.
    pub new_password: Option<String>,
    /// New address: a confirmation link goes there first.
    pub email: Option<String>,
    /// Who may see the real address (1 everyone .. 5 moderators).
    pub email_address_visibility: Option<String>,
    /// The browser session the request came with, if any: a password change ends every other
    /// session of the user and keeps this one, as the reference keeps its changer signed in.
    pub keep_session: Option<crate::sessions::SessionKey>,
}

/// The settings `PATCH /settings` accepts (S in the spec's table).
pub fn own_settings() -> impl Iterator<Item = &'static SettingSpec> {
    SETTINGS.iter().filter(|s| s.accepted.own)
}

/// The settings `PATCH /realm/user_settings_defaults` accepts (D in the spec's table).
pub fn default_settings() -> impl Iterator<Item = &'static SettingSpec> {
    SETTINGS.iter().filter(|s| s.accepted.defaults)
}

/// The events of one changed setting: `user_settings` `update`, plus the legacy event for
/// clients without `user_settings_object`.
fn setting_events(user: &User, host: &str, spec: &SettingSpec, value: &Value) -> Event {
    let language_name = (spec.name == "default_language")
        .then(|| value.as_str().and_then(language_name))
        .flatten()
        .map(str::to_owned);
    let modern = body(wire::Event::UserSettings(SettingEvent {
        op: "update",
        property: spec.name.to_owned(),
        value: value.clone(),
        language_name: language_name.clone(),
    }));
    let legacy = match spec.legacy {
        LegacyGroup::Display => Some(wire::Event::UpdateDisplaySettings {
            user: user.api_email(host),
            setting_name: spec.name.to_owned(),
            setting: value.clone(),
            language_name,
        }),
        LegacyGroup::Notification => Some(wire::Event::UpdateGlobalNotifications {
            user: user.api_email(host),
            notification_name: spec.name.to_owned(),
            setting: value.clone(),
        }),
        LegacyGroup::None => None,
    };
    let body = match legacy {
        Some(legacy) => Body::by_capability(
            Capability::UserSettingsObject,
            modern.clone(),
            Some(Body::Many(vec![modern, body(legacy)])),
        ),
        None => modern,
    };
    Event::to_users(vec![user.id], body)
}

/// `realm_user` `update` of `user` (as stored now), to the users who can access them (one
/// constructor serves every form: `notify::users::person_update`).
fn realm_user_update(conn: &mut DbConn, user: &User, person: PersonUpdate) -> ActionResult<Event> {
    let target = users::by_id(conn, user.id)?
        .ok_or_else(|| ActionError::Internal("changed user vanished".into()))?;
    crate::notify::users::person_update(conn, &target, person)
}

/// Applies one checked setting value to a user; records its events when it changed.
fn apply_setting(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    user: &User,
    current: &Settings,
    spec: &'static SettingSpec,
    value: Value,
) -> ActionResult<()> {
    if spec.name == "timezone" {
        let zone = value.as_str().unwrap_or_default();
        if zone == user.timezone {
            return Ok(());
        }
        users::set_timezone(conn, user.id, zone)?;
        let person = PersonUpdate::Timezone {
            user_id: user.id,
            email: user.api_email(&ctx.realm.host),
            timezone: zone.to_owned(),
        };
        events.push(realm_user_update(conn, user, person)?);
    } else {
        if current.get(user.id, spec.name).as_ref() == Some(&value) {
            return Ok(());
        }
        stored::set(conn, user.id, spec.name, &value.to_string())?;
    }
    events.push(setting_events(user, &ctx.realm.host, spec, &value));
    Ok(())
}

/// Changes who may see a user's real address: viewers who gain or lose access get
/// `delivery_email` (null when lost), everyone gets `new_email` when the API address changes,
/// and the user gets the setting's events.
fn change_email_visibility(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    user: &User,
    visibility: EmailAddressVisibility,
) -> ActionResult<()> {
    users::set_email_address_visibility(conn, user.id, visibility)?;
    let mut after = user.clone();
    after.email_address_visibility = visibility;
    let people = active_users(conn)?;
    let host = &ctx.realm.host;
    let (mut gained, mut lost) = (Vec::new(), Vec::new());
    for viewer in &people {
        let before_ok = can_access_delivery_email(Some(viewer), user);
        let after_ok = can_access_delivery_email(Some(viewer), &after);
        if before_ok && !after_ok {
            lost.push(viewer.id);
        } else if after_ok && !before_ok {
            gained.push(viewer.id);
        }
    }
    // Only viewers who can access the user hear of it (`notify::users::delivery_email_changed`).
    let gained = crate::notify::users::delivery_email_changed(
        conn,
        user,
        gained,
        Some(&user.delivery_email),
    )?;
    let lost = crate::notify::users::delivery_email_changed(conn, user, lost, None)?;
    for event in gained.into_iter().chain(lost) {
        events.push(event);
    }
    if user.api_email(host) != after.api_email(host) {
        let person = PersonUpdate::Email {
            user_id: user.id,
            new_email: after.api_email(host),
        };
        events.push(realm_user_update(conn, user, person)?);
    }
    events.push(to_users(
        vec![user.id],
        wire::Event::UserSettings(SettingEvent {
            op: "update",
            property: "email_address_visibility".into(),
            value: (visibility as i64).into(),
            language_name: None,
        }),
    ));
    Ok(())
}

/// `PATCH /settings`: checks every value first, then applies them in one transaction.
pub async fn do_update_settings(
    ctx: &Context,
    user: User,
    change: SettingsChange,
) -> ActionResult<()> {
    let mut checked: Vec<(&'static SettingSpec, Value)> = Vec::new();
    for (name, raw) in &change.values {
        let spec = own_settings()
            .find(|s| s.name == name)
            .ok_or_else(|| RequestError::invalid_param(name, format!("Unknown setting {name}")))?;
        checked.push((spec, settings::parse_value(spec, raw, true)?));
    }
    if let Some(email) = &change.email {
        parley_domain::email::normalize_email(email, "email")?;
    }
    let visibility = change
        .email_address_visibility
        .as_deref()
        .map(|raw| {
            raw.trim()
                .parse::<i64>()
                .ok()
                .and_then(EmailAddressVisibility::from_code)
                .ok_or_else(|| {
                    RequestError::invalid_param(
                        "email_address_visibility",
                        "Invalid email_address_visibility",
                    )
                })
        })
        .transpose()?;
    let full_name = change
        .full_name
        .as_deref()
        .map(|n| check_full_name(n, "full_name"))
        .transpose()?;
    let new_hash = match (&change.new_password, &change.old_password) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(RequestError::invalid_param(
                "old_password",
                "Missing 'old_password' argument",
            )
            .into())
        }
        (Some(new), Some(old)) => {
            crate::secrets::check_password(new)?;
            let id = user.id;
            let stored_hash = ctx
                .run(move |conn| Ok::<_, ActionError>(users::credentials(conn, id)?))
                .await?
                .and_then(|c| c.password_hash);
            if !stored_hash.is_some_and(|h| secrets::verify_password(old, &h)) {
                return Err(RequestError::invalid_param("old_password", "Wrong password!").into());
            }
            Some(secrets::hash_password(new).map_err(ActionError::Internal)?)
        }
    };
    let ctx2 = ctx.clone();
    let email = change.email.clone();
    let me = user.clone();
    let keep_session = change.keep_session.clone();
    ctx.write(move |conn, events| {
        if let Some(hash) = &new_hash {
            users::set_password_hash(conn, user.id, hash)?;
            crate::sessions::end_sessions(conn, user.id, keep_session.as_ref())?;
        }
        if let Some(name) = full_name.filter(|n| *n != user.full_name) {
            users::set_full_name(conn, user.id, &name)?;
            let person = PersonUpdate::FullName {
                user_id: user.id,
                full_name: name.clone(),
            };
            events.push(realm_user_update(conn, &user, person)?);
        }
        if let Some(visibility) = visibility.filter(|v| *v != user.email_address_visibility) {
            change_email_visibility(&ctx2, conn, events, &user, visibility)?;
        }
        let current = Settings::load(conn, [&user])?;
        for (spec, value) in checked {
            if spec.name == "enable_drafts_synchronization" && value == Value::Bool(false) {
                // Every server-side draft goes, with no event (clients keep their local copies).
                crate::drafts::delete_all_drafts(conn, user.id)?;
            }
            apply_setting(&ctx2, conn, events, &user, &current, spec, value)?;
        }
        Ok(())
    })
    .await?;
    if let Some(email) = email {
        crate::email_change::request_email_change(ctx, me, email).await?;
    }
    Ok(())
}

/// The organization's defaults for new users, every D setting with its value.
pub fn realm_defaults(
    conn: &mut DbConn,
) -> Result<Map<String, Value>, parley_storage::StorageError> {
    let stored = stored::realm_defaults(conn)?;
    Ok(default_settings()
        .map(|s| {
            let value = stored
                .get(s.name)
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or_else(|| s.default.to_json());
            (s.name.to_owned(), value)
        })
        .collect())
}

/// `GET /realm/user_settings_defaults`.
pub async fn get_realm_defaults(ctx: &Context) -> ActionResult<Map<String, Value>> {
    Ok(ctx.run(realm_defaults).await?)
}

/// `PATCH /realm/user_settings_defaults`: administrators change what new users start with;
/// existing users keep their settings. Every user learns of it (`realm_user_settings_defaults`).
pub async fn do_update_realm_defaults(
    ctx: &Context,
    user: User,
    values: Vec<(String, String)>,
) -> ActionResult<()> {
    if !user.role.is_admin() {
        return Err(RequestError::admin_required().into());
    }
    let mut checked: Vec<(&'static SettingSpec, Value)> = Vec::new();
    for (name, raw) in &values {
        let spec = default_settings()
            .find(|s| s.name == name)
            .ok_or_else(|| RequestError::invalid_param(name, format!("Unknown setting {name}")))?;
        checked.push((spec, settings::parse_value(spec, raw, false)?));
    }
    ctx.write(move |conn, events| {
        let current = realm_defaults(conn)?;
        let everyone: Vec<_> = active_users(conn)?.iter().map(|u| u.id).collect();
        for (spec, value) in checked {
            if current.get(spec.name) == Some(&value) {
                continue;
            }
            stored::set_realm_default(conn, spec.name, &value.to_string())?;
            events.push(to_users(
                everyone.clone(),
                wire::Event::RealmUserSettingsDefaults(SettingEvent {
                    op: "update",
                    property: spec.name.to_owned(),
                    value,
                    language_name: None,
                }),
            ));
        }
        Ok(())
    })
    .await
}

/// A new user's starting settings: the organization's defaults that differ from the registry.
pub(crate) fn start_with_realm_defaults(
    conn: &mut DbConn,
    user: parley_domain::UserId,
) -> Result<(), parley_storage::StorageError> {
    for (name, value) in stored::realm_defaults(conn)? {
        stored::set(conn, user, &name, &value)?;
    }
    Ok(())
}

//! `PATCH /realm`: organization administrators change organization settings. The settings and
//! their rules come from [`parley_domain::realm_settings`]; every change is stored, reported to
//! every user with a `realm` event, and shows in later register snapshots.

use crate::channels::check_direct_members;
use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::realm::{realm_update, realm_update_dict};
use crate::policy;
use parley_domain::groups::{GroupGraph, GroupSetting, SystemGroup};
use parley_domain::ids::ChannelId;
use parley_domain::realm::RealmPolicy;
use parley_domain::realm_settings::{
    group_setting_allows, owner_only, EventStyle, RealmSetting, Storage,
};
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError};
use parley_storage::{channels, realms, DbConn};
use serde_json::{Map, Value};

/// The changes a `PATCH /realm` asks for, parsed and checked for type and range.
#[derive(Debug, Default)]
pub struct RealmUpdate {
    /// Plain settings and their new values.
    pub settings: Vec<(&'static RealmSetting, Value)>,
    /// Group settings: name, new value, and the value the client expects now (`old`).
    pub groups: Vec<(String, GroupSetting, Option<GroupSetting>)>,
    /// The first parameter that failed to parse. It is reported only after the caller's role
    /// was checked, as the reference checks the role before the parameters.
    pub invalid: Option<RequestError>,
}

impl RealmUpdate {
    /// Whether the request names no setting at all.
    pub fn is_empty(&self) -> bool {
        self.settings.is_empty() && self.groups.is_empty()
    }
}

fn owner_required() -> RequestError {
    RequestError::new(
        ErrorCode::UnauthorizedPrincipal,
        "Must be an organization owner",
    )
}

/// `PATCH /realm`: applies `update` for `user` (an administrator; owners for the owner-only
/// settings) in one transaction. Settings whose value does not change send nothing. Returns the
/// changed settings as the reference's response reports them (strings as `"updated"`).
pub async fn do_update_realm(
    ctx: &Context,
    user: User,
    update: RealmUpdate,
) -> ActionResult<Map<String, Value>> {
    if !user.role.is_admin() {
        return Err(RequestError::admin_required().into());
    }
    let names = update
        .settings
        .iter()
        .map(|(spec, _)| spec.name)
        .chain(update.groups.iter().map(|(name, _, _)| name.as_str()));
    if names.clone().any(owner_only) && !user.role.is_owner() {
        return Err(owner_required().into());
    }
    if let Some(err) = update.invalid {
        return Err(err.into());
    }
    if update.is_empty() {
        return Ok(Map::new());
    }
    ctx.write(move |conn, events| {
        let realm =
            realms::get(conn)?.ok_or_else(|| crate::ActionError::Internal("no realm".into()))?;
        let stored = realms::permissions(conn)?;
        let policy = policy::load(conn)?;
        let mut data = Map::new();
        for (spec, value) in &update.settings {
            check_channel(conn, spec, value)?;
            if realm.setting_value(spec, &stored) == *value {
                continue;
            }
            store(conn, spec, value)?;
            events.push(setting_event(spec, value));
            if spec.name == "waiting_period_threshold" {
                // Members move between `role:members` and `role:fullmembers` at once.
                crate::full_members::move_cutoff(conn, events, &policy.groups, crate::time::now())?;
            }
            let reported = if value.is_string() {
                Value::from("updated")
            } else {
                value.clone()
            };
            data.insert(spec.name.to_owned(), reported);
        }
        for (name, new, expected) in &update.groups {
            let new = normalize(new.clone(), &policy.groups);
            check_group_setting(conn, &policy.groups, name, &new)?;
            let current = policy
                .realm
                .group_setting(name)
                .cloned()
                .ok_or_else(|| RequestError::invalid_param(name, format!("Invalid {name}")))?;
            if let Some(expected) = expected {
                if normalize(expected.clone(), &policy.groups) != current {
                    return Err(RequestError::new(
                        ErrorCode::ExpectationMismatch,
                        "'old' value does not match the expected value.",
                    )
                    .with("field_name", "old")
                    .into());
                }
            }
            if new == current {
                continue;
            }
            let text = serde_json::to_string(&new)
                .map_err(|e| crate::ActionError::Internal(e.to_string()))?;
            crate::realm_cache::changing();
            realms::set_permission(conn, name, &text)?;
            let value = serde_json::to_value(&new)
                .map_err(|e| crate::ActionError::Internal(e.to_string()))?;
            let mut dict = Map::new();
            dict.insert(name.clone(), value.clone());
            events.push(realm_update_dict(dict));
            data.insert(name.clone(), value);
        }
        Ok(data)
    })
    .await
}

/// A channel-valued setting must name an existing, unarchived channel (or -1 for none).
fn check_channel(conn: &mut DbConn, spec: &RealmSetting, value: &Value) -> ActionResult<()> {
    if spec.kind != parley_domain::realm_settings::RealmSettingKind::ChannelId {
        return Ok(());
    }
    let Some(id) = value.as_i64().filter(|id| *id >= 0) else {
        return Ok(());
    };
    let found = channels::by_ids(conn, &[ChannelId(id)])?;
    let Some(channel) = found.iter().find(|c| !c.is_archived) else {
        return Err(RequestError::invalid_param(spec.name, "Invalid channel ID").into());
    };
    // Reports quote messages from private places: only a private channel may receive them.
    if spec.name == crate::moderation::MODERATION_REQUEST_CHANNEL && channel.is_public() {
        return Err(RequestError::invalid_param(
            spec.name,
            "Moderation request channel must be private.",
        )
        .into());
    }
    Ok(())
}

fn store(conn: &mut DbConn, spec: &RealmSetting, value: &Value) -> ActionResult<()> {
    crate::realm_cache::changing();
    match (spec.storage, spec.name) {
        (Storage::RealmRow, "name") => realms::set_name(conn, value.as_str().unwrap_or_default())?,
        (Storage::RealmRow, "description") => {
            realms::set_description(conn, value.as_str().unwrap_or_default())?
        }
        (Storage::RealmRow, _) => {
            realms::set_spectator_access(conn, value.as_bool().unwrap_or(false))?
        }
        (Storage::Named, name) => realms::set_permission(conn, name, &value.to_string())?,
    }
    Ok(())
}

/// The event a change of `spec` to `value` sends, in the reference's shape for that setting.
fn setting_event(spec: &RealmSetting, value: &Value) -> parley_events::Event {
    let mut data = Map::new();
    data.insert(spec.name.to_owned(), value.clone());
    if spec.name == "topics_policy" {
        let mandatory = value.as_str() == Some("disable_empty_topic");
        data.insert("mandatory_topics".into(), mandatory.into());
    }
    match spec.event {
        EventStyle::UpdateDict => realm_update_dict(data),
        EventStyle::Update => realm_update(spec.name, value.clone()),
    }
}

/// The reference's canonical form: an anonymous setting of exactly one group is that group,
/// and an empty one is `role:nobody`.
fn normalize(setting: GroupSetting, groups: &GroupGraph) -> GroupSetting {
    match setting {
        GroupSetting::Anonymous {
            direct_members,
            direct_subgroups,
        } if direct_members.is_empty() && direct_subgroups.len() <= 1 => {
            match direct_subgroups.first().copied() {
                Some(id) => GroupSetting::Group(id),
                None => match groups.system_id(SystemGroup::Nobody) {
                    Some(nobody) => GroupSetting::Group(nobody),
                    None => GroupSetting::Anonymous {
                        direct_members,
                        direct_subgroups,
                    },
                },
            }
        }
        other => other,
    }
}

/// Checks a new group-setting value: the groups exist, the users are active, and no system
/// group the setting does not allow (`role:internet` never; `role:everyone` only where guests
/// may hold the permission) is named.
fn check_group_setting(
    conn: &mut DbConn,
    groups: &GroupGraph,
    name: &str,
    setting: &GroupSetting,
) -> ActionResult<()> {
    if !RealmPolicy::GROUP_SETTINGS.contains(&name) {
        return Err(RequestError::invalid_param(name, format!("Invalid {name}")).into());
    }
    groups.check_setting(setting, name)?;
    check_direct_members(conn, setting, name)?;
    for system in [SystemGroup::Internet, SystemGroup::Everyone] {
        let named = groups
            .system_id(system)
            .is_some_and(|id| setting.groups().contains(&id));
        if named && !group_setting_allows(name, system) {
            return Err(RequestError::invalid_param(
                name,
                format!(
                    "'{name}' setting cannot be set to '{}' group.",
                    system.name()
                ),
            )
            .into());
        }
    }
    if name == "can_access_all_users_group" {
        let allowed = [SystemGroup::Everyone, SystemGroup::Members]
            .into_iter()
            .filter_map(|g| groups.system_id(g))
            .any(|id| *setting == GroupSetting::Group(id));
        if !allowed {
            return Err(RequestError::invalid_param(
                name,
                format!("'{name}' must be set to a system group."),
            )
            .into());
        }
    }
    Ok(())
}

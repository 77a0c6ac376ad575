//! `user_group` events and the group object they (and the snapshot and `GET /user_groups`)
//! carry. Clients without the `include_deactivated_groups` capability never see deactivated
//! groups: they get `remove` instead of the deactivation `update`, `add` instead of the
//! reactivation `update`, and nothing when a deactivated group is renamed.

use parley_domain::group_permissions::GroupSettings;
use parley_domain::groups::{GroupGraph, GroupId, GroupSetting, SystemGroup};
use parley_domain::user::User;
use parley_domain::{Role, UserId};
use parley_events::{Body, Capability, Event};
use parley_storage::groups::GroupRow;
use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// The direct members of a system group: users whose role the group holds and no smaller
/// system group inside it holds (the reference nests system groups).
pub fn system_members(group: SystemGroup, everyone: &[User]) -> Vec<UserId> {
    let role_group = |role: Role| match role {
        Role::Member => SystemGroup::FullMembers,
        other => SystemGroup::for_role(other),
    };
    everyone
        .iter()
        .filter(|u| u.is_active && role_group(u.role) == group)
        .map(|u| u.id)
        .collect()
}

/// The system group nested directly inside another.
pub fn system_subgroup(group: SystemGroup) -> Option<SystemGroup> {
    match group {
        SystemGroup::Internet => Some(SystemGroup::Everyone),
        SystemGroup::Everyone => Some(SystemGroup::Members),
        SystemGroup::Members => Some(SystemGroup::FullMembers),
        SystemGroup::FullMembers => Some(SystemGroup::Moderators),
        SystemGroup::Moderators => Some(SystemGroup::Administrators),
        SystemGroup::Administrators => Some(SystemGroup::Owners),
        SystemGroup::Owners | SystemGroup::Nobody => None,
    }
}

/// A group's direct members (active users only, ascending) and direct subgroups (ascending),
/// system groups included.
pub fn direct_members_and_subgroups(
    graph: &GroupGraph,
    id: GroupId,
    everyone: &[User],
) -> (Vec<UserId>, Vec<GroupId>) {
    let (mut members, mut subgroups) = match graph.system.get(&id) {
        Some(system) => (
            system_members(*system, everyone),
            system_subgroup(*system)
                .and_then(|g| graph.system_id(g))
                .into_iter()
                .collect(),
        ),
        None => {
            let active: HashSet<UserId> = everyone
                .iter()
                .filter(|u| u.is_active)
                .map(|u| u.id)
                .collect();
            let members: Vec<UserId> = graph
                .members
                .get(&id)
                .map(|m| m.iter().copied().filter(|u| active.contains(u)).collect())
                .unwrap_or_default();
            (
                members,
                graph.subgroups.get(&id).cloned().unwrap_or_default(),
            )
        }
    };
    members.sort();
    subgroups.sort();
    (members, subgroups)
}

/// A group's permission settings from its stored row.
pub fn settings_of(row: &GroupRow, graph: &GroupGraph) -> GroupSettings {
    GroupSettings::from_stored(
        row.settings_array(),
        graph,
        row.creator_id.map(UserId),
        row.is_system_group,
    )
}

/// A group-setting value as the API shows it: anonymous groups list only active users, and
/// both lists are sorted.
pub fn setting_value(setting: &GroupSetting, active: &HashSet<UserId>) -> Value {
    match setting {
        GroupSetting::Group(id) => json!(id),
        GroupSetting::Anonymous {
            direct_members,
            direct_subgroups,
        } => {
            let mut members: Vec<UserId> = direct_members
                .iter()
                .copied()
                .filter(|u| active.contains(u))
                .collect();
            members.sort();
            members.dedup();
            let mut subgroups = direct_subgroups.clone();
            subgroups.sort();
            subgroups.dedup();
            json!({"direct_members": members, "direct_subgroups": subgroups})
        }
    }
}

/// The group object of `realm_user_groups`, `GET /user_groups` and the `add` event.
pub fn group_json(row: &GroupRow, graph: &GroupGraph, everyone: &[User]) -> Value {
    let id = GroupId(row.id);
    let (members, subgroups) = direct_members_and_subgroups(graph, id, everyone);
    let active: HashSet<UserId> = everyone
        .iter()
        .filter(|u| u.is_active)
        .map(|u| u.id)
        .collect();
    let mut object = Map::new();
    object.insert("id".into(), json!(row.id));
    object.insert("name".into(), json!(row.name));
    object.insert("description".into(), json!(row.description));
    object.insert("members".into(), json!(members));
    object.insert("direct_subgroup_ids".into(), json!(subgroups));
    object.insert("is_system_group".into(), json!(row.is_system_group));
    object.insert("deactivated".into(), json!(row.deactivated));
    object.insert("date_created".into(), json!(row.date_created));
    object.insert("creator_id".into(), json!(row.creator_id));
    for (name, value) in settings_of(row, graph).iter() {
        object.insert(name.into(), setting_value(value, &active));
    }
    Value::Object(object)
}

/// `user_group` `add` with the group object, to everyone.
pub fn group_added(group: Value) -> Event {
    Event::everyone(Body::json(json!({
        "type": "user_group",
        "op": "add",
        "group": group,
    })))
}

/// `user_group` `update` with the changed fields in `data`, to everyone. A rename of a
/// deactivated group reaches only clients that handle deactivated groups.
pub fn group_updated(id: GroupId, data: Map<String, Value>, deactivated: bool) -> Event {
    let renamed = data.contains_key("name");
    let body = Body::json(json!({
        "type": "user_group",
        "op": "update",
        "group_id": id,
        "data": data,
    }));
    if renamed && deactivated {
        Event::everyone(Body::by_capability(
            Capability::IncludeDeactivatedGroups,
            body,
            None,
        ))
    } else {
        Event::everyone(body)
    }
}

/// A deactivation: `update` with `data: {deactivated: true}` for clients that handle
/// deactivated groups, `remove` for the others.
pub fn group_deactivated(id: GroupId) -> Event {
    let update = Body::json(json!({
        "type": "user_group",
        "op": "update",
        "group_id": id,
        "data": {"deactivated": true},
    }));
    let remove = Body::json(json!({
        "type": "user_group",
        "op": "remove",
        "group_id": id,
    }));
    Event::everyone(Body::by_capability(
        Capability::IncludeDeactivatedGroups,
        update,
        Some(remove),
    ))
}

/// A reactivation: `update` with `data: {deactivated: false}` for clients that handle
/// deactivated groups, `add` with the whole group for the others (who had removed it).
pub fn group_reactivated(id: GroupId, group: Value) -> Event {
    let update = Body::json(json!({
        "type": "user_group",
        "op": "update",
        "group_id": id,
        "data": {"deactivated": false},
    }));
    let add = Body::json(json!({
        "type": "user_group",
        "op": "add",
        "group": group,
    }));
    Event::everyone(Body::by_capability(
        Capability::IncludeDeactivatedGroups,
        update,
        Some(add),
    ))
}

/// `user_group` `add_members` / `remove_members` with `user_ids`, to everyone.
pub fn members_changed(id: GroupId, added: bool, users: &[UserId]) -> Event {
    let op = if added {
        "add_members"
    } else {
        "remove_members"
    };
    Event::everyone(Body::json(json!({
        "type": "user_group",
        "op": op,
        "group_id": id,
        "user_ids": users,
    })))
}

/// `user_group` `add_subgroups` / `remove_subgroups` with `direct_subgroup_ids`, to everyone.
pub fn subgroups_changed(id: GroupId, added: bool, subgroups: &[GroupId]) -> Event {
    let op = if added {
        "add_subgroups"
    } else {
        "remove_subgroups"
    };
    Event::everyone(Body::json(json!({
        "type": "user_group",
        "op": op,
        "group_id": id,
        "direct_subgroup_ids": subgroups,
    })))
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

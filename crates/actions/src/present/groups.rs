//! User groups as the API shows them, and the membership rules the objects show: system
//! groups get their members from roles and nest inside each other.

use parley_domain::group_permissions::GroupSettings;
use parley_domain::groups::{GroupGraph, GroupId, GroupSetting, SystemGroup};
use parley_domain::user::User;
use parley_domain::UserId;
use parley_storage::groups::{self, GroupRow};
use parley_storage::{DbConn, StorageError};
use parley_wire::UserGroup;
use std::collections::HashSet;

/// The direct members of a system group: users whose role the group holds and no smaller
/// system group inside it holds (the reference nests system groups); members still in their
/// waiting period are in `role:members`, the others in `role:fullmembers`.
pub fn system_members(graph: &GroupGraph, group: SystemGroup, everyone: &[User]) -> Vec<UserId> {
    everyone
        .iter()
        .filter(|u| u.is_active && graph.direct_system_group(u) == group)
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
            system_members(graph, *system, everyone),
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
pub fn setting_value(setting: &GroupSetting, active: &HashSet<UserId>) -> GroupSetting {
    match setting {
        GroupSetting::Group(id) => GroupSetting::Group(*id),
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
            GroupSetting::Anonymous {
                direct_members: members,
                direct_subgroups: subgroups,
            }
        }
    }
}

/// The group object of `realm_user_groups`, `GET /user_groups` and the `add` event.
pub fn group_object(row: &GroupRow, graph: &GroupGraph, everyone: &[User]) -> UserGroup {
    let id = GroupId(row.id);
    let (members, direct_subgroup_ids) = direct_members_and_subgroups(graph, id, everyone);
    let active: HashSet<UserId> = everyone
        .iter()
        .filter(|u| u.is_active)
        .map(|u| u.id)
        .collect();
    UserGroup {
        id,
        name: row.name.clone(),
        description: row.description.clone(),
        members,
        direct_subgroup_ids,
        is_system_group: row.is_system_group,
        deactivated: row.deactivated,
        date_created: Some(row.date_created),
        creator_id: row.creator_id,
        settings: settings_of(row, graph)
            .iter()
            .map(|(name, value)| (name, setting_value(value, &active)))
            .collect(),
    }
}

/// Every group as `realm_user_groups` lists it (deactivated ones included; the caller drops
/// them for clients without `include_deactivated_groups`).
pub fn group_objects(
    conn: &mut DbConn,
    graph: &GroupGraph,
    everyone: &[User],
) -> Result<Vec<UserGroup>, StorageError> {
    Ok(groups::rows(conn)?
        .iter()
        .map(|row| group_object(row, graph, everyone))
        .collect())
}

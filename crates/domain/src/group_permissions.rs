//! The permission settings of user groups (`can_manage_group`, `can_add_members_group`, ...) and
//! the rules that decide who may change a group, as the reference server decides them: system
//! groups are never changed directly; the organization's `can_manage_all_groups` and the group's
//! own `can_manage_group` grant everything; otherwise the specific setting decides. Settings
//! that do not allow `role:everyone` never grant anything to guests.

use crate::error::RequestError;
use crate::groups::{GroupGraph, GroupId, GroupSetting, SystemGroup};
use crate::ids::UserId;
use crate::user::User;

/// The longest group name, in characters.
pub const MAX_GROUP_NAME_LENGTH: usize = 100;

/// Prefixes a user group's name may not start with (they would read as system groups or
/// mention syntax).
pub const INVALID_NAME_PREFIXES: [&str; 5] = ["@", "role:", "user:", "stream:", "channel:"];

/// What a setting defaults to for a new user group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingDefault {
    /// An anonymous group holding only the group's creator.
    Creator,
    /// A system group.
    System(SystemGroup),
}

/// How one group permission setting behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupSettingConfig {
    /// The API name, e.g. `can_manage_group`.
    pub name: &'static str,
    /// Whether `role:everyone` may hold it (if not, guests never hold it).
    pub allow_everyone_group: bool,
    /// The value for a new user group when the request does not give one.
    pub default: SettingDefault,
}

/// Every user group setting, in the order the API lists them.
pub const GROUP_SETTINGS: [GroupSettingConfig; 6] = [
    GroupSettingConfig {
        name: "can_add_members_group",
        allow_everyone_group: false,
        default: SettingDefault::Creator,
    },
    GroupSettingConfig {
        name: "can_join_group",
        allow_everyone_group: false,
        default: SettingDefault::System(SystemGroup::Nobody),
    },
    GroupSettingConfig {
        name: "can_leave_group",
        allow_everyone_group: true,
        default: SettingDefault::System(SystemGroup::Everyone),
    },
    GroupSettingConfig {
        name: "can_manage_group",
        allow_everyone_group: false,
        default: SettingDefault::Creator,
    },
    GroupSettingConfig {
        name: "can_mention_group",
        allow_everyone_group: true,
        default: SettingDefault::System(SystemGroup::Everyone),
    },
    GroupSettingConfig {
        name: "can_remove_members_group",
        allow_everyone_group: false,
        default: SettingDefault::System(SystemGroup::Nobody),
    },
];

/// The configuration of the setting called `name`.
pub fn setting_config(name: &str) -> Option<&'static GroupSettingConfig> {
    GROUP_SETTINGS.iter().find(|c| c.name == name)
}

/// A user group's permission settings, in the order of [`GROUP_SETTINGS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSettings(pub [GroupSetting; 6]);

impl GroupSettings {
    /// The settings of a new group: `given` where a value was sent, the defaults otherwise.
    /// System groups default every setting to `role:nobody`.
    pub fn with_defaults(
        given: &[(String, GroupSetting)],
        graph: &GroupGraph,
        creator: Option<UserId>,
        is_system: bool,
    ) -> GroupSettings {
        let nobody = graph
            .system_id(SystemGroup::Nobody)
            .map(GroupSetting::Group)
            .unwrap_or_else(empty_setting);
        GroupSettings(GROUP_SETTINGS.map(|config| {
            if let Some((_, value)) = given.iter().find(|(n, _)| n == config.name) {
                return value.clone();
            }
            if is_system {
                return nobody.clone();
            }
            match config.default {
                SettingDefault::Creator => GroupSetting::Anonymous {
                    direct_members: creator.into_iter().collect(),
                    direct_subgroups: Vec::new(),
                },
                SettingDefault::System(group) => graph
                    .system_id(group)
                    .map(GroupSetting::Group)
                    .unwrap_or_else(empty_setting),
            }
        }))
    }

    /// The stored settings (JSON text or None, in [`GROUP_SETTINGS`] order); values that are
    /// missing or unreadable take the defaults.
    pub fn from_stored(
        stored: [Option<&str>; 6],
        graph: &GroupGraph,
        creator: Option<UserId>,
        is_system: bool,
    ) -> GroupSettings {
        let defaults = GroupSettings::with_defaults(&[], graph, creator, is_system);
        let mut values = defaults.0;
        for (slot, text) in values.iter_mut().zip(stored) {
            if let Some(value) = text.and_then(GroupSetting::from_json) {
                *slot = value;
            }
        }
        GroupSettings(values)
    }

    /// The setting called `name`.
    pub fn get(&self, name: &str) -> Option<&GroupSetting> {
        GROUP_SETTINGS
            .iter()
            .position(|c| c.name == name)
            .map(|i| &self.0[i])
    }

    /// Replaces the setting called `name`; false when there is no such setting.
    pub fn set(&mut self, name: &str, value: GroupSetting) -> bool {
        match GROUP_SETTINGS.iter().position(|c| c.name == name) {
            Some(i) => {
                self.0[i] = value;
                true
            }
            None => false,
        }
    }

    /// `(name, value)` pairs in API order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &GroupSetting)> {
        GROUP_SETTINGS.iter().map(|c| c.name).zip(self.0.iter())
    }
}

fn empty_setting() -> GroupSetting {
    GroupSetting::Anonymous {
        direct_members: Vec::new(),
        direct_subgroups: Vec::new(),
    }
}

/// The reference's canonical form of a group-setting value: an anonymous group of exactly one
/// subgroup and no users is that group; an empty anonymous group is `role:nobody`.
pub fn normalize_setting(value: GroupSetting, graph: &GroupGraph) -> GroupSetting {
    match value {
        GroupSetting::Anonymous {
            direct_members,
            direct_subgroups,
        } if direct_members.is_empty() && direct_subgroups.len() <= 1 => {
            match direct_subgroups.first() {
                Some(group) => GroupSetting::Group(*group),
                None => match graph.system_id(SystemGroup::Nobody) {
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

/// Whether two group-setting values name the same set (order and duplicates ignored), as the
/// `old` check of an update compares them.
pub fn same_setting(a: &GroupSetting, b: &GroupSetting) -> bool {
    match (a, b) {
        (GroupSetting::Group(x), GroupSetting::Group(y)) => x == y,
        (
            GroupSetting::Anonymous {
                direct_members: m1,
                direct_subgroups: s1,
            },
            GroupSetting::Anonymous {
                direct_members: m2,
                direct_subgroups: s2,
            },
        ) => {
            let set = |v: &[i64]| v.iter().copied().collect::<std::collections::BTreeSet<_>>();
            let users = |v: &[UserId]| set(&v.iter().map(|u| u.0).collect::<Vec<_>>());
            let groups = |v: &[GroupId]| set(&v.iter().map(|g| g.0).collect::<Vec<_>>());
            users(m1) == users(m2) && groups(s1) == groups(s2)
        }
        _ => false,
    }
}

/// Checks the system groups a setting may not name: never `role:internet`, and
/// `role:everyone` only where the setting allows it.
pub fn check_setting_value(
    config: &GroupSettingConfig,
    value: &GroupSetting,
    graph: &GroupGraph,
) -> Result<(), RequestError> {
    if let GroupSetting::Group(id) = value {
        match graph.system.get(id) {
            Some(SystemGroup::Internet) => {
                return Err(RequestError::invalid_param(
                    config.name,
                    format!(
                        "'{}' setting cannot be set to 'role:internet' group.",
                        config.name
                    ),
                ))
            }
            Some(SystemGroup::Everyone) if !config.allow_everyone_group => {
                return Err(RequestError::invalid_param(
                    config.name,
                    format!(
                        "'{}' setting cannot be set to 'role:everyone' group.",
                        config.name
                    ),
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Checks a user group name: not blank, at most [`MAX_GROUP_NAME_LENGTH`] characters, no
/// reserved prefix. Returns it unchanged (the reference does not trim it).
pub fn check_group_name(name: &str) -> Result<&str, RequestError> {
    if name.trim().is_empty() {
        return Err(RequestError::invalid_param(
            "name",
            "User group name can't be empty!",
        ));
    }
    if name.chars().count() > MAX_GROUP_NAME_LENGTH {
        return Err(RequestError::invalid_param(
            "name",
            format!("User group name cannot exceed {MAX_GROUP_NAME_LENGTH} characters."),
        ));
    }
    if let Some(prefix) = INVALID_NAME_PREFIXES.iter().find(|p| name.starts_with(**p)) {
        return Err(RequestError::invalid_param(
            "name",
            format!("User group name cannot start with '{prefix}'."),
        ));
    }
    Ok(name)
}

/// Whether `user` holds a group permission setting: guests never hold settings that do not
/// allow `role:everyone`.
pub fn holds(
    graph: &GroupGraph,
    config: &GroupSettingConfig,
    value: &GroupSetting,
    user: &User,
) -> bool {
    if !config.allow_everyone_group && user.role.is_guest() {
        return false;
    }
    graph.setting_contains(value, user)
}

/// Whether `user` may manage every group (the organization's `can_manage_all_groups`, which
/// guests never hold).
pub fn can_manage_all_groups(
    graph: &GroupGraph,
    can_manage_all: &GroupSetting,
    user: &User,
) -> bool {
    !user.role.is_guest() && graph.setting_contains(can_manage_all, user)
}

/// What a caller wants to do to a user group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupAction {
    /// Rename, describe, change settings, deactivate, remove subgroups.
    Manage,
    /// Add other users or subgroups.
    AddMembers,
    /// Remove other users.
    RemoveMembers,
    /// Add oneself.
    Join,
    /// Remove oneself.
    Leave,
}

impl GroupAction {
    /// The group setting that grants this action besides `can_manage_group`.
    pub fn setting_name(self) -> &'static str {
        match self {
            GroupAction::Manage => "can_manage_group",
            GroupAction::AddMembers => "can_add_members_group",
            GroupAction::RemoveMembers => "can_remove_members_group",
            GroupAction::Join => "can_join_group",
            GroupAction::Leave => "can_leave_group",
        }
    }
}

/// Whether `user` may do `action` to a user group with `settings`, ignoring whether the group is
/// a system group (see [`check_group_action`]). Precedence: the organization's
/// `can_manage_all_groups`, then the group's `can_manage_group`, then the action's own setting.
pub fn may_act(
    graph: &GroupGraph,
    can_manage_all: &GroupSetting,
    settings: &GroupSettings,
    user: &User,
    action: GroupAction,
) -> bool {
    if can_manage_all_groups(graph, can_manage_all, user) {
        return true;
    }
    let check = |name: &str| match (setting_config(name), settings.get(name)) {
        (Some(config), Some(value)) => holds(graph, config, value, user),
        _ => false,
    };
    if check("can_manage_group") {
        return true;
    }
    action != GroupAction::Manage && check(action.setting_name())
}

/// Like [`may_act`], but refuses system groups and answers with the reference's error
/// ("Insufficient permission").
pub fn check_group_action(
    graph: &GroupGraph,
    can_manage_all: &GroupSetting,
    group: GroupId,
    settings: &GroupSettings,
    user: &User,
    action: GroupAction,
) -> Result<(), RequestError> {
    if graph.system.contains_key(&group) || !may_act(graph, can_manage_all, settings, user, action)
    {
        return Err(RequestError::insufficient_permission());
    }
    Ok(())
}

/// The IDs of `group`'s subgroups, direct and nested (not `group` itself unless it is in a
/// cycle), in ascending order.
pub fn recursive_subgroups(graph: &GroupGraph, group: GroupId) -> Vec<GroupId> {
    let mut seen = std::collections::BTreeSet::new();
    let mut stack: Vec<GroupId> = graph.subgroups.get(&group).cloned().unwrap_or_default();
    while let Some(g) = stack.pop() {
        if seen.insert(g) {
            stack.extend(graph.subgroups.get(&g).cloned().unwrap_or_default());
        }
    }
    seen.into_iter().collect()
}

/// Whether making `subgroups` subgroups of `group` would make a cycle: `group` is one of them
/// or is (transitively) inside one of them.
pub fn would_cycle(graph: &GroupGraph, group: GroupId, subgroups: &[GroupId]) -> bool {
    subgroups
        .iter()
        .any(|s| *s == group || recursive_subgroups(graph, *s).contains(&group))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::role::Role;
    use crate::testing::{graph, user};

    fn sys(g: &GroupGraph, s: SystemGroup) -> GroupSetting {
        GroupSetting::Group(g.system_id(s).unwrap())
    }

    #[test]
    fn defaults_follow_the_reference() {
        let g = graph();
        let s = GroupSettings::with_defaults(&[], &g, Some(UserId(5)), false);
        let creator = GroupSetting::Anonymous {
            direct_members: vec![UserId(5)],
            direct_subgroups: vec![],
        };
        assert_eq!(s.get("can_manage_group"), Some(&creator));
        assert_eq!(s.get("can_add_members_group"), Some(&creator));
        assert_eq!(s.get("can_join_group"), Some(&sys(&g, SystemGroup::Nobody)));
        assert_eq!(
            s.get("can_leave_group"),
            Some(&sys(&g, SystemGroup::Everyone))
        );
        assert_eq!(
            s.get("can_mention_group"),
            Some(&sys(&g, SystemGroup::Everyone))
        );
        assert_eq!(
            s.get("can_remove_members_group"),
            Some(&sys(&g, SystemGroup::Nobody))
        );
        let system = GroupSettings::with_defaults(&[], &g, None, true);
        assert!(system
            .iter()
            .all(|(_, v)| *v == sys(&g, SystemGroup::Nobody)));
        let given = vec![(
            "can_join_group".to_owned(),
            GroupSetting::Group(GroupId(20)),
        )];
        let s = GroupSettings::with_defaults(&given, &g, None, false);
        assert_eq!(
            s.get("can_join_group"),
            Some(&GroupSetting::Group(GroupId(20)))
        );
        let stored = GroupSettings::from_stored(
            [None, Some("20"), None, None, None, Some("x")],
            &g,
            None,
            false,
        );
        assert_eq!(
            stored.get("can_join_group"),
            Some(&GroupSetting::Group(GroupId(20)))
        );
        assert_eq!(
            stored.get("can_remove_members_group"),
            Some(&sys(&g, SystemGroup::Nobody))
        );
    }

    #[test]
    fn precedence_manage_all_then_manage_then_specific() {
        let g = graph();
        let nobody = sys(&g, SystemGroup::Nobody);
        let admins = sys(&g, SystemGroup::Administrators);
        let mut s = GroupSettings::with_defaults(&[], &g, Some(UserId(1)), false);
        // The creator manages the group and so may do everything.
        let creator = user(1, Role::Member);
        for action in [
            GroupAction::Manage,
            GroupAction::AddMembers,
            GroupAction::RemoveMembers,
            GroupAction::Join,
            GroupAction::Leave,
        ] {
            assert!(may_act(&g, &nobody, &s, &creator, action));
        }
        // An admin through can_manage_all_groups.
        let admin = user(2, Role::Administrator);
        assert!(!may_act(&g, &nobody, &s, &admin, GroupAction::Manage));
        assert!(may_act(&g, &admins, &s, &admin, GroupAction::Manage));
        // A member of the nested subgroup 21 through can_add_members_group = 20.
        s.set("can_add_members_group", GroupSetting::Group(GroupId(20)));
        let nested = user(8, Role::Member);
        assert!(may_act(&g, &nobody, &s, &nested, GroupAction::AddMembers));
        assert!(!may_act(&g, &nobody, &s, &nested, GroupAction::Manage));
        assert!(!may_act(
            &g,
            &nobody,
            &s,
            &nested,
            GroupAction::RemoveMembers
        ));
        // Everyone may leave by default, guests included (the setting allows everyone)...
        let guest = user(3, Role::Guest);
        assert!(may_act(&g, &nobody, &s, &guest, GroupAction::Leave));
        // ...but guests never join through a setting that does not allow everyone.
        s.set(
            "can_join_group",
            GroupSetting::Anonymous {
                direct_members: vec![UserId(3)],
                direct_subgroups: vec![],
            },
        );
        assert!(!may_act(&g, &nobody, &s, &guest, GroupAction::Join));
        let everyone = sys(&g, SystemGroup::Everyone);
        assert!(!may_act(&g, &everyone, &s, &guest, GroupAction::Manage));
        // System groups are refused whatever the settings say.
        let err = check_group_action(&g, &admins, GroupId(2), &s, &admin, GroupAction::Manage)
            .unwrap_err();
        assert_eq!(err.msg, "Insufficient permission");
        assert!(
            check_group_action(&g, &admins, GroupId(20), &s, &admin, GroupAction::Manage).is_ok()
        );
    }

    #[test]
    fn names_are_checked() {
        assert!(check_group_name("support").is_ok());
        assert_eq!(
            check_group_name("  ").unwrap_err().msg,
            "User group name can't be empty!"
        );
        assert_eq!(
            check_group_name("role:x").unwrap_err().msg,
            "User group name cannot start with 'role:'."
        );
        assert!(check_group_name("@x").is_err());
        assert!(check_group_name(&"a".repeat(100)).is_ok());
        assert_eq!(
            check_group_name(&"a".repeat(101)).unwrap_err().msg,
            "User group name cannot exceed 100 characters."
        );
    }

    #[test]
    fn values_normalize_compare_and_are_checked() {
        let g = graph();
        let one = GroupSetting::Anonymous {
            direct_members: vec![],
            direct_subgroups: vec![GroupId(20)],
        };
        assert_eq!(normalize_setting(one, &g), GroupSetting::Group(GroupId(20)));
        let none = GroupSetting::Anonymous {
            direct_members: vec![],
            direct_subgroups: vec![],
        };
        assert_eq!(normalize_setting(none, &g), sys(&g, SystemGroup::Nobody));
        let a = GroupSetting::Anonymous {
            direct_members: vec![UserId(2), UserId(1)],
            direct_subgroups: vec![GroupId(20)],
        };
        let b = GroupSetting::Anonymous {
            direct_members: vec![UserId(1), UserId(2)],
            direct_subgroups: vec![GroupId(20)],
        };
        assert!(same_setting(&a, &b));
        assert!(!same_setting(&a, &GroupSetting::Group(GroupId(20))));
        let join = setting_config("can_join_group").unwrap();
        let leave = setting_config("can_leave_group").unwrap();
        let everyone = sys(&g, SystemGroup::Everyone);
        assert!(check_setting_value(join, &everyone, &g).is_err());
        assert!(check_setting_value(leave, &everyone, &g).is_ok());
        assert!(check_setting_value(leave, &sys(&g, SystemGroup::Internet), &g).is_err());
    }

    #[test]
    fn cycles_are_detected_transitively() {
        let g = graph();
        assert_eq!(recursive_subgroups(&g, GroupId(20)), vec![GroupId(21)]);
        assert!(would_cycle(&g, GroupId(21), &[GroupId(20)]));
        assert!(would_cycle(&g, GroupId(20), &[GroupId(20)]));
        assert!(!would_cycle(&g, GroupId(20), &[GroupId(22)]));
        assert!(!would_cycle(&g, GroupId(22), &[GroupId(20)]));
    }
}

//! User groups and group-setting values: who a permission such as `can_send_message_group`
//! names. A setting is either one group (a system group like `role:members`, or a user group) or
//! an anonymous set of direct members and subgroups. System groups have no stored members: their
//! membership follows from each user's role, so it can never drift from the roles.

use crate::error::RequestError;
use crate::ids::UserId;
use crate::role::Role;
use crate::user::User;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// A user group's ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GroupId(pub i64);

/// The system groups every organization has, named as the API names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SystemGroup {
    /// Everyone, including people without an account (spectators).
    Internet,
    /// Every user, guests included.
    Everyone,
    /// Every user but guests.
    Members,
    /// Members whose account is older than the organization's `waiting_period_threshold` (in
    /// days), and moderators and above.
    FullMembers,
    /// Moderators and above.
    Moderators,
    /// Administrators and owners.
    Administrators,
    /// Owners.
    Owners,
    /// Nobody.
    Nobody,
}

impl SystemGroup {
    /// Every system group, in the order they are created.
    pub const ALL: [SystemGroup; 8] = [
        SystemGroup::Internet,
        SystemGroup::Everyone,
        SystemGroup::Members,
        SystemGroup::FullMembers,
        SystemGroup::Moderators,
        SystemGroup::Administrators,
        SystemGroup::Owners,
        SystemGroup::Nobody,
    ];

    /// The API name, such as `role:members`.
    pub fn name(self) -> &'static str {
        match self {
            SystemGroup::Internet => "role:internet",
            SystemGroup::Everyone => "role:everyone",
            SystemGroup::Members => "role:members",
            SystemGroup::FullMembers => "role:fullmembers",
            SystemGroup::Moderators => "role:moderators",
            SystemGroup::Administrators => "role:administrators",
            SystemGroup::Owners => "role:owners",
            SystemGroup::Nobody => "role:nobody",
        }
    }

    /// The description the reference server gives each system group.
    pub fn description(self) -> &'static str {
        match self {
            SystemGroup::Internet => "Everyone on the Internet",
            SystemGroup::Everyone => "Everyone including guests",
            SystemGroup::Members => "Everyone except guests",
            SystemGroup::FullMembers => {
                "Members of this organization, not including new accounts and guests"
            }
            SystemGroup::Moderators => "Organization moderators",
            SystemGroup::Administrators => "Organization administrators",
            SystemGroup::Owners => "Owners of this organization",
            SystemGroup::Nobody => "Nobody",
        }
    }

    /// The system group with this API name.
    pub fn from_name(name: &str) -> Option<SystemGroup> {
        SystemGroup::ALL.into_iter().find(|g| g.name() == name)
    }

    /// Whether a user with `role` belongs to this group, for a full member when the group is
    /// `role:fullmembers` (see [`GroupGraph::in_system_group`] for the waiting period).
    pub fn contains_role(self, role: Role) -> bool {
        match self {
            SystemGroup::Internet | SystemGroup::Everyone => true,
            SystemGroup::Members | SystemGroup::FullMembers => !role.is_guest(),
            SystemGroup::Moderators => role.is_moderator_or_above(),
            SystemGroup::Administrators => role.is_admin(),
            SystemGroup::Owners => role.is_owner(),
            SystemGroup::Nobody => false,
        }
    }

    /// The smallest system group holding exactly the roles at least as powerful as `role`.
    pub fn for_role(role: Role) -> SystemGroup {
        match role {
            Role::Owner => SystemGroup::Owners,
            Role::Administrator => SystemGroup::Administrators,
            Role::Moderator => SystemGroup::Moderators,
            Role::Member => SystemGroup::Members,
            Role::Guest => SystemGroup::Everyone,
        }
    }
}

/// A group-setting value as the API sends it: a group ID, or direct members and subgroups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum GroupSetting {
    /// One named group.
    Group(GroupId),
    /// An anonymous group.
    Anonymous {
        /// Users named directly.
        direct_members: Vec<UserId>,
        /// Groups whose members are included.
        direct_subgroups: Vec<GroupId>,
    },
}

impl GroupSetting {
    /// Every group the setting refers to.
    pub fn groups(&self) -> Vec<GroupId> {
        match self {
            GroupSetting::Group(id) => vec![*id],
            GroupSetting::Anonymous {
                direct_subgroups, ..
            } => direct_subgroups.clone(),
        }
    }

    /// Every user the setting names directly.
    pub fn direct_members(&self) -> &[UserId] {
        match self {
            GroupSetting::Group(_) => &[],
            GroupSetting::Anonymous { direct_members, .. } => direct_members,
        }
    }

    /// The stored form: the JSON the API uses.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "null".to_owned())
    }

    /// Parses the stored form.
    pub fn from_json(text: &str) -> Option<GroupSetting> {
        serde_json::from_str(text).ok()
    }
}

/// The organization's groups: which are system groups, and the members and subgroups of the
/// others. Loaded once per check; small even for large organizations.
#[derive(Debug, Clone, Default)]
pub struct GroupGraph {
    /// System groups by ID.
    pub system: HashMap<GroupId, SystemGroup>,
    /// Direct members of user groups.
    pub members: HashMap<GroupId, HashSet<UserId>>,
    /// Direct subgroups of user groups.
    pub subgroups: HashMap<GroupId, Vec<GroupId>>,
    /// Deactivated groups, which grant nothing.
    pub deactivated: HashSet<GroupId>,
    /// Members (role) whose account was created after this Unix time are still in their waiting
    /// period: in `role:members`, not yet in `role:fullmembers`. None when the organization has
    /// no waiting period.
    pub full_member_cutoff: Option<i64>,
}

/// The `full_member_cutoff` at `now` for a waiting period of `threshold_days` (0: none).
pub fn full_member_cutoff(threshold_days: i64, now: i64) -> Option<i64> {
    (threshold_days > 0).then(|| now.saturating_sub(threshold_days.saturating_mul(86_400)))
}

impl GroupGraph {
    /// The ID of a system group.
    pub fn system_id(&self, group: SystemGroup) -> Option<GroupId> {
        self.system
            .iter()
            .find(|(_, g)| **g == group)
            .map(|(id, _)| *id)
    }

    /// Whether `group` exists.
    pub fn exists(&self, group: GroupId) -> bool {
        self.system.contains_key(&group) || self.members.contains_key(&group)
    }

    /// Whether `user` belongs to `group`, directly or through subgroups. Deactivated users belong
    /// to no group.
    pub fn contains(&self, group: GroupId, user: &User) -> bool {
        if !user.is_active {
            return false;
        }
        let mut seen = HashSet::new();
        self.contains_inner(group, user, &mut seen)
    }

    fn contains_inner(&self, group: GroupId, user: &User, seen: &mut HashSet<GroupId>) -> bool {
        if !seen.insert(group) || self.deactivated.contains(&group) {
            return false;
        }
        if let Some(system) = self.system.get(&group) {
            return self.system_contains(*system, user);
        }
        if self
            .members
            .get(&group)
            .is_some_and(|m| m.contains(&user.id))
        {
            return true;
        }
        self.subgroups
            .get(&group)
            .is_some_and(|subs| subs.iter().any(|g| self.contains_inner(*g, user, seen)))
    }

    /// Whether `user` is among those a group setting names.
    pub fn setting_contains(&self, setting: &GroupSetting, user: &User) -> bool {
        if !user.is_active {
            return false;
        }
        match setting {
            GroupSetting::Group(id) => self.contains(*id, user),
            GroupSetting::Anonymous {
                direct_members,
                direct_subgroups,
            } => {
                direct_members.contains(&user.id)
                    || direct_subgroups.iter().any(|g| self.contains(*g, user))
            }
        }
    }

    /// Checks that every group a setting names exists; `var_name` is the parameter it came from.
    pub fn check_setting(
        &self,
        setting: &GroupSetting,
        var_name: &str,
    ) -> Result<(), RequestError> {
        for group in setting.groups() {
            if !self.exists(group) {
                return Err(RequestError::invalid_param(
                    var_name,
                    format!("Invalid user group ID: {}", group.0),
                ));
            }
        }
        Ok(())
    }

    /// Whether `user` is in the system group `group`.
    pub fn in_system_group(&self, group: SystemGroup, user: &User) -> bool {
        user.is_active && self.system_contains(group, user)
    }

    fn system_contains(&self, group: SystemGroup, user: &User) -> bool {
        match group {
            SystemGroup::FullMembers => self.is_full_member(user),
            other => other.contains_role(user.role),
        }
    }

    /// Whether `user` (of any state) is a full member: a moderator or above, or a member whose
    /// account has passed the waiting period, as the reference's `is_provisional_member` decides.
    pub fn is_full_member(&self, user: &User) -> bool {
        match user.role {
            Role::Guest => false,
            Role::Member => self
                .full_member_cutoff
                .is_none_or(|cutoff| user.date_joined <= cutoff),
            _ => true,
        }
    }

    /// The system group `user` is a direct member of, as the API lists system groups (each
    /// nested in the next larger one): owners, administrators, moderators, full members (members
    /// past the waiting period), members (still waiting) or everyone (guests).
    pub fn direct_system_group(&self, user: &User) -> SystemGroup {
        match user.role {
            Role::Member if self.is_full_member(user) => SystemGroup::FullMembers,
            other => SystemGroup::for_role(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::user;

    /// The shared fixture, plus a cycle (21 has subgroup 20) and 22 deactivated.
    fn graph() -> GroupGraph {
        let mut graph = crate::testing::graph();
        graph.subgroups.insert(GroupId(21), vec![GroupId(20)]);
        graph.deactivated.insert(GroupId(22));
        graph
    }

    #[test]
    fn system_group_membership_follows_roles() {
        let g = graph();
        let members = g.system_id(SystemGroup::Members).unwrap();
        let admins = g.system_id(SystemGroup::Administrators).unwrap();
        let nobody = g.system_id(SystemGroup::Nobody).unwrap();
        assert!(g.contains(members, &user(1, Role::Member)));
        assert!(!g.contains(members, &user(1, Role::Guest)));
        assert!(g.contains(admins, &user(1, Role::Owner)));
        assert!(!g.contains(admins, &user(1, Role::Moderator)));
        assert!(!g.contains(nobody, &user(1, Role::Owner)));
        let mut gone = user(1, Role::Owner);
        gone.is_active = false;
        assert!(!g.contains(admins, &gone));
    }

    #[test]
    fn subgroups_are_followed_and_cycles_terminate() {
        let g = graph();
        assert!(g.contains(GroupId(20), &user(8, Role::Member)));
        assert!(g.contains(GroupId(21), &user(7, Role::Member)));
        assert!(!g.contains(GroupId(20), &user(5, Role::Member)));
        assert!(!g.contains(GroupId(22), &user(9, Role::Member)));
    }

    #[test]
    fn anonymous_settings_and_their_json() {
        let g = graph();
        let setting: GroupSetting =
            serde_json::from_str(r#"{"direct_members":[5],"direct_subgroups":[21]}"#).unwrap();
        assert!(g.setting_contains(&setting, &user(5, Role::Guest)));
        assert!(g.setting_contains(&setting, &user(7, Role::Guest)));
        assert!(!g.setting_contains(&setting, &user(6, Role::Owner)));
        assert_eq!(
            GroupSetting::from_json(&setting.to_json()),
            Some(setting.clone())
        );
        let plain: GroupSetting = serde_json::from_str("3").unwrap();
        assert_eq!(plain, GroupSetting::Group(GroupId(3)));
        assert!(g.check_setting(&plain, "x").is_ok());
        let err = g
            .check_setting(&GroupSetting::Group(GroupId(99)), "can_send_message_group")
            .unwrap_err();
        assert_eq!(err.data["var_name"], "can_send_message_group");
    }

    #[test]
    fn full_members_wait_for_the_threshold() {
        let mut g = graph();
        let full = g.system_id(SystemGroup::FullMembers).unwrap();
        let members = g.system_id(SystemGroup::Members).unwrap();
        let mut new = user(1, Role::Member);
        new.date_joined = 1_000_000;
        assert!(g.contains(full, &new));
        g.full_member_cutoff = full_member_cutoff(3, 1_000_000 + 2 * 86_400);
        assert!(!g.contains(full, &new));
        assert!(g.contains(members, &new));
        assert_eq!(g.direct_system_group(&new), SystemGroup::Members);
        let mut moderator = new.clone();
        moderator.role = Role::Moderator;
        assert!(g.contains(full, &moderator));
        g.full_member_cutoff = full_member_cutoff(3, 1_000_000 + 3 * 86_400);
        assert!(g.contains(full, &new));
        assert_eq!(g.direct_system_group(&new), SystemGroup::FullMembers);
        assert_eq!(full_member_cutoff(0, 5), None);
        let mut guest = new.clone();
        guest.role = Role::Guest;
        assert!(!g.contains(full, &guest));
        assert_eq!(g.direct_system_group(&guest), SystemGroup::Everyone);
    }
}

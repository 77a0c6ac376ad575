//! Fixtures shared by the domain's unit tests.

use crate::groups::{GroupGraph, GroupId, SystemGroup};
use crate::ids::UserId;
use crate::role::Role;
use crate::user::{AvatarSource, EmailAddressVisibility, User};
use std::collections::HashSet;

/// An active person with this ID and role, address `u<id>@x.y`, visible to everyone.
pub(crate) fn user(id: i64, role: Role) -> User {
    User {
        id: UserId(id),
        delivery_email: format!("u{id}@x.y"),
        full_name: format!("U{id}"),
        role,
        is_active: true,
        bot_type: None,
        bot_owner_id: None,
        timezone: String::new(),
        avatar_source: AvatarSource::Gravatar,
        avatar_version: 1,
        date_joined: 0,
        email_address_visibility: EmailAddressVisibility::Everyone,
        can_create_users: false,
    }
}

/// System groups 1..=8 in `SystemGroup::ALL` order; user groups 20 = {user 7} with subgroup
/// 21 = {user 8}, and 22 = {user 9}.
pub(crate) fn graph() -> GroupGraph {
    let mut graph = GroupGraph::default();
    for (i, group) in SystemGroup::ALL.into_iter().enumerate() {
        graph.system.insert(GroupId(i as i64 + 1), group);
    }
    for (group, member) in [(20, 7), (21, 8), (22, 9)] {
        graph
            .members
            .insert(GroupId(group), HashSet::from([UserId(member)]));
    }
    graph.subgroups.insert(GroupId(20), vec![GroupId(21)]);
    graph
}

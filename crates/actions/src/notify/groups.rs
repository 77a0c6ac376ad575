//! `user_group` events (the group object they carry is built by `present::groups`). Clients
//! without the `include_deactivated_groups` capability never see deactivated groups: they get
//! `remove` instead of the deactivation `update`, `add` instead of the reactivation `update`,
//! and nothing when a deactivated group is renamed.

use super::emit::body;
use parley_domain::groups::GroupId;
use parley_domain::UserId;
use parley_events::{Body, Capability, Event};
use parley_wire as wire;
use parley_wire::event::UserGroupEvent;
use parley_wire::UserGroup;
use serde_json::{Map, Value};

/// `user_group` `add` with the group object, to everyone.
pub fn group_added(group: UserGroup) -> Event {
    Event::everyone(body(wire::Event::UserGroup(UserGroupEvent::Add { group })))
}

/// `user_group` `update` with the changed fields in `data`, to everyone. A rename of a
/// deactivated group reaches only clients that handle deactivated groups.
pub fn group_updated(id: GroupId, data: Map<String, Value>, deactivated: bool) -> Event {
    let renamed = data.contains_key("name");
    let update = body(wire::Event::UserGroup(UserGroupEvent::Update {
        group_id: id,
        data,
    }));
    if renamed && deactivated {
        Event::everyone(Body::by_capability(
            Capability::IncludeDeactivatedGroups,
            update,
            None,
        ))
    } else {
        Event::everyone(update)
    }
}

/// A deactivation: `update` with `data: {deactivated: true}` for clients that handle
/// deactivated groups, `remove` for the others.
pub fn group_deactivated(id: GroupId) -> Event {
    let update = deactivation_update(id, true);
    let remove = body(wire::Event::UserGroup(UserGroupEvent::Remove {
        group_id: id,
    }));
    Event::everyone(Body::by_capability(
        Capability::IncludeDeactivatedGroups,
        update,
        Some(remove),
    ))
}

/// A reactivation: `update` with `data: {deactivated: false}` for clients that handle
/// deactivated groups, `add` with the whole group for the others (who had removed it).
pub fn group_reactivated(id: GroupId, group: UserGroup) -> Event {
    let update = deactivation_update(id, false);
    let add = body(wire::Event::UserGroup(UserGroupEvent::Add { group }));
    Event::everyone(Body::by_capability(
        Capability::IncludeDeactivatedGroups,
        update,
        Some(add),
    ))
}

/// `user_group` `add_members` / `remove_members` with `user_ids`, to everyone.
pub fn members_changed(id: GroupId, added: bool, users: &[UserId]) -> Event {
    let user_ids = users.to_vec();
    let event = if added {
        UserGroupEvent::AddMembers {
            group_id: id,
            user_ids,
        }
    } else {
        UserGroupEvent::RemoveMembers {
            group_id: id,
            user_ids,
        }
    };
    Event::everyone(body(wire::Event::UserGroup(event)))
}

/// `user_group` `add_subgroups` / `remove_subgroups` with `direct_subgroup_ids`, to everyone.
pub fn subgroups_changed(id: GroupId, added: bool, subgroups: &[GroupId]) -> Event {
    let direct_subgroup_ids = subgroups.to_vec();
    let event = if added {
        UserGroupEvent::AddSubgroups {
            group_id: id,
            direct_subgroup_ids,
        }
    } else {
        UserGroupEvent::RemoveSubgroups {
            group_id: id,
            direct_subgroup_ids,
        }
    };
    Event::everyone(body(wire::Event::UserGroup(event)))
}

/// The `update` that (de)activates a group.
fn deactivation_update(id: GroupId, deactivated: bool) -> Body {
    let mut data = Map::new();
    data.insert("deactivated".into(), deactivated.into());
    body(wire::Event::UserGroup(UserGroupEvent::Update {
        group_id: id,
        data,
    }))
}

//! User groups: the system groups created with the organization, user groups, their members and
//! subgroups, loaded whole as a [`GroupGraph`] for permission checks.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{
    user_group_members as members, user_group_subgroups as subgroups, user_groups,
};
use diesel::prelude::*;
use parley_domain::groups::{GroupGraph, GroupId, SystemGroup};
use parley_domain::UserId;

/// Creates the system groups; returns them with their IDs.
pub fn create_system_groups(
    conn: &mut DbConn,
    now: i64,
) -> Result<Vec<(SystemGroup, GroupId)>, StorageError> {
    let mut created = Vec::new();
    for group in SystemGroup::ALL {
        let id = diesel::insert_into(user_groups::table)
            .values((
                user_groups::name.eq(group.name()),
                user_groups::description.eq(group.description()),
                user_groups::is_system_group.eq(true),
                user_groups::date_created.eq(now),
            ))
            .returning(user_groups::id)
            .get_result::<i64>(conn)?;
        created.push((group, GroupId(id)));
    }
    Ok(created)
}

/// Every group with its members and subgroups.
pub fn graph(conn: &mut DbConn) -> Result<GroupGraph, StorageError> {
    let mut graph = GroupGraph::default();
    let groups = user_groups::table
        .select((
            user_groups::id,
            user_groups::name,
            user_groups::is_system_group,
            user_groups::deactivated,
        ))
        .load::<(i64, String, bool, bool)>(conn)?;
    for (id, name, is_system, deactivated) in groups {
        let id = GroupId(id);
        match SystemGroup::from_name(&name).filter(|_| is_system) {
            Some(system) => {
                graph.system.insert(id, system);
            }
            None => {
                graph.members.entry(id).or_default();
            }
        }
        if deactivated {
            graph.deactivated.insert(id);
        }
    }
    for (group, user) in members::table
        .select((members::group_id, members::user_id))
        .load::<(i64, i64)>(conn)?
    {
        graph
            .members
            .entry(GroupId(group))
            .or_default()
            .insert(UserId(user));
    }
    for (group, sub) in subgroups::table
        .select((subgroups::group_id, subgroups::subgroup_id))
        .load::<(i64, i64)>(conn)?
    {
        graph
            .subgroups
            .entry(GroupId(group))
            .or_default()
            .push(GroupId(sub));
    }
    Ok(graph)
}

/// A group's own fields, for listing groups.
#[derive(Debug, Clone, PartialEq, Queryable)]
pub struct GroupRow {
    /// ID.
    pub id: i64,
    /// Name (`role:*` for system groups).
    pub name: String,
    /// Description.
    pub description: String,
    /// Role-based system group.
    pub is_system_group: bool,
    /// Deactivated groups keep their ID but take no new uses.
    pub deactivated: bool,
    /// Creation time, Unix seconds.
    pub date_created: i64,
    /// Who created it (None for system groups).
    pub creator_id: Option<i64>,
}

/// Every group, in ID order.
pub fn rows(conn: &mut DbConn) -> Result<Vec<GroupRow>, StorageError> {
    Ok(user_groups::table
        .order(user_groups::id)
        .select((
            user_groups::id,
            user_groups::name,
            user_groups::description,
            user_groups::is_system_group,
            user_groups::deactivated,
            user_groups::date_created,
            user_groups::creator_id,
        ))
        .load(conn)?)
}

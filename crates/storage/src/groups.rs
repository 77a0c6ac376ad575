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

/// The organization's waiting period for full membership, in days (0: none).
pub fn waiting_period_threshold(conn: &mut DbConn) -> Result<i64, StorageError> {
    let stored = crate::realms::permissions(conn)?;
    Ok(
        parley_domain::realm_settings::stored_or_default("waiting_period_threshold", &stored)
            .as_i64()
            .unwrap_or(0),
    )
}

/// Where the stored full-membership cutoff is kept (`realm_permissions`): the Unix time up to
/// which members' accounts count as full members, as last announced to clients.
pub const FULL_MEMBER_CUTOFF: &str = "full_member_cutoff";

/// The full-membership cutoff in force: None without a waiting period; else the one last
/// announced (see [`FULL_MEMBER_CUTOFF`]), or, before any was, the one of `now`.
pub fn current_full_member_cutoff(
    conn: &mut DbConn,
    now: i64,
) -> Result<Option<i64>, StorageError> {
    let stored = crate::realms::permissions(conn)?;
    let threshold =
        parley_domain::realm_settings::stored_or_default("waiting_period_threshold", &stored)
            .as_i64()
            .unwrap_or(0);
    if threshold <= 0 {
        return Ok(None);
    }
    let announced = stored
        .get(FULL_MEMBER_CUTOFF)
        .and_then(|text| text.parse::<i64>().ok());
    Ok(announced.or_else(|| parley_domain::groups::full_member_cutoff(threshold, now)))
}

/// Every group with its members and subgroups, and who is a full member (the cutoff last
/// announced, so that permissions and snapshots agree with the events clients received).
pub fn graph(conn: &mut DbConn) -> Result<GroupGraph, StorageError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let mut graph = GroupGraph {
        full_member_cutoff: current_full_member_cutoff(conn, now)?,
        ..GroupGraph::default()
    };
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
    /// The permission settings as stored (JSON group-setting values, None = the default), in
    /// the order of `parley_domain::group_permissions::GROUP_SETTINGS`.
    pub settings: StoredSettings,
}

/// The six stored permission settings of a group (see [`GroupRow::settings`]).
pub type StoredSettings = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

type RowColumns = (
    user_groups::id,
    user_groups::name,
    user_groups::description,
    user_groups::is_system_group,
    user_groups::deactivated,
    user_groups::date_created,
    user_groups::creator_id,
    (
        user_groups::can_add_members_group,
        user_groups::can_join_group,
        user_groups::can_leave_group,
        user_groups::can_manage_group,
        user_groups::can_mention_group,
        user_groups::can_remove_members_group,
    ),
);

const ROW_COLUMNS: RowColumns = (
    user_groups::id,
    user_groups::name,
    user_groups::description,
    user_groups::is_system_group,
    user_groups::deactivated,
    user_groups::date_created,
    user_groups::creator_id,
    (
        user_groups::can_add_members_group,
        user_groups::can_join_group,
        user_groups::can_leave_group,
        user_groups::can_manage_group,
        user_groups::can_mention_group,
        user_groups::can_remove_members_group,
    ),
);

impl GroupRow {
    /// The stored settings as an array, in `GROUP_SETTINGS` order.
    pub fn settings_array(&self) -> [Option<&str>; 6] {
        let s = &self.settings;
        [
            s.0.as_deref(),
            s.1.as_deref(),
            s.2.as_deref(),
            s.3.as_deref(),
            s.4.as_deref(),
            s.5.as_deref(),
        ]
    }
}

/// Every group, in ID order.
pub fn rows(conn: &mut DbConn) -> Result<Vec<GroupRow>, StorageError> {
    Ok(user_groups::table
        .order(user_groups::id)
        .select(ROW_COLUMNS)
        .load(conn)?)
}

/// One group.
pub fn row(conn: &mut DbConn, id: GroupId) -> Result<Option<GroupRow>, StorageError> {
    Ok(user_groups::table
        .filter(user_groups::id.eq(id.0))
        .select(ROW_COLUMNS)
        .first(conn)
        .optional()?)
}

/// The active, non-system group with this name (case-insensitive), for mentions.
pub fn active_user_group_by_name(
    conn: &mut DbConn,
    name: &str,
) -> Result<Option<GroupRow>, StorageError> {
    let wanted = name.to_lowercase();
    Ok(rows(conn)?
        .into_iter()
        .find(|r| !r.is_system_group && !r.deactivated && r.name.to_lowercase() == wanted))
}

/// Creates a user group with its settings (JSON, in `GROUP_SETTINGS` order); a taken name is
/// [`StorageError::UniqueViolation`].
pub fn insert_user_group(
    conn: &mut DbConn,
    name: &str,
    description: &str,
    creator: UserId,
    now: i64,
    settings: &[String; 6],
) -> Result<GroupId, StorageError> {
    let id = diesel::insert_into(user_groups::table)
        .values((
            user_groups::name.eq(name),
            user_groups::description.eq(description),
            user_groups::is_system_group.eq(false),
            user_groups::date_created.eq(now),
            user_groups::creator_id.eq(Some(creator.0)),
            user_groups::can_add_members_group.eq(Some(&settings[0])),
            user_groups::can_join_group.eq(Some(&settings[1])),
            user_groups::can_leave_group.eq(Some(&settings[2])),
            user_groups::can_manage_group.eq(Some(&settings[3])),
            user_groups::can_mention_group.eq(Some(&settings[4])),
            user_groups::can_remove_members_group.eq(Some(&settings[5])),
        ))
        .returning(user_groups::id)
        .get_result::<i64>(conn)?;
    Ok(GroupId(id))
}

/// Renames a group; a taken name is [`StorageError::UniqueViolation`].
pub fn set_name(conn: &mut DbConn, id: GroupId, name: &str) -> Result<(), StorageError> {
    diesel::update(user_groups::table.filter(user_groups::id.eq(id.0)))
        .set(user_groups::name.eq(name))
        .execute(conn)?;
    Ok(())
}

/// Changes a group's description.
pub fn set_description(conn: &mut DbConn, id: GroupId, text: &str) -> Result<(), StorageError> {
    diesel::update(user_groups::table.filter(user_groups::id.eq(id.0)))
        .set(user_groups::description.eq(text))
        .execute(conn)?;
    Ok(())
}

/// Deactivates or reactivates a group.
pub fn set_deactivated(conn: &mut DbConn, id: GroupId, value: bool) -> Result<(), StorageError> {
    diesel::update(user_groups::table.filter(user_groups::id.eq(id.0)))
        .set(user_groups::deactivated.eq(value))
        .execute(conn)?;
    Ok(())
}

/// Stores all six settings of a group (JSON, in `GROUP_SETTINGS` order).
pub fn set_settings(
    conn: &mut DbConn,
    id: GroupId,
    settings: &[String; 6],
) -> Result<(), StorageError> {
    diesel::update(user_groups::table.filter(user_groups::id.eq(id.0)))
        .set((
            user_groups::can_add_members_group.eq(Some(&settings[0])),
            user_groups::can_join_group.eq(Some(&settings[1])),
            user_groups::can_leave_group.eq(Some(&settings[2])),
            user_groups::can_manage_group.eq(Some(&settings[3])),
            user_groups::can_mention_group.eq(Some(&settings[4])),
            user_groups::can_remove_members_group.eq(Some(&settings[5])),
        ))
        .execute(conn)?;
    Ok(())
}

/// Adds direct members (who must not be members yet).
pub fn add_members(conn: &mut DbConn, id: GroupId, users: &[UserId]) -> Result<(), StorageError> {
    for user in users {
        diesel::insert_into(members::table)
            .values((members::group_id.eq(id.0), members::user_id.eq(user.0)))
            .execute(conn)?;
    }
    Ok(())
}

/// Removes direct members.
pub fn remove_members(
    conn: &mut DbConn,
    id: GroupId,
    users: &[UserId],
) -> Result<(), StorageError> {
    let ids: Vec<i64> = users.iter().map(|u| u.0).collect();
    diesel::delete(
        members::table
            .filter(members::group_id.eq(id.0))
            .filter(members::user_id.eq_any(ids)),
    )
    .execute(conn)?;
    Ok(())
}

/// Adds direct subgroups (which must not be subgroups yet).
pub fn add_subgroups(
    conn: &mut DbConn,
    id: GroupId,
    groups: &[GroupId],
) -> Result<(), StorageError> {
    for group in groups {
        diesel::insert_into(subgroups::table)
            .values((
                subgroups::group_id.eq(id.0),
                subgroups::subgroup_id.eq(group.0),
            ))
            .execute(conn)?;
    }
    Ok(())
}

/// Removes direct subgroups.
pub fn remove_subgroups(
    conn: &mut DbConn,
    id: GroupId,
    groups: &[GroupId],
) -> Result<(), StorageError> {
    let ids: Vec<i64> = groups.iter().map(|g| g.0).collect();
    diesel::delete(
        subgroups::table
            .filter(subgroups::group_id.eq(id.0))
            .filter(subgroups::subgroup_id.eq_any(ids)),
    )
    .execute(conn)?;
    Ok(())
}

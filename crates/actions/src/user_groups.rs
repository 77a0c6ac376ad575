//! User groups (`/user_groups`): creating, listing, editing, deactivating groups and changing
//! their members and subgroups, with the permission rules of the reference server (see
//! `parley_domain::group_permissions`). Every change publishes its `user_group` events.

use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::channels::active_users;
use crate::notify::groups::{
    group_added, group_deactivated, group_reactivated, group_updated, members_changed,
    subgroups_changed,
};
use crate::policy::{self, Policy};
use crate::present::groups::{
    direct_members_and_subgroups, group_object as group_json, setting_value, settings_of,
};
use crate::time::now;
use parley_domain::group_permissions::{
    check_group_action, check_group_name, check_setting_value, may_act, normalize_setting,
    recursive_subgroups, same_setting, setting_config, would_cycle, GroupAction, GroupSettings,
    GROUP_SETTINGS,
};
use parley_domain::groups::{GroupId, GroupSetting};
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError, UserId};
use parley_storage::groups::{self, GroupRow};
use parley_storage::{channels, users, DbConn, StorageError};
use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashSet};

/// Whether `caller` may add users to `group` (used by invitations as well as by
/// `POST /user_groups/{id}/members`). System groups and unknown or deactivated groups never
/// take members; otherwise the organization's `can_manage_all_groups` decides first, then the
/// group's `can_manage_group`, then its `can_add_members_group`.
pub fn may_add_members(
    conn: &mut DbConn,
    policy: &Policy,
    caller: &User,
    group: GroupId,
) -> ActionResult<bool> {
    let Some(row) = groups::row(conn, group)? else {
        return Ok(false);
    };
    if row.is_system_group || row.deactivated || !caller.is_active {
        return Ok(false);
    }
    let settings = settings_of(&row, &policy.groups);
    Ok(may_act(
        &policy.groups,
        &policy.realm.can_manage_all_groups,
        &settings,
        caller,
        GroupAction::AddMembers,
    ))
}

/// The active users that the user groups `group_ids` reach (members of nested
/// subgroups included), for the message pipeline to flag group mentions. Unknown, system and
/// deactivated groups reach nobody.
pub fn group_mention_user_ids(
    conn: &mut DbConn,
    policy: &Policy,
    group_ids: &[i64],
) -> ActionResult<Vec<UserId>> {
    if group_ids.is_empty() {
        return Ok(Vec::new());
    }
    let everyone = active_users(conn)?;
    let mut out = BTreeSet::new();
    for id in group_ids {
        let id = GroupId(*id);
        if policy.groups.system.contains_key(&id) || policy.groups.deactivated.contains(&id) {
            continue;
        }
        for user in &everyone {
            if policy.groups.contains(id, user) {
                out.insert(user.id);
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// Checks that `sender` may (non-silently) mention each of the user groups `group_ids`: the
/// group's `can_mention_group` decides. Fails with the reference's error naming the group.
pub fn check_can_mention_groups(
    conn: &mut DbConn,
    policy: &Policy,
    sender: &User,
    group_ids: &[i64],
) -> ActionResult<()> {
    for id in group_ids {
        let Some(row) = groups::row(conn, GroupId(*id))? else {
            continue;
        };
        let settings = settings_of(&row, &policy.groups);
        let allowed = settings
            .get("can_mention_group")
            .is_some_and(|s| policy.groups.setting_contains(s, sender));
        if !allowed {
            return Err(RequestError::bad_request(format!(
                "You are not allowed to mention user group '{}'.",
                row.name
            ))
            .into());
        }
    }
    Ok(())
}

fn invalid_group() -> RequestError {
    RequestError::bad_request("Invalid user group")
}

fn deactivated_group() -> RequestError {
    RequestError::bad_request("User group is deactivated.")
}

fn group_exists(name: &str) -> RequestError {
    RequestError::invalid_param("name", format!("User group '{name}' already exists."))
}

/// Guests and bots may not use the user group endpoints (the reference's
/// `require_member_or_admin`).
fn require_member_or_admin(user: &User) -> Result<(), RequestError> {
    if user.role.is_guest() {
        return Err(RequestError::guests_not_allowed());
    }
    if user.bot_type.is_some() {
        return Err(RequestError::bad_request(
            "This endpoint does not accept bot requests.",
        ));
    }
    Ok(())
}

/// Fetches a group the caller wants to change and checks that they may do `action` to it.
fn access_for_update(
    conn: &mut DbConn,
    policy: &Policy,
    user: &User,
    id: GroupId,
    action: GroupAction,
    allow_deactivated: bool,
) -> ActionResult<(GroupRow, GroupSettings)> {
    let row = groups::row(conn, id)?.ok_or_else(invalid_group)?;
    if !allow_deactivated && row.deactivated {
        return Err(deactivated_group().into());
    }
    let settings = settings_of(&row, &policy.groups);
    check_group_action(
        &policy.groups,
        &policy.realm.can_manage_all_groups,
        id,
        &settings,
        user,
        action,
    )?;
    Ok((row, settings))
}

/// Fetches a group whose membership the caller wants to read (deactivated groups refused).
fn access_to_read(conn: &mut DbConn, id: GroupId) -> ActionResult<GroupRow> {
    let row = groups::row(conn, id)?.ok_or_else(invalid_group)?;
    if row.deactivated {
        return Err(deactivated_group().into());
    }
    Ok(row)
}

/// The users with these IDs, all of whom must exist and be active ("Invalid user ID").
fn active_users_by_ids(conn: &mut DbConn, ids: &[i64], var_name: &str) -> ActionResult<Vec<User>> {
    let wanted: Vec<UserId> = ids.iter().map(|i| UserId(*i)).collect();
    let found = users::by_ids(conn, &wanted)?;
    let mut out = Vec::new();
    for id in &wanted {
        match found.iter().find(|u| u.id == *id && u.is_active) {
            Some(user) => {
                if !out.iter().any(|u: &User| u.id == user.id) {
                    out.push(user.clone());
                }
            }
            None => {
                return Err(RequestError::invalid_param(
                    var_name,
                    format!("Invalid user ID: {}", id.0),
                )
                .into())
            }
        }
    }
    Ok(out)
}

/// The distinct groups with these IDs, in order: each must exist ("Invalid user group ID") and,
/// when `active_only`, not be deactivated. Read from the loaded graph, with no query per ID.
fn groups_by_ids(
    graph: &parley_domain::groups::GroupGraph,
    ids: &[i64],
    var_name: &str,
    active_only: bool,
) -> ActionResult<Vec<GroupId>> {
    let mut out: Vec<GroupId> = Vec::new();
    for id in ids.iter().map(|i| GroupId(*i)) {
        if !graph.exists(id) {
            return Err(RequestError::invalid_param(
                var_name,
                format!("Invalid user group ID: {}", id.0),
            )
            .into());
        }
        if !out.contains(&id) {
            out.push(id);
        }
    }
    if active_only && out.iter().any(|g| graph.deactivated.contains(g)) {
        return Err(deactivated_group().with("var_name", var_name).into());
    }
    Ok(out)
}

/// Validates a new value of the group setting `name` (already normalized): the groups it names
/// exist and are active, its users are active, and it names no system group the setting
/// forbids.
fn check_setting(
    conn: &mut DbConn,
    policy: &Policy,
    name: &str,
    value: &GroupSetting,
) -> ActionResult<()> {
    let config = setting_config(name)
        .ok_or_else(|| RequestError::invalid_param(name, format!("Invalid {name}")))?;
    match value {
        GroupSetting::Group(id) => {
            let row =
                groups::row(conn, *id)?.ok_or_else(|| invalid_group().with("var_name", name))?;
            if row.deactivated {
                return Err(deactivated_group().with("var_name", name).into());
            }
            check_setting_value(config, value, &policy.groups)?;
        }
        GroupSetting::Anonymous {
            direct_members,
            direct_subgroups,
        } => {
            let ids: Vec<i64> = direct_members.iter().map(|u| u.0).collect();
            active_users_by_ids(conn, &ids, name)?;
            let ids: Vec<i64> = direct_subgroups.iter().map(|g| g.0).collect();
            groups_by_ids(&policy.groups, &ids, name, true)?;
        }
    }
    Ok(())
}

fn stored_settings(settings: &GroupSettings) -> [String; 6] {
    settings.0.clone().map(|s| s.to_json())
}

/// Inserts the group, mapping a taken name to the reference's error.
fn insert_group(
    conn: &mut DbConn,
    name: &str,
    description: &str,
    creator: UserId,
    settings: &GroupSettings,
) -> ActionResult<GroupId> {
    crate::realm_cache::changing();
    match groups::insert_user_group(
        conn,
        name,
        description,
        creator,
        now(),
        &stored_settings(settings),
    ) {
        Err(StorageError::UniqueViolation(_)) => Err(group_exists(name).into()),
        other => Ok(other?),
    }
}

/// What `POST /user_groups/create` asks for.
#[derive(Debug, Clone, Default)]
pub struct NewUserGroup {
    /// The name (unique among groups).
    pub name: String,
    /// The description.
    pub description: String,
    /// Initial direct members (user IDs).
    pub members: Vec<i64>,
    /// Initial direct subgroups (group IDs).
    pub subgroups: Vec<i64>,
    /// Permission settings given in the request; the others take their defaults.
    pub settings: Vec<(String, GroupSetting)>,
}

/// `POST /user_groups/create`: creates a user group (caller must hold `can_create_groups`);
/// returns its ID. Publishes `add`, then `add_subgroups` when subgroups were given.
pub async fn do_create_user_group(
    ctx: &Context,
    user: User,
    new: NewUserGroup,
) -> ActionResult<GroupId> {
    require_member_or_admin(&user)?;
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        if !policy
            .groups
            .setting_contains(&policy.realm.can_create_groups, &user)
        {
            return Err(RequestError::insufficient_permission().into());
        }
        let members = active_users_by_ids(conn, &new.members, "members")?;
        let name = check_group_name(&new.name)?.to_owned();
        let mut given = Vec::new();
        for (setting, value) in new.settings {
            let value = normalize_setting(value, &policy.groups);
            check_setting(conn, &policy, &setting, &value)?;
            given.push((setting, value));
        }
        let settings = GroupSettings::with_defaults(&given, &policy.groups, Some(user.id), false);
        let id = insert_group(conn, &name, &new.description, user.id, &settings)?;
        let member_ids: Vec<UserId> = members.iter().map(|u| u.id).collect();
        crate::realm_cache::changing();
        groups::add_members(conn, id, &member_ids)?;
        let row = groups::row(conn, id)?.ok_or_else(invalid_group)?;
        let everyone = active_users(conn)?;
        let graph = &policy::load(conn)?.groups;
        events.push(group_added(group_json(&row, graph, &everyone)));
        if !new.subgroups.is_empty() {
            let subgroups = groups_by_ids(graph, &new.subgroups, "subgroups", true)?;
            crate::realm_cache::changing();
            groups::add_subgroups(conn, id, &subgroups)?;
            events.push(subgroups_changed(id, true, &subgroups));
        }
        Ok(id)
    })
    .await
}

/// `GET /user_groups`: every group (deactivated ones only when asked for), in ID order.
pub async fn get_user_groups(
    ctx: &Context,
    user: User,
    include_deactivated_groups: bool,
) -> ActionResult<Vec<parley_wire::UserGroup>> {
    require_member_or_admin(&user)?;
    ctx.run(move |conn| {
        let graph = groups::graph(conn)?;
        let everyone = users::all(conn)?;
        Ok(groups::rows(conn)?
            .iter()
            .filter(|row| include_deactivated_groups || !row.deactivated)
            .map(|row| group_json(row, &graph, &everyone))
            .collect())
    })
    .await
}

/// A group setting in `PATCH /user_groups/{id}`: its name, the new value and the value the
/// client expects it to have (`old`).
#[derive(Debug, Clone)]
pub struct SettingChange {
    /// The setting's API name.
    pub name: String,
    /// The new value.
    pub new: GroupSetting,
    /// The expected current value, if the client sent one.
    pub old: Option<GroupSetting>,
}

/// What `PATCH /user_groups/{id}` asks for.
#[derive(Debug, Clone, Default)]
pub struct UserGroupUpdate {
    /// New name.
    pub name: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// `false` reactivates a deactivated group.
    pub deactivated: Option<bool>,
    /// Permission setting changes.
    pub settings: Vec<SettingChange>,
}

/// `PATCH /user_groups/{id}`: renames, describes, reactivates or changes the settings of a
/// group the caller may manage (deactivated groups included). Values equal to the current ones
/// change nothing and publish nothing.
pub async fn do_update_user_group(
    ctx: &Context,
    user: User,
    id: GroupId,
    update: UserGroupUpdate,
) -> ActionResult<()> {
    if update.name.is_none()
        && update.description.is_none()
        && update.deactivated.is_none()
        && update.settings.is_empty()
    {
        return Err(RequestError::bad_request("No new data supplied").into());
    }
    require_member_or_admin(&user)?;
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        let (row, mut settings) =
            access_for_update(conn, &policy, &user, id, GroupAction::Manage, true)?;
        if let Some(name) = update.name.filter(|n| *n != row.name) {
            let name = check_group_name(&name)?.to_owned();
            crate::realm_cache::changing();
            match groups::set_name(conn, id, &name) {
                Err(StorageError::UniqueViolation(_)) => return Err(group_exists(&name).into()),
                other => other?,
            }
            let mut data = Map::new();
            data.insert("name".into(), json!(name));
            events.push(group_updated(id, data, row.deactivated));
        }
        if let Some(description) = update.description.filter(|d| *d != row.description) {
            crate::realm_cache::changing();
            groups::set_description(conn, id, &description)?;
            let mut data = Map::new();
            data.insert("description".into(), json!(description));
            events.push(group_updated(id, data, row.deactivated));
        }
        if update.deactivated == Some(false) && row.deactivated {
            crate::realm_cache::changing();
            groups::set_deactivated(conn, id, false)?;
            let row = groups::row(conn, id)?.ok_or_else(invalid_group)?;
            let everyone = active_users(conn)?;
            let graph = &policy::load(conn)?.groups;
            events.push(group_reactivated(id, group_json(&row, graph, &everyone)));
        }
        let active: HashSet<UserId> = active_users(conn)?.iter().map(|u| u.id).collect();
        let mut changed = false;
        for change in update.settings {
            let new = normalize_setting(change.new, &policy.groups);
            let current = settings
                .get(&change.name)
                .cloned()
                .ok_or_else(|| RequestError::invalid_param(&change.name, "Invalid setting"))?;
            if let Some(old) = change.old {
                let old = normalize_setting(old, &policy.groups);
                if !same_setting(&old, &current) {
                    return Err(RequestError::new(
                        ErrorCode::ExpectationMismatch,
                        "'old' value does not match the expected value.",
                    )
                    .with("field_name", "old")
                    .into());
                }
            }
            if same_setting(&current, &new) {
                continue;
            }
            check_setting(conn, &policy, &change.name, &new)?;
            settings.set(&change.name, new.clone());
            changed = true;
            let mut data = Map::new();
            data.insert(
                change.name.clone(),
                serde_json::to_value(setting_value(&new, &active)).unwrap_or_default(),
            );
            events.push(group_updated(id, data, row.deactivated));
        }
        if changed {
            crate::realm_cache::changing();
            groups::set_settings(conn, id, &stored_settings(&settings))?;
        }
        Ok(())
    })
    .await
}

/// Where a group is used, as the `objections` of `CANNOT_DEACTIVATE_GROUP_IN_USE` list it:
/// active supergroups, and settings of active channels, active groups and the organization
/// naming it directly or in an anonymous value.
fn objections(conn: &mut DbConn, policy: &Policy, id: GroupId) -> ActionResult<Vec<Value>> {
    let uses = |setting: &GroupSetting| setting.groups().contains(&id);
    let mut out = Vec::new();
    let rows = groups::rows(conn)?;
    let supergroups: Vec<i64> = rows
        .iter()
        .filter(|r| !r.deactivated && r.id != id.0)
        .filter(|r| {
            policy
                .groups
                .subgroups
                .get(&GroupId(r.id))
                .is_some_and(|subs| subs.contains(&id))
        })
        .map(|r| r.id)
        .collect();
    if !supergroups.is_empty() {
        out.push(json!({"type": "subgroup", "supergroup_ids": supergroups}));
    }
    for channel in channels::all(conn)? {
        if channel.is_archived {
            continue;
        }
        let names: Vec<&str> = parley_domain::channel::ChannelPermissions::NAMES
            .iter()
            .zip(channel.permissions.values())
            .filter(|(_, value)| uses(value))
            .map(|(name, _)| *name)
            .collect();
        if !names.is_empty() {
            out.push(json!({"type": "channel", "channel_id": channel.id, "settings": names}));
        }
    }
    for row in rows.iter().filter(|r| !r.deactivated) {
        let settings = settings_of(row, &policy.groups);
        let names: Vec<&str> = settings
            .iter()
            .filter(|(_, value)| uses(value))
            .map(|(name, _)| name)
            .collect();
        if !names.is_empty() {
            out.push(json!({"type": "user_group", "group_id": row.id, "settings": names}));
        }
    }
    let names: Vec<&str> = parley_domain::realm::RealmPolicy::GROUP_SETTINGS
        .iter()
        .zip(policy.realm.group_settings())
        .filter(|(_, value)| uses(value))
        .map(|(name, _)| *name)
        .collect();
    if !names.is_empty() {
        out.push(json!({"type": "realm", "settings": names}));
    }
    Ok(out)
}

/// `POST /user_groups/{id}/deactivate`: deactivates a group the caller may manage, unless
/// something still uses it (`CANNOT_DEACTIVATE_GROUP_IN_USE` with the `objections`).
pub async fn do_deactivate_user_group(ctx: &Context, user: User, id: GroupId) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        access_for_update(conn, &policy, &user, id, GroupAction::Manage, false)?;
        let objections = objections(conn, &policy, id)?;
        if !objections.is_empty() {
            return Err(RequestError::new(
                ErrorCode::CannotDeactivateGroupInUse,
                "Cannot deactivate user group in use.",
            )
            .with("objections", Value::Array(objections))
            .into());
        }
        crate::realm_cache::changing();
        groups::set_deactivated(conn, id, true)?;
        events.push(group_deactivated(id));
        Ok(())
    })
    .await
}

/// What `POST /user_groups/{id}/members` asks for (user IDs and group IDs).
#[derive(Debug, Clone, Default)]
pub struct MembershipChange {
    /// Users to add.
    pub add: Vec<i64>,
    /// Users to remove.
    pub delete: Vec<i64>,
    /// Subgroups to add.
    pub add_subgroups: Vec<i64>,
    /// Subgroups to remove.
    pub delete_subgroups: Vec<i64>,
}

/// The Notification Bot's direct message telling each of `recipients` that `acting` added them
/// to (or removed them from) the group, as the reference sends; not to the acting user
/// themselves, nor to bots.
fn notify_membership(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut crate::publish::Events,
    acting: &User,
    recipients: &[User],
    group_name: &str,
    added: bool,
) -> ActionResult<()> {
    use parley_domain::message::{dm_key, flags};
    let targets: Vec<&User> = recipients
        .iter()
        .filter(|u| u.id != acting.id && u.bot_type.is_none() && u.is_active)
        .collect();
    if targets.is_empty() {
        return Ok(());
    }
    let bot = crate::notices::notification_bot(conn)?;
    let mention = crate::notices::silent_mention(acting);
    let content = if added {
        format!("{mention} added you to the group @_*{group_name}*.")
    } else {
        format!("{mention} removed you from the group @_*{group_name}*.")
    };
    for target in targets {
        let rendered =
            crate::rendering::render_message(conn, &ctx.realm.url, ctx.camo.as_ref(), &content);
        let rows = vec![
            (bot.id, flags::IS_PRIVATE | flags::READ),
            (target.id, flags::IS_PRIVATE),
        ];
        let new = parley_storage::messages::NewMessage {
            sender_id: bot.id,
            channel_id: None,
            topic: String::new(),
            dm_key: Some(dm_key(&[bot.id, target.id])),
            dm_group_id: None,
            recipient_user_id: Some(target.id),
            content: content.clone(),
            rendered_content: rendered.html,
            date_sent: now(),
            has_link: rendered.has_link,
            has_image: rendered.has_image,
            has_attachment: rendered.has_attachment,
            client: "Internal".to_owned(),
        };
        let id = parley_storage::messages::insert(conn, &new, &rows)?;
        events.push(crate::notify::messages::message_sent(
            ctx,
            conn,
            &bot,
            id,
            crate::notify::messages::MessageAudience {
                rows: &rows,
                channel_name: None,
                public_channel: false,
                local_echo: None,
            },
        )?);
    }
    Ok(())
}

/// Adds users: the caller adding only themselves needs `can_join_group` (or
/// `can_add_members_group`), anyone else `can_add_members_group`.
fn add_members(
    ctx: &Context,
    conn: &mut DbConn,
    policy: &Policy,
    user: &User,
    id: GroupId,
    ids: &[i64],
    events: &mut crate::publish::Events,
) -> ActionResult<()> {
    let joining = ids.len() == 1 && ids[0] == user.id.0;
    let (row, _) = match access_for_update(conn, policy, user, id, GroupAction::Join, true) {
        Ok(found) if joining => found,
        _ => access_for_update(conn, policy, user, id, GroupAction::AddMembers, true)?,
    };
    let members = active_users_by_ids(conn, ids, "add")?;
    let direct: HashSet<UserId> = policy
        .groups
        .members
        .get(&GroupId(row.id))
        .cloned()
        .unwrap_or_default();
    if let Some(present) = members.iter().find(|u| direct.contains(&u.id)) {
        return Err(RequestError::invalid_param(
            "add",
            format!("User {} is already a member of this group", present.id.0),
        )
        .into());
    }
    let member_ids: Vec<UserId> = members.iter().map(|u| u.id).collect();
    crate::realm_cache::changing();
    groups::add_members(conn, id, &member_ids)?;
    events.push(members_changed(id, true, &member_ids));
    notify_membership(ctx, conn, events, user, &members, &row.name, true)?;
    Ok(())
}

/// Removes users: the caller removing only themselves needs `can_leave_group` (or
/// `can_remove_members_group`), anyone else `can_remove_members_group`.
fn remove_members(
    ctx: &Context,
    conn: &mut DbConn,
    policy: &Policy,
    user: &User,
    id: GroupId,
    ids: &[i64],
    events: &mut crate::publish::Events,
) -> ActionResult<()> {
    let members = active_users_by_ids(conn, ids, "delete")?;
    let leaving = ids.len() == 1 && ids[0] == user.id.0;
    let (row, _) = match access_for_update(conn, policy, user, id, GroupAction::Leave, true) {
        Ok(found) if leaving => found,
        _ => access_for_update(conn, policy, user, id, GroupAction::RemoveMembers, true)?,
    };
    let direct: HashSet<UserId> = policy.groups.members.get(&id).cloned().unwrap_or_default();
    if let Some(missing) = ids.iter().find(|i| !direct.contains(&UserId(**i))) {
        return Err(RequestError::invalid_param(
            "delete",
            format!("There is no member '{missing}' in this user group"),
        )
        .into());
    }
    let member_ids: Vec<UserId> = members.iter().map(|u| u.id).collect();
    crate::realm_cache::changing();
    groups::remove_members(conn, id, &member_ids)?;
    events.push(members_changed(id, false, &member_ids));
    notify_membership(ctx, conn, events, user, &members, &row.name, false)?;
    Ok(())
}

/// Adds subgroups (needs `can_add_members_group`); refuses subgroups already there and any
/// that would make a cycle.
fn add_subgroups(
    conn: &mut DbConn,
    policy: &Policy,
    user: &User,
    id: GroupId,
    ids: &[i64],
    var_name: &str,
    events: &mut crate::publish::Events,
) -> ActionResult<()> {
    access_for_update(conn, policy, user, id, GroupAction::AddMembers, true)?;
    let subgroups = groups_by_ids(&policy.groups, ids, var_name, true)?;
    let existing = policy
        .groups
        .subgroups
        .get(&id)
        .cloned()
        .unwrap_or_default();
    if let Some(present) = subgroups.iter().find(|g| existing.contains(g)) {
        return Err(RequestError::invalid_param(
            var_name,
            format!(
                "User group {} is already a subgroup of this group.",
                present.0
            ),
        )
        .into());
    }
    if would_cycle(&policy.groups, id, &subgroups) {
        return Err(RequestError::invalid_param(
            var_name,
            format!(
                "User group {} is already a subgroup of one of the passed subgroups.",
                id.0
            ),
        )
        .into());
    }
    crate::realm_cache::changing();
    groups::add_subgroups(conn, id, &subgroups)?;
    events.push(subgroups_changed(id, true, &subgroups));
    Ok(())
}

/// Removes subgroups (needs `can_manage_group`).
fn remove_subgroups(
    conn: &mut DbConn,
    policy: &Policy,
    user: &User,
    id: GroupId,
    ids: &[i64],
    var_name: &str,
    events: &mut crate::publish::Events,
) -> ActionResult<()> {
    access_for_update(conn, policy, user, id, GroupAction::Manage, true)?;
    let subgroups = groups_by_ids(&policy.groups, ids, var_name, false)?;
    let existing = policy
        .groups
        .subgroups
        .get(&id)
        .cloned()
        .unwrap_or_default();
    if let Some(missing) = subgroups.iter().find(|g| !existing.contains(g)) {
        return Err(RequestError::invalid_param(
            var_name,
            format!("User group {} is not a subgroup of this group.", missing.0),
        )
        .into());
    }
    crate::realm_cache::changing();
    groups::remove_subgroups(conn, id, &subgroups)?;
    events.push(subgroups_changed(id, false, &subgroups));
    Ok(())
}

/// `POST /user_groups/{id}/members`: adds and removes users and subgroups, in that order, in
/// one transaction.
pub async fn do_update_user_group_members(
    ctx: &Context,
    user: User,
    id: GroupId,
    change: MembershipChange,
) -> ActionResult<()> {
    if change.add.is_empty()
        && change.delete.is_empty()
        && change.add_subgroups.is_empty()
        && change.delete_subgroups.is_empty()
    {
        return Err(RequestError::bad_request(
            "Nothing to do. Specify at least one of \"add\", \"delete\", \"add_subgroups\" or \"delete_subgroups\".",
        )
        .into());
    }
    require_member_or_admin(&user)?;
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        let mut policy = policy::load(conn)?;
        if !change.add.is_empty() {
            add_members(&ctx2, conn, &policy, &user, id, &change.add, events)?;
            policy = policy::load(conn)?;
        }
        if !change.delete.is_empty() {
            remove_members(&ctx2, conn, &policy, &user, id, &change.delete, events)?;
            policy = policy::load(conn)?;
        }
        if !change.add_subgroups.is_empty() {
            add_subgroups(
                conn,
                &policy,
                &user,
                id,
                &change.add_subgroups,
                "add_subgroups",
                events,
            )?;
            policy = policy::load(conn)?;
        }
        if !change.delete_subgroups.is_empty() {
            remove_subgroups(
                conn,
                &policy,
                &user,
                id,
                &change.delete_subgroups,
                "delete_subgroups",
                events,
            )?;
        }
        Ok(())
    })
    .await
}

/// `POST /user_groups/{id}/subgroups`: adds and removes subgroups, in that order.
pub async fn do_update_user_group_subgroups(
    ctx: &Context,
    user: User,
    id: GroupId,
    add: Vec<i64>,
    delete: Vec<i64>,
) -> ActionResult<()> {
    if add.is_empty() && delete.is_empty() {
        return Err(RequestError::bad_request(
            "Nothing to do. Specify at least one of \"add\" or \"delete\".",
        )
        .into());
    }
    require_member_or_admin(&user)?;
    ctx.write(move |conn, events| {
        let mut policy = policy::load(conn)?;
        if !add.is_empty() {
            add_subgroups(conn, &policy, &user, id, &add, "add", events)?;
            policy = policy::load(conn)?;
        }
        if !delete.is_empty() {
            remove_subgroups(conn, &policy, &user, id, &delete, "delete", events)?;
        }
        Ok(())
    })
    .await
}

/// The active users in a group: direct members only, or everyone it reaches through subgroups.
fn member_ids(conn: &mut DbConn, id: GroupId, direct_only: bool) -> ActionResult<Vec<UserId>> {
    let graph = groups::graph(conn)?;
    let everyone = users::all(conn)?;
    if direct_only {
        return Ok(direct_members_and_subgroups(&graph, id, &everyone).0);
    }
    let mut all: Vec<UserId> = everyone
        .iter()
        .filter(|u| graph.contains(id, u))
        .map(|u| u.id)
        .collect();
    all.sort();
    Ok(all)
}

/// `GET /user_groups/{id}/members`: the group's members (direct only when asked).
pub async fn get_user_group_members(
    ctx: &Context,
    user: User,
    id: GroupId,
    direct_member_only: bool,
) -> ActionResult<Vec<UserId>> {
    require_member_or_admin(&user)?;
    ctx.run(move |conn| {
        access_to_read(conn, id)?;
        member_ids(conn, id, direct_member_only)
    })
    .await
}

/// `GET /user_groups/{id}/members/{user_id}`: whether a user is in the group.
pub async fn is_user_group_member(
    ctx: &Context,
    user: User,
    id: GroupId,
    target: UserId,
    direct_member_only: bool,
) -> ActionResult<bool> {
    require_member_or_admin(&user)?;
    ctx.run(move |conn| {
        access_to_read(conn, id)?;
        let target =
            users::by_id(conn, target)?.ok_or_else(|| RequestError::bad_request("No such user"))?;
        if !target.is_active {
            return Err(RequestError::bad_request("User is deactivated").into());
        }
        Ok(member_ids(conn, id, direct_member_only)?.contains(&target.id))
    })
    .await
}

/// `GET /user_groups/{id}/subgroups`: the group's subgroups (direct only when asked), ascending.
pub async fn get_user_group_subgroups(
    ctx: &Context,
    user: User,
    id: GroupId,
    direct_subgroup_only: bool,
) -> ActionResult<Vec<GroupId>> {
    require_member_or_admin(&user)?;
    ctx.run(move |conn| {
        access_to_read(conn, id)?;
        let graph = groups::graph(conn)?;
        if direct_subgroup_only {
            let everyone = users::all(conn)?;
            return Ok(direct_members_and_subgroups(&graph, id, &everyone).1);
        }
        let mut all = recursive_subgroups(&graph, id);
        if graph.system.contains_key(&id) {
            // System groups nest by role rather than by stored subgroups.
            let everyone = users::all(conn)?;
            let mut next = direct_members_and_subgroups(&graph, id, &everyone).1;
            while let Some(g) = next.pop() {
                if !all.contains(&g) {
                    all.push(g);
                    next.extend(direct_members_and_subgroups(&graph, g, &everyone).1);
                }
            }
        }
        all.retain(|g| *g != id);
        all.sort();
        Ok(all)
    })
    .await
}

/// The names of the user group settings, for the API layer's parameter parsing.
pub fn setting_names() -> impl Iterator<Item = &'static str> {
    GROUP_SETTINGS.iter().map(|c| c.name)
}

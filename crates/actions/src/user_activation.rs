//! Deactivating and reactivating accounts: `DELETE /users/{user_id}`, `DELETE /users/me`,
//! `POST /users/{user_id}/reactivate` (and bots through `DELETE /bots/{bot_id}`).
//!
//! A deactivated account keeps its rows (subscriptions, group memberships, messages) but cannot
//! authenticate (`USER_DEACTIVATED`; its browser sessions end), receives no new messages and is listed among
//! `realm_non_active_users`. Deactivating a person deactivates the bots they own.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::to_users;
use crate::notify::users::{
    activation_changed, bot_updated, group_members_changed, users_who_can_access,
};
use crate::present::groups::setting_value;
use crate::publish::Events;
use parley_domain::groups::{GroupId, GroupSetting};
use parley_domain::realm::RealmPolicy;
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError, UserId};
use parley_storage::{users, DbConn};
use parley_wire as wire;
use parley_wire::event::{RealmEvent, UserGroupEvent};
use serde_json::{json, Map};
use std::collections::HashSet;

/// The user with this ID, or "No such user".
pub(crate) fn user_or_missing(conn: &mut DbConn, id: UserId) -> ActionResult<User> {
    users::by_id(conn, id)?
        .filter(|u| !is_system_bot(conn, u.id))
        .ok_or_else(|| RequestError::bad_request("No such user").into())
}

fn is_system_bot(conn: &mut DbConn, id: UserId) -> bool {
    users::system_bots(conn).is_ok_and(|bots| bots.iter().any(|b| b.id == id))
}

/// Whether `target` is the organization's only active human owner.
pub(crate) fn is_last_owner(conn: &mut DbConn, target: &User) -> ActionResult<bool> {
    if !target.role.is_owner() || target.is_bot() {
        return Ok(false);
    }
    let owners = users::all(conn)?
        .into_iter()
        .filter(|u| u.is_active && !u.is_bot() && u.role.is_owner())
        .count();
    Ok(owners <= 1)
}

/// Deactivates one account and, for a person, the active bots they own, ending their browser
/// sessions in the same transaction; revokes the invitations the account sent; records the
/// events: `realm_user` `update` `{user_id, is_active: false}` to those who can access the
/// account, and for bots `realm_bot` `update` to the bot's administrators.
pub(crate) fn deactivate_in(
    conn: &mut DbConn,
    events: &mut Events,
    target: &User,
) -> ActionResult<()> {
    if !target.is_active {
        return Ok(());
    }
    let with_access: HashSet<UserId> = users_who_can_access(conn, target)?.into_iter().collect();
    users::set_active(conn, target.id, false)?;
    crate::sessions::end_sessions(conn, target.id, None)?;
    events.push(activation_changed(conn, target, false)?);
    drop_from_groups(conn, events, target, &with_access)?;
    crate::invites::revoke_invites_by(conn, events, target.id)?;
    if target.is_bot() {
        events.push(bot_updated(
            conn,
            target,
            json!({"user_id": target.id, "is_active": false})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        )?);
    } else {
        for bot in users::bots_owned_by(conn, target.id)? {
            if bot.is_active {
                deactivate_in(conn, events, &bot)?;
            }
        }
    }
    tracing::info!(user_id = %target.id, "deactivated user");
    Ok(())
}

/// A deactivated account leaves every group and every anonymous group setting. Those who can
/// access it learn that from its `realm_user` `update`; the others (as the reference) get
/// `user_group` `remove_members` for each user group it was a direct member of, `user_group`
/// `update` for each group setting naming it directly, and `realm` `update_dict` for each such
/// organization setting, with the setting's new value.
fn drop_from_groups(
    conn: &mut DbConn,
    events: &mut Events,
    target: &User,
    with_access: &HashSet<UserId>,
) -> ActionResult<()> {
    let people = crate::notify::channels::active_users(conn)?;
    let without: Vec<UserId> = people
        .iter()
        .map(|u| u.id)
        .filter(|id| !with_access.contains(id))
        .collect();
    if without.is_empty() {
        return Ok(());
    }
    let active: HashSet<UserId> = people.iter().map(|u| u.id).collect();
    let policy = crate::policy::load(conn)?;
    let names_target = |setting: &GroupSetting| setting.direct_members().contains(&target.id);
    for group in users::direct_group_ids(conn, target.id)? {
        if !policy.groups.system.contains_key(&GroupId(group)) {
            events.push(to_users(
                without.clone(),
                wire::Event::UserGroup(UserGroupEvent::RemoveMembers {
                    group_id: GroupId(group),
                    user_ids: vec![target.id],
                }),
            ));
        }
    }
    for row in parley_storage::groups::rows(conn)? {
        let settings = crate::present::groups::settings_of(&row, &policy.groups);
        for (name, value) in settings.iter() {
            if names_target(value) {
                let mut data = Map::new();
                data.insert(
                    name.to_owned(),
                    serde_json::to_value(setting_value(value, &active)).unwrap_or_default(),
                );
                events.push(to_users(
                    without.clone(),
                    wire::Event::UserGroup(UserGroupEvent::Update {
                        group_id: GroupId(row.id),
                        data,
                    }),
                ));
            }
        }
    }
    for (name, value) in RealmPolicy::GROUP_SETTINGS
        .iter()
        .zip(policy.realm.group_settings())
    {
        if names_target(value) {
            let mut data = Map::new();
            data.insert(
                (*name).to_owned(),
                serde_json::to_value(setting_value(value, &active)).unwrap_or_default(),
            );
            events.push(to_users(
                without.clone(),
                wire::Event::Realm(RealmEvent::UpdateDict {
                    property: "default",
                    data,
                }),
            ));
        }
    }
    Ok(())
}

/// `DELETE /users/{user_id}`: administrators deactivate a person (bots go through
/// `DELETE /bots/{bot_id}`); only owners deactivate owners, and never the last one.
pub async fn deactivate_user_as(ctx: &Context, caller: &User, target: UserId) -> ActionResult<()> {
    if !caller.role.is_admin() {
        return Err(RequestError::admin_required().into());
    }
    let caller = caller.clone();
    ctx.write(move |conn, events| {
        let target = user_or_missing(conn, target)?;
        if target.is_bot() {
            return Err(RequestError::bad_request("No such user").into());
        }
        if !target.is_active {
            return Err(RequestError::bad_request("User is deactivated").into());
        }
        if target.role.is_owner() && !caller.role.is_owner() {
            return Err(owner_required().into());
        }
        if is_last_owner(conn, &target)? {
            return Err(
                RequestError::bad_request("Cannot deactivate the only organization owner").into(),
            );
        }
        deactivate_in(conn, events, &target)
    })
    .await
}

/// "Must be an organization owner".
pub(crate) fn owner_required() -> RequestError {
    RequestError::new(
        ErrorCode::UnauthorizedPrincipal,
        "Must be an organization owner",
    )
}

fn last_user_error(is_last_owner: bool) -> RequestError {
    let entity = if is_last_owner {
        "organization owner"
    } else {
        "user"
    };
    RequestError::new(
        ErrorCode::CannotDeactivateLastUser,
        format!("Cannot deactivate the only {entity}"),
    )
    .with("entity", entity)
    .with("is_last_owner", is_last_owner)
}

/// `DELETE /users/me`: a person deactivates their own account; the only active user and the
/// only owner cannot (`CANNOT_DEACTIVATE_LAST_USER`).
pub async fn deactivate_own_account(ctx: &Context, me: &User) -> ActionResult<()> {
    let me = me.clone();
    ctx.write(move |conn, events| {
        let active = users::all(conn)?.iter().filter(|u| u.is_active).count();
        if active <= 1 {
            return Err(last_user_error(false).into());
        }
        if is_last_owner(conn, &me)? {
            return Err(last_user_error(true).into());
        }
        deactivate_in(conn, events, &me)
    })
    .await
}

/// `POST /users/{user_id}/reactivate`: administrators reactivate an account (a bot only while
/// its owner is active). Those who can access it get `realm_user` `update`
/// `{user_id, is_active: true}`, everyone gets `user_group` `add_members` for each group the
/// account is a direct member of (its role's system group included), and a bot's
/// administrators get `realm_bot` `update`.
pub async fn reactivate_user_as(ctx: &Context, caller: &User, target: UserId) -> ActionResult<()> {
    if !caller.role.is_admin() {
        return Err(RequestError::admin_required().into());
    }
    ctx.write(move |conn, events| {
        let target = user_or_missing(conn, target)?;
        if target.is_active {
            return Err(RequestError::bad_request("User is already active").into());
        }
        if let Some(owner) = target.bot_owner_id {
            let owner_active = users::by_id(conn, owner)?.is_some_and(|o| o.is_active);
            if !owner_active {
                return Err(RequestError::bad_request(
                    "Cannot reactivate a bot whose owner is deactivated",
                )
                .into());
            }
        }
        users::set_active(conn, target.id, true)?;
        let mut after = target.clone();
        after.is_active = true;
        events.push(activation_changed(conn, &after, true)?);
        let policy = crate::policy::load(conn)?;
        let mut groups: Vec<GroupId> = users::direct_group_ids(conn, target.id)?
            .into_iter()
            .map(GroupId)
            .collect();
        if let Some(system) = policy
            .groups
            .system_id(policy.groups.direct_system_group(&target))
        {
            groups.push(system);
        }
        groups.sort();
        for group in groups {
            events.push(group_members_changed(group, true, &[target.id]));
        }
        if target.is_bot() {
            events.push(bot_updated(
                conn,
                &after,
                json!({"user_id": target.id, "is_active": true})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            )?);
        }
        tracing::info!(user_id = %target.id, "reactivated user");
        Ok::<_, ActionError>(())
    })
    .await
}

//! Deactivating and reactivating accounts: `DELETE /users/{user_id}`, `DELETE /users/me`,
//! `POST /users/{user_id}/reactivate` (and bots through `DELETE /bots/{bot_id}`).
//!
//! A deactivated account keeps its rows (subscriptions, group memberships, messages) but cannot
//! authenticate (`USER_DEACTIVATED`; its browser sessions end), receives no new messages and is listed among
//! `realm_non_active_users`. Deactivating a person deactivates the bots they own.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::users::{
    activation_changed, bot_updated, group_members_changed, role_system_group,
};
use crate::publish::Events;
use parley_domain::groups::GroupId;
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError, UserId};
use parley_storage::{users, DbConn};
use serde_json::json;

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
/// sessions in the same transaction; records the events:
/// `realm_user` `update` `{user_id, is_active: false}` to those who can access the account, and
/// for bots `realm_bot` `update` to the bot's administrators.
pub(crate) fn deactivate_in(
    conn: &mut DbConn,
    events: &mut Events,
    target: &User,
) -> ActionResult<()> {
    if !target.is_active {
        return Ok(());
    }
    users::set_active(conn, target.id, false)?;
    crate::sessions::end_sessions(conn, target.id, None)?;
    events.push(activation_changed(conn, target, false)?);
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
        if let Some(system) = policy.groups.system_id(role_system_group(target.role)) {
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

//! Reading, creating and changing users (name, role, profile data by administrators).

use crate::auth::{user_by_any_email, AddressMatch};
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::channels::{active_users, People};
use crate::notify::users::{full_name_changed, group_members_changed, role_changed, user_created};
use crate::present;
use crate::publish::Events;
use crate::secrets;
use crate::time::now;
use crate::user_activation::{is_last_owner, owner_required, user_or_missing};
use parley_domain::email::normalize_email;
use parley_domain::permissions::{check_can_create_users, check_can_grant_role};
use parley_domain::user::{
    can_access_delivery_email, check_full_name, EmailAddressVisibility, User,
};
use parley_domain::{ProfileFieldId, RequestError, Role, UserId};
use parley_storage::users::NewUser;
use parley_storage::{users, DbConn, StorageError};
use parley_wire as wire;
use parley_wire::user::{OwnUser, UserOptions};
use serde_json::{json, Value};

/// A request to create a person's account.
#[derive(Debug, Clone)]
pub struct CreateUser {
    /// Login and delivery address.
    pub email: String,
    /// Display name.
    pub full_name: String,
    /// Password; None for an account that can only use its API key.
    pub password: Option<String>,
    /// Role; members by default.
    pub role: Role,
}

/// The created account and its API key.
#[derive(Debug, Clone)]
pub struct CreatedUser {
    /// The new account.
    pub user: User,
    /// Its API key.
    pub api_key: String,
}

/// An account checked and ready to store, its password already hashed: hashing is slow on
/// purpose, so it happens before any transaction opens.
pub(crate) struct PreparedUser {
    /// The row to insert.
    pub(crate) new: NewUser,
    /// Its API key.
    pub(crate) api_key: String,
}

/// Checks a creation request and hashes its password.
pub(crate) fn prepare_user(request: CreateUser) -> ActionResult<PreparedUser> {
    let email = normalize_email(&request.email, "email")?;
    let full_name = check_full_name(&request.full_name, "full_name")?;
    let password_hash = match &request.password {
        Some(password) => {
            secrets::check_password(password)?;
            Some(secrets::hash_password(password).map_err(ActionError::Internal)?)
        }
        None => None,
    };
    let api_key = secrets::generate_api_key();
    let new = NewUser {
        delivery_email: email,
        full_name,
        password_hash,
        api_key: api_key.clone(),
        role: request.role,
        bot_type: None,
        bot_owner_id: None,
        timezone: String::new(),
        date_joined: now(),
        email_address_visibility: EmailAddressVisibility::Everyone,
        can_create_users: false,
    };
    Ok(PreparedUser { new, api_key })
}

/// Stores a prepared account inside the caller's transaction: the organization's default
/// settings, the revocation of pending email invitations of its address, the announcement to
/// everyone, and (when `default_channels`) the default channels.
/// A taken address is `BAD_REQUEST`.
pub(crate) fn create_user_in(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    new: &NewUser,
    default_channels: bool,
) -> ActionResult<User> {
    let id = match users::insert(conn, new) {
        Err(StorageError::UniqueViolation(_)) => {
            return Err(RequestError::bad_request(format!(
                "Email '{}' already in use",
                new.delivery_email
            ))
            .into())
        }
        other => other?,
    };
    crate::settings_changes::start_with_realm_defaults(conn, id)?;
    crate::invites::revoke_pending_for(conn, events, &new.delivery_email)?;
    let user =
        users::by_id(conn, id)?.ok_or_else(|| ActionError::Internal("new user vanished".into()))?;
    let people = active_users(conn)?;
    let mut joined = Events::default();
    if default_channels {
        let policy = crate::policy::load(conn)?;
        let people = People {
            users: &people,
            groups: &policy.groups,
        };
        crate::subscriptions::subscribe_to_defaults(conn, &user, people, &mut joined)?;
    }
    // Everyone learns of the account before its subscriptions (peer_add); who may access it is
    // decided with those subscriptions made.
    for event in user_created(ctx, conn, &user, &people)? {
        events.push(event);
    }
    events.0.extend(joined.0);
    Ok(user)
}

/// Creates an account with no permission check: for the command line and the first start.
/// A taken address is `BAD_REQUEST`.
pub async fn do_create_user(ctx: &Context, request: CreateUser) -> ActionResult<CreatedUser> {
    let PreparedUser { new, api_key } = prepare_user(request)?;
    let ctx2 = ctx.clone();
    let user = ctx
        .write(move |conn, events| create_user_in(&ctx2, conn, events, &new, true))
        .await?;
    tracing::info!(user_id = %user.id, role = user.role.code(), "created user");
    Ok(CreatedUser { user, api_key })
}

/// `POST /users`: an administrator with `can_create_users` creates an account, of a role no more
/// powerful than their own.
pub async fn create_user_as(
    ctx: &Context,
    caller: &User,
    request: CreateUser,
) -> ActionResult<CreatedUser> {
    check_can_create_users(caller)?;
    check_can_grant_role(caller, request.role)?;
    do_create_user(ctx, request).await
}

/// `GET /users`: every user the viewer may see (or just `user_ids`), active or not.
pub async fn get_users(
    ctx: &Context,
    viewer: User,
    user_ids: Option<Vec<UserId>>,
    options: UserOptions,
) -> ActionResult<Vec<wire::User>> {
    let ctx2 = ctx.clone();
    ctx.run(move |conn| {
        let targets = match &user_ids {
            None => users::all(conn)?,
            Some(ids) => {
                let found = users::by_ids(conn, ids)?;
                if let Some(missing) = ids.iter().find(|id| !found.iter().any(|u| u.id == **id)) {
                    return Err(RequestError::invalid_param(
                        "user_ids",
                        format!("Invalid user ID: {missing}"),
                    )
                    .into());
                }
                found
            }
        };
        let policy = crate::policy::load(conn)?;
        Ok(present::users::records(
            &ctx2, conn, &policy, &viewer, &targets, options,
        )?)
    })
    .await
}

/// Which user a path names: a numeric ID or an email address.
#[derive(Debug, Clone)]
pub enum UserRef {
    /// By ID.
    Id(UserId),
    /// By API or (when the viewer may see it) delivery address.
    Email(String),
}

/// `GET /users/{user_id}` and `GET /users/{email}`: one user as the viewer sees them. An address
/// the viewer may not see finds nobody, exactly like an unknown one.
pub async fn access_user(
    ctx: &Context,
    viewer: User,
    target: UserRef,
    options: UserOptions,
) -> ActionResult<wire::User> {
    let ctx2 = ctx.clone();
    ctx.run(move |conn| {
        let target = user_by_ref(conn, &viewer, &target, &ctx2.realm.host)?;
        let policy = crate::policy::load(conn)?;
        let record = present::users::records(&ctx2, conn, &policy, &viewer, &[target], options)?;
        record
            .into_iter()
            .next()
            .ok_or_else(|| ActionError::Internal("user record vanished".into()))
    })
    .await
}

/// The user a path names, as `viewer` may find them: an address the viewer may not see finds
/// nobody, exactly like an unknown one ("No such user").
fn user_by_ref(
    conn: &mut DbConn,
    viewer: &User,
    target: &UserRef,
    host: &str,
) -> ActionResult<User> {
    let found = match target {
        UserRef::Id(id) => users::by_id(conn, *id)?,
        UserRef::Email(email) => user_by_any_email(conn, email, host)?
            .filter(|(user, matched)| {
                *matched == AddressMatch::Api || can_access_delivery_email(Some(viewer), user)
            })
            .map(|(user, _)| user),
    };
    Ok(found.ok_or_else(|| RequestError::bad_request("No such user"))?)
}

/// `GET /users/me`: the caller's own record with their profile data, and the ID of the newest
/// message they received (-1 while there is none).
pub async fn get_own_user(ctx: &Context, me: User) -> ActionResult<OwnUser> {
    let options = UserOptions {
        client_gravatar: false,
        include_custom_profile_fields: true,
    };
    let id = me.id;
    let user = access_user(ctx, me, UserRef::Id(id), options).await?;
    let max = ctx
        .run(move |conn| parley_storage::messages::max_id_for(conn, id))
        .await?;
    Ok(OwnUser::new(user, max.unwrap_or(-1)))
}

/// A `PATCH /users/{user_id}` request: the parts sent.
#[derive(Debug, Clone, Default)]
pub struct UpdateUser {
    /// New display name; blank is ignored, as the reference does.
    pub full_name: Option<String>,
    /// New role, as its API code.
    pub role: Option<i64>,
    /// Custom profile field values to set (null or empty clears).
    pub profile_data: Option<Vec<(ProfileFieldId, Option<Value>)>>,
}

/// Changes `target`'s role and records the events: `realm_user` `update` `{user_id, role}` to
/// those who can access the user, and `user_group` `remove_members`/`add_members` for the
/// system groups the old and new roles put the user in, to everyone.
pub(crate) fn change_role_in(
    conn: &mut DbConn,
    events: &mut Events,
    target: &User,
    role: Role,
) -> ActionResult<()> {
    if target.role == role {
        return Ok(());
    }
    users::set_role(conn, target.id, role)?;
    let mut after = target.clone();
    after.role = role;
    events.push(role_changed(conn, &after, role)?);
    let graph = parley_storage::groups::graph(conn)?;
    let old = graph.system_id(graph.direct_system_group(target));
    let new = graph.system_id(graph.direct_system_group(&after));
    if old != new && target.is_active {
        if let Some(old) = old {
            events.push(group_members_changed(old, false, &[target.id]));
        }
        if let Some(new) = new {
            events.push(group_members_changed(new, true, &[target.id]));
        }
    }
    tracing::info!(user_id = %target.id, role = role.code(), "changed role");
    Ok(())
}

/// Checks that `caller` may move `target` from its role to `role`: only owners grant or remove
/// the owner role, and the only owner keeps it.
pub(crate) fn check_role_change(
    conn: &mut DbConn,
    caller: &User,
    target: &User,
    role: Role,
) -> ActionResult<()> {
    if role == target.role {
        return Ok(());
    }
    if (role.is_owner() || target.role.is_owner()) && !caller.role.is_owner() {
        return Err(owner_required().into());
    }
    if !caller.role.is_admin() {
        return Err(RequestError::admin_required().into());
    }
    if target.role.is_owner() && is_last_owner(conn, target)? {
        return Err(RequestError::bad_request(
            "The owner permission cannot be removed from the only organization owner.",
        )
        .into());
    }
    Ok(())
}

/// Parses a role code sent as `role`.
pub(crate) fn parse_role(code: i64) -> Result<Role, RequestError> {
    Role::from_code(code).ok_or_else(|| RequestError::invalid_param("role", "Invalid role"))
}

/// `PATCH /users/{user_id}`: administrators change another user's name, role and custom
/// profile field values, in one transaction.
pub async fn update_user_as(
    ctx: &Context,
    caller: &User,
    target: UserRef,
    change: UpdateUser,
) -> ActionResult<()> {
    if !caller.role.is_admin() {
        return Err(RequestError::admin_required().into());
    }
    let role = change.role.map(parse_role).transpose()?;
    let full_name = change
        .full_name
        .filter(|n| !n.trim().is_empty())
        .map(|n| check_full_name(&n, "full_name"))
        .transpose()?;
    let caller = caller.clone();
    let host = ctx.realm.host.clone();
    ctx.write(move |conn, events| {
        let target = match target {
            UserRef::Id(id) => id,
            email => user_by_ref(conn, &caller, &email, &host)?.id,
        };
        let mut target = user_or_missing(conn, target)?;
        if let Some(role) = role {
            check_role_change(conn, &caller, &target, role)?;
            change_role_in(conn, events, &target, role)?;
            target.role = role;
        }
        if let Some(name) = full_name.filter(|n| *n != target.full_name) {
            users::set_full_name(conn, target.id, &name)?;
            target.full_name = name.clone();
            events.push(full_name_changed(conn, &target, &name)?);
            if target.is_bot() {
                events.push(crate::notify::users::bot_updated(
                    conn,
                    &target,
                    json!({"user_id": target.id, "full_name": name})
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                )?);
            }
        }
        if let Some(values) = change.profile_data {
            crate::profile_fields::apply_values(conn, events, &target, values)?;
        }
        Ok(())
    })
    .await
}

//! Reading, creating and changing users (name, role, profile data by administrators).

use crate::auth::{user_by_any_email, AddressMatch};
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::channels::{active_users, People};
use crate::notify::users::{
    full_name_changed, group_members_changed, role_changed, role_system_group, user_created,
};
use crate::publish::Events;
use crate::secrets;
use crate::time::now;
use crate::user_activation::{is_last_owner, owner_required, user_or_missing};
use parley_domain::email::normalize_email;
use parley_domain::permissions::{check_can_create_users, check_can_grant_role};
use parley_domain::user::{
    can_access_delivery_email, check_full_name, EmailAddressVisibility, User, UserRecord,
    UserRecordOptions,
};
use parley_domain::{ProfileFieldId, RequestError, Role, UserId};
use parley_storage::users::NewUser;
use parley_storage::{profile_fields, users, DbConn, StorageError};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

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

pub(crate) fn check_password(password: &str) -> Result<(), RequestError> {
    if password.chars().count() < secrets::MIN_PASSWORD_LENGTH {
        return Err(RequestError::invalid_param(
            "password",
            "The password is too weak.",
        ));
    }
    Ok(())
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
            check_password(password)?;
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
/// settings, the announcement to everyone, and (when `default_channels`) the default channels.
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
    let user =
        users::by_id(conn, id)?.ok_or_else(|| ActionError::Internal("new user vanished".into()))?;
    let people = active_users(conn)?;
    // Everyone learns of the account before its subscriptions (peer_add).
    for event in user_created(ctx, &user, &people) {
        events.push(event);
    }
    if default_channels {
        let policy = crate::policy::load(conn)?;
        let people = People {
            users: &people,
            groups: &policy.groups,
        };
        crate::subscriptions::subscribe_to_defaults(conn, &user, people, events)?;
    }
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

/// Builds the `profile_data` maps of these users, keyed by user then by field ID.
fn profile_data_of(
    conn: &mut DbConn,
    ids: Option<&[UserId]>,
) -> Result<HashMap<UserId, Map<String, Value>>, StorageError> {
    let mut data: HashMap<UserId, Map<String, Value>> = HashMap::new();
    for value in profile_fields::values_of(conn, ids)? {
        let mut entry = Map::new();
        entry.insert("value".into(), Value::String(value.value));
        if let Some(rendered) = value.rendered_value {
            entry.insert("rendered_value".into(), Value::String(rendered));
        }
        data.entry(value.user_id)
            .or_default()
            .insert(value.field_id.0.to_string(), Value::Object(entry));
    }
    Ok(data)
}

pub(crate) fn records(
    ctx: &Context,
    conn: &mut DbConn,
    viewer: &User,
    targets: Vec<User>,
    options: UserRecordOptions,
) -> Result<Vec<UserRecord>, StorageError> {
    let mut profile_data = if options.include_custom_profile_fields {
        let ids: Vec<UserId> = targets.iter().map(|u| u.id).collect();
        profile_data_of(conn, Some(&ids))?
    } else {
        HashMap::new()
    };
    let accessible = accessible_users(conn, viewer)?;
    Ok(targets
        .iter()
        .map(|target| {
            if accessible
                .as_ref()
                .is_some_and(|set| !target.is_bot() && !set.contains(&target.id))
            {
                return inaccessible_record(ctx, target, options);
            }
            UserRecord::build(
                target,
                Some(viewer),
                options,
                &ctx.realm.host,
                &ctx.realm.url,
                profile_data.remove(&target.id),
            )
        })
        .collect())
}

/// The users `viewer` may know about when `can_access_all_users_group` does not hold them
/// (themselves and those sharing a channel or a direct-message conversation with them; bots are
/// always accessible), or None when they may know about everyone.
fn accessible_users(
    conn: &mut DbConn,
    viewer: &User,
) -> Result<Option<std::collections::HashSet<UserId>>, StorageError> {
    let policy = crate::policy::load(conn)?;
    if policy
        .groups
        .setting_contains(&policy.realm.can_access_all_users_group, viewer)
    {
        return Ok(None);
    }
    let mut set = users::sharing_with(conn, viewer.id)?;
    set.insert(viewer.id);
    Ok(Some(set))
}

/// How a user the viewer may not access looks, as the reference shows it: "Unknown user", an
/// API-only address, a member, active, with a generic avatar and no profile data.
fn inaccessible_record(ctx: &Context, target: &User, options: UserRecordOptions) -> UserRecord {
    UserRecord {
        user_id: target.id,
        delivery_email: None,
        email: parley_domain::email::placeholder_email(target.id, &ctx.realm.host),
        full_name: "Unknown user".into(),
        date_joined: target.date_joined_iso(),
        is_active: true,
        is_owner: false,
        is_admin: false,
        is_guest: false,
        is_billing_admin: false,
        is_bot: false,
        bot_type: None,
        bot_owner_id: None,
        role: Role::Member.code(),
        timezone: String::new(),
        avatar_url: Some(format!(
            "{}/static/images/unknown-user-avatar.png",
            ctx.realm.url.trim_end_matches('/')
        )),
        avatar_version: 1,
        profile_data: options.include_custom_profile_fields.then(Map::new),
    }
}

/// `GET /users`: every user the viewer may see (or just `user_ids`), active or not.
pub async fn get_users(
    ctx: &Context,
    viewer: User,
    user_ids: Option<Vec<UserId>>,
    options: UserRecordOptions,
) -> ActionResult<Vec<UserRecord>> {
    let ctx2 = ctx.clone();
    ctx.db
        .run(move |conn| {
            let targets = match &user_ids {
                None => users::all(conn)?,
                Some(ids) => {
                    let found = users::by_ids(conn, ids)?;
                    if let Some(missing) = ids.iter().find(|id| !found.iter().any(|u| u.id == **id))
                    {
                        return Err(RequestError::invalid_param(
                            "user_ids",
                            format!("Invalid user ID: {missing}"),
                        )
                        .into());
                    }
                    found
                }
            };
            Ok(records(&ctx2, conn, &viewer, targets, options)?)
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
    options: UserRecordOptions,
) -> ActionResult<UserRecord> {
    let ctx2 = ctx.clone();
    ctx.db
        .run(move |conn| {
            let host = &ctx2.realm.host;
            let found = match &target {
                UserRef::Id(id) => users::by_id(conn, *id)?,
                UserRef::Email(email) => user_by_any_email(conn, email, host)?
                    .filter(|(user, matched)| {
                        *matched == AddressMatch::Api
                            || can_access_delivery_email(Some(&viewer), user)
                    })
                    .map(|(user, _)| user),
            };
            let target = found.ok_or_else(|| RequestError::bad_request("No such user"))?;
            let record = records(&ctx2, conn, &viewer, vec![target], options)?;
            record
                .into_iter()
                .next()
                .ok_or_else(|| ActionError::Internal("user record vanished".into()))
        })
        .await
}

/// `GET /users/me`: the caller's own record with their profile data, and the ID of the newest
/// message they received (-1 while there is none).
pub async fn get_own_user(ctx: &Context, me: User) -> ActionResult<Map<String, Value>> {
    let options = UserRecordOptions {
        client_gravatar: false,
        include_custom_profile_fields: true,
    };
    let id = me.id;
    let record = access_user(ctx, me, UserRef::Id(id), options).await?;
    let Value::Object(mut fields) =
        serde_json::to_value(record).map_err(|e| ActionError::Internal(e.to_string()))?
    else {
        return Err(ActionError::Internal("user record is not an object".into()));
    };
    let max = ctx
        .db
        .run(move |conn| parley_storage::messages::max_id_for(conn, id))
        .await?;
    fields.insert("max_message_id".into(), json!(max.unwrap_or(-1)));
    Ok(fields)
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
    let old = graph.system_id(role_system_group(target.role));
    let new = graph.system_id(role_system_group(role));
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
    target: UserId,
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
    ctx.write(move |conn, events| {
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
                events.push(crate::notify::users::realm_bot_event(
                    conn,
                    &target,
                    "update",
                    json!({"user_id": target.id, "full_name": name}),
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

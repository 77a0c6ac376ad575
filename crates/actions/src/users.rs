//! Reading and creating users.

use crate::auth::{user_by_any_email, AddressMatch};
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::channels::{active_users, People};
use crate::notify::users::user_created;
use crate::secrets;
use crate::time::now;
use parley_domain::email::normalize_email;
use parley_domain::permissions::{check_can_create_users, check_can_grant_role};
use parley_domain::user::{
    can_access_delivery_email, check_full_name, EmailAddressVisibility, User, UserRecord,
    UserRecordOptions,
};
use parley_domain::{RequestError, Role, UserId};
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

/// Creates an account with no permission check: for the command line and the first start.
/// A taken address is `BAD_REQUEST`.
pub async fn do_create_user(ctx: &Context, request: CreateUser) -> ActionResult<CreatedUser> {
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
        delivery_email: email.clone(),
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
    let ctx2 = ctx.clone();
    let user = ctx
        .write(move |conn, events| {
            let id = match users::insert(conn, &new) {
                Err(StorageError::UniqueViolation(_)) => {
                    return Err(RequestError::bad_request(format!(
                        "Email '{email}' already in use"
                    ))
                    .into())
                }
                other => other?,
            };
            crate::settings_changes::start_with_realm_defaults(conn, id)?;
            let user = users::by_id(conn, id)?
                .ok_or_else(|| ActionError::Internal("new user vanished".into()))?;
            let people = active_users(conn)?;
            // Everyone learns of the account before its subscriptions (peer_add).
            for event in user_created(&ctx2, &user, &people) {
                events.push(event);
            }
            let policy = crate::policy::load(conn)?;
            let people = People {
                users: &people,
                groups: &policy.groups,
            };
            crate::subscriptions::subscribe_to_defaults(conn, &user, people, events)?;
            Ok::<_, ActionError>(user)
        })
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
    Ok(targets
        .iter()
        .map(|target| {
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

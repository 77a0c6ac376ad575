//! Authentication: who is calling, by API key (every endpoint) or by password (`fetch_api_key`).

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::rate_limit::rate_limited;
use crate::secrets;
use parley_domain::email::parse_placeholder_email;
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError};
use parley_storage::{realms, users, DbConn, StorageError};

/// Which of a user's addresses a lookup matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AddressMatch {
    /// The real (delivery) address.
    Delivery,
    /// The API address: the placeholder when the real one is hidden, else the real one.
    Api,
}

/// Finds a user by either of their addresses: the delivery address, or the placeholder API
/// address when their real one is hidden. Says which one matched, so callers can refuse a match
/// on an address the viewer may not know.
pub(crate) fn user_by_any_email(
    conn: &mut DbConn,
    email: &str,
    realm_host: &str,
) -> Result<Option<(User, AddressMatch)>, StorageError> {
    let email = email.trim().to_lowercase();
    if let Some(user) = users::by_delivery_email(conn, &email)? {
        let matched = if user.api_email(realm_host) == email {
            AddressMatch::Api
        } else {
            AddressMatch::Delivery
        };
        return Ok(Some((user, matched)));
    }
    let Some(id) = parse_placeholder_email(&email, realm_host) else {
        return Ok(None);
    };
    Ok(users::by_id(conn, id)?
        .filter(|user| user.api_email(realm_host) == email)
        .map(|user| (user, AddressMatch::Api)))
}

/// Login accepts either address.
fn user_by_login_email(
    conn: &mut DbConn,
    email: &str,
    realm_host: &str,
) -> Result<Option<User>, StorageError> {
    Ok(user_by_any_email(conn, email, realm_host)?.map(|(user, _)| user))
}

fn check_realm_active(conn: &mut DbConn) -> ActionResult<()> {
    match realms::get(conn)? {
        Some(realm) if !realm.deactivated => Ok(()),
        _ => Err(RequestError::new(
            ErrorCode::RealmDeactivated,
            "This organization is deactivated",
        )
        .into()),
    }
}

fn user_deactivated() -> ActionError {
    RequestError::new(ErrorCode::UserDeactivated, "Account is deactivated").into()
}

/// The caller of an API request, from HTTP Basic's email and API key. A wrong key and an unknown
/// address fail the same way, so that the answer does not reveal which addresses exist.
pub async fn access_user_by_api_key(
    ctx: &Context,
    email: String,
    api_key: String,
) -> ActionResult<User> {
    let host = ctx.realm.host.clone();
    let user = ctx
        .db
        .run(move |conn| {
            check_realm_active(conn)?;
            let invalid = || RequestError::new(ErrorCode::InvalidApiKey, "Invalid API key");
            let user = user_by_login_email(conn, &email, &host)?.ok_or_else(invalid)?;
            let credentials = users::credentials(conn, user.id)?.ok_or_else(invalid)?;
            if !secrets::api_keys_match(&api_key, &credentials.api_key) {
                return Err(invalid().into());
            }
            if !user.is_active {
                return Err(user_deactivated());
            }
            Ok::<_, ActionError>(user)
        })
        .await?;
    ctx.limits.api_by_user.hit(&user.id.to_string())?;
    Ok(user)
}

/// What `POST /fetch_api_key` returns.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ApiKeyGrant {
    /// The API key.
    pub api_key: String,
    /// The API address to use with it.
    pub email: String,
    /// The account's ID.
    pub user_id: parley_domain::UserId,
}

/// `POST /fetch_api_key`: trades a login address and password for the account's API key.
/// Failed attempts are limited per username, so passwords cannot be guessed at speed.
pub async fn do_fetch_api_key(
    ctx: &Context,
    username: String,
    password: String,
) -> ActionResult<ApiKeyGrant> {
    let limit_key = username.trim().to_lowercase();
    let wait = ctx
        .limits
        .login_failures_by_username
        .wait_seconds(&limit_key);
    if wait > 0.0 {
        return Err(rate_limited(wait).into());
    }
    let host = ctx.realm.host.clone();
    let result = ctx
        .db
        .run(move |conn| {
            check_realm_active(conn)?;
            let failed = || {
                RequestError::new(
                    ErrorCode::AuthenticationFailed,
                    "Your username or password is incorrect",
                )
            };
            let user = user_by_login_email(conn, &username, &host)?.ok_or_else(failed)?;
            let credentials = users::credentials(conn, user.id)?.ok_or_else(failed)?;
            let hash = credentials.password_hash.as_deref().ok_or_else(failed)?;
            if !secrets::verify_password(&password, hash) {
                return Err(failed().into());
            }
            if !user.is_active {
                return Err(user_deactivated());
            }
            Ok(ApiKeyGrant {
                api_key: credentials.api_key,
                email: user.api_email(&host),
                user_id: user.id,
            })
        })
        .await;
    if matches!(&result, Err(ActionError::Request(e)) if e.code == ErrorCode::AuthenticationFailed)
    {
        // Counting only failures: the allowance is for mistakes, not for logging in.
        let _ = ctx.limits.login_failures_by_username.hit(&limit_key);
    }
    result
}

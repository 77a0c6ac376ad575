//! Authentication: who is calling, by API key (every endpoint) or by password (`fetch_api_key`
//! and the web client's login, which share [`check_password_login`]).

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::secrets;
use parley_domain::email::parse_placeholder_email;
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError};
use parley_storage::{users, DbConn, StorageError};

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
    Ok(user_by_placeholder_email(conn, &email, realm_host)?.map(|user| (user, AddressMatch::Api)))
}

/// The user whose placeholder API address (their real one hidden) is `email`, lowercased.
fn user_by_placeholder_email(
    conn: &mut DbConn,
    email: &str,
    realm_host: &str,
) -> Result<Option<User>, StorageError> {
    let Some(id) = parse_placeholder_email(email, realm_host) else {
        return Ok(None);
    };
    Ok(users::by_id(conn, id)?.filter(|user| user.api_email(realm_host) == email))
}

/// Login accepts either address.
fn user_by_login_email(
    conn: &mut DbConn,
    email: &str,
    realm_host: &str,
) -> Result<Option<User>, StorageError> {
    Ok(user_by_any_email(conn, email, realm_host)?.map(|(user, _)| user))
}

/// The user a login address names (either address, as [`user_by_login_email`]) and their API
/// key: one statement for the delivery address, which is what clients send.
fn user_and_api_key(
    conn: &mut DbConn,
    email: &str,
    realm_host: &str,
) -> Result<Option<(User, String)>, StorageError> {
    let email = email.trim().to_lowercase();
    if let Some(found) = users::by_delivery_email_with_api_key(conn, &email)? {
        return Ok(Some(found));
    }
    let Some(user) = user_by_placeholder_email(conn, &email, realm_host)? else {
        return Ok(None);
    };
    Ok(users::credentials(conn, user.id)?.map(|credentials| (user, credentials.api_key)))
}

pub(crate) fn check_realm_active(conn: &mut DbConn) -> ActionResult<()> {
    match crate::realm_cache::realm_deactivated(conn)? {
        false => Ok(()),
        true => Err(RequestError::new(
            ErrorCode::RealmDeactivated,
            "This organization is deactivated",
        )
        .into()),
    }
}

pub(crate) fn user_deactivated() -> ActionError {
    RequestError::new(ErrorCode::UserDeactivated, "Account is deactivated").into()
}

/// The caller of an API request, from HTTP Basic's email and API key. A wrong key and an unknown
/// address fail the same way, so that the answer does not reveal which addresses exist. The
/// request takes one unit of the caller's API allowance.
pub async fn access_user_by_api_key(
    ctx: &Context,
    email: String,
    api_key: String,
) -> ActionResult<User> {
    let user = access_user_by_api_key_unmetered(ctx, email, api_key).await?;
    ctx.limits.api_by_user.take(&user.id.to_string()).await?;
    Ok(user)
}

/// Like [`access_user_by_api_key`] without using the API allowance, for the one endpoint that
/// meters itself: `GET /events` (see [`crate::event_queues::get_events`]). A caller who
/// authenticated before is found in the organization cache (`realm_cache::callers`), without
/// a statement or a trip to the blocking pool; the key is compared the same way either way.
pub async fn access_user_by_api_key_unmetered(
    ctx: &Context,
    email: String,
    api_key: String,
) -> ActionResult<User> {
    let cache = ctx.events.realm_cache().clone();
    if let Some((user, key)) = cache.api_caller(&email) {
        return check_api_key(user, &key, &api_key);
    }
    let mark = cache.caller_mark();
    let host = ctx.realm.host.clone();
    let (user, key, email) = ctx
        .run(move |conn| {
            check_realm_active(conn)?;
            let (user, key) = user_and_api_key(conn, &email, &host)?.ok_or_else(invalid_api_key)?;
            Ok::<_, ActionError>((user, key, email))
        })
        .await?;
    let user = check_api_key(user, &key, &api_key)?;
    if let Some(mark) = mark {
        cache.keep_api_caller(mark, &email, user.clone(), key);
    }
    Ok(user)
}

fn invalid_api_key() -> RequestError {
    RequestError::new(ErrorCode::InvalidApiKey, "Invalid API key")
}

/// The caller, when `given` is their key (compared in constant time) and they are active.
fn check_api_key(user: User, key: &str, given: &str) -> ActionResult<User> {
    if !secrets::api_keys_match(given, key) {
        return Err(invalid_api_key().into());
    }
    if !user.is_active {
        return Err(user_deactivated());
    }
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

/// Checks a login address and password: the one path every password login takes
/// (`POST /fetch_api_key` and the web client's `POST /login/`), so both share one allowance.
///
/// Guessing is limited per account: every attempt takes one unit of the account's allowance
/// *before* the password is checked (so concurrent guesses cannot all slip through while the
/// first ones are still hashing), and a correct password gives its unit back, so the allowance
/// counts failures. Both addresses of an account (delivery and placeholder) share it, addresses
/// that match no account have one per address, and they cost the same Argon2 time as a real one.
/// A wrong password is `AUTHENTICATION_FAILED`, a deactivated account `USER_DEACTIVATED`, a used
/// allowance `RATE_LIMIT_HIT` with `retry-after`.
pub(crate) async fn check_password_login(
    ctx: &Context,
    username: String,
    password: String,
) -> ActionResult<(User, users::Credentials)> {
    let host = ctx.realm.host.clone();
    let found = ctx
        .run(move |conn| {
            check_realm_active(conn)?;
            let Some(user) = user_by_login_email(conn, &username, &host)? else {
                return Ok::<_, ActionError>((username.trim().to_lowercase(), None));
            };
            let credentials = users::credentials(conn, user.id)?;
            Ok((format!("user:{}", user.id), Some((user, credentials))))
        })
        .await?;
    let (limit_key, account) = found;
    ctx.limits
        .login_failures_by_username
        .take(&limit_key)
        .await?;
    let stored = account
        .as_ref()
        .and_then(|(_, credentials)| credentials.as_ref())
        .and_then(|c| c.password_hash.clone());
    // Argon2 takes tens of milliseconds: off the executor, and holding no connection.
    let matches = tokio::task::spawn_blocking(move || {
        secrets::verify_password_or_dummy(&password, stored.as_deref())
    })
    .await
    .map_err(|e| ActionError::Internal(e.to_string()))?;
    let (user, credentials) = match account {
        Some((user, Some(credentials))) if matches => (user, credentials),
        _ => {
            return Err(RequestError::new(
                ErrorCode::AuthenticationFailed,
                "Your username or password is incorrect",
            )
            .into())
        }
    };
    // The allowance is for mistakes, not for logging in.
    ctx.limits
        .login_failures_by_username
        .give_back(&limit_key)
        .await;
    if !user.is_active {
        return Err(user_deactivated());
    }
    Ok((user, credentials))
}

/// `POST /fetch_api_key`: trades a login address and password for the account's API key,
/// through [`check_password_login`] (its rate limit included).
pub async fn do_fetch_api_key(
    ctx: &Context,
    username: String,
    password: String,
) -> ActionResult<ApiKeyGrant> {
    let (user, credentials) = check_password_login(ctx, username, password).await?;
    Ok(ApiKeyGrant {
        api_key: credentials.api_key,
        email: user.api_email(&ctx.realm.host),
        user_id: user.id,
    })
}

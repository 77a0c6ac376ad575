//! Browser sessions of the web client: signing in with a password (`POST /login/`) or at the end
//! of a sign-up, recognising the session a request carries, and ending sessions (logout,
//! deactivation, password change).
//!
//! The cookie holds a random token; the database keeps only its SHA-256 (the session's
//! [`SessionKey`]), so a copy of the database signs no one in. Each session has its own CSRF
//! token, which state-changing requests made with it must echo (`X-CSRFToken`). A session lasts
//! [`SESSION_LIFETIME_SECONDS`] from sign-in, as the reference's two-week session cookie.

use crate::auth::{check_password_login, check_realm_active, user_deactivated};
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::secrets;
use crate::time::now;
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError, UserId};
use parley_storage::sessions::{self, Session};
use parley_storage::{users, DbConn, StorageError};
use rand::distributions::{Alphanumeric, DistString};
use sha2::{Digest, Sha256};

/// How long a session lasts from sign-in: two weeks, the reference's `SESSION_COOKIE_AGE`.
pub const SESSION_LIFETIME_SECONDS: i64 = 14 * 24 * 60 * 60;

/// A session's `last_used` is recorded at most this often, so that a busy client does not write
/// to the database on every request.
const TOUCH_EVERY_SECONDS: i64 = 5 * 60;

/// Length of session tokens (alphanumeric: about 285 bits).
const TOKEN_LENGTH: usize = 48;

/// Length of CSRF tokens (alphanumeric: about 190 bits).
const CSRF_TOKEN_LENGTH: usize = 32;

/// The key a session is stored under: the SHA-256 of its token. Opaque outside this module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionKey(String);

impl SessionKey {
    /// The key of the session whose cookie holds `token`.
    pub fn of_token(token: &str) -> SessionKey {
        SessionKey(hex::encode(Sha256::digest(token.as_bytes())))
    }
}

/// A session just made. The token goes into the cookie and is never shown again.
#[derive(Debug, Clone)]
pub struct NewSession {
    /// The cookie's value.
    pub token: String,
    /// The session's CSRF token.
    pub csrf_token: String,
    /// Seconds until the session expires (the cookie's `Max-Age`).
    pub max_age_seconds: i64,
    /// Who is signed in.
    pub user: User,
}

/// The session a request carries, checked: its user is active, it has not expired.
#[derive(Debug, Clone)]
pub struct ActiveSession {
    /// Who is signed in.
    pub user: User,
    /// The session's key.
    pub key: SessionKey,
    /// The session's CSRF token.
    pub csrf_token: String,
}

impl ActiveSession {
    /// Whether `given` (the `X-CSRFToken` header or the `csrfmiddlewaretoken` form field) is this
    /// session's CSRF token, compared in constant time.
    pub fn csrf_matches(&self, given: &str) -> bool {
        !given.is_empty() && secrets::api_keys_match(given, &self.csrf_token)
    }
}

/// A fresh CSRF token, for the login form of a browser that has no session yet.
pub fn new_csrf_token() -> String {
    Alphanumeric.sample_string(&mut rand::rngs::OsRng, CSRF_TOKEN_LENGTH)
}

/// Whether two CSRF tokens (a form's and its cookie's) are the same non-empty token, compared in
/// constant time.
pub fn csrf_tokens_match(given: &str, expected: &str) -> bool {
    !given.is_empty() && secrets::api_keys_match(given, expected)
}

fn not_logged_in() -> ActionError {
    RequestError::new(
        ErrorCode::Unauthorized,
        "Not logged in: API authentication or user session required",
    )
    .into()
}

/// `POST /login/`: checks the address and password exactly as `POST /fetch_api_key` does (the
/// same failed-login allowance, taken before Argon2 runs) and starts a session.
pub async fn do_login(
    ctx: &Context,
    username: String,
    password: String,
) -> ActionResult<NewSession> {
    let (user, _) = check_password_login(ctx, username, password).await?;
    do_start_session(ctx, user).await
}

/// Signs `user` in: stores a new session (and drops expired ones). Used by the login form and at
/// the end of a sign-up, whose account was just made.
pub async fn do_start_session(ctx: &Context, user: User) -> ActionResult<NewSession> {
    if !user.is_active {
        return Err(user_deactivated());
    }
    let token = Alphanumeric.sample_string(&mut rand::rngs::OsRng, TOKEN_LENGTH);
    let csrf_token = new_csrf_token();
    let created = now();
    let session = Session {
        token_hash: SessionKey::of_token(&token).0,
        user_id: user.id,
        csrf_token: csrf_token.clone(),
        created,
        last_used: created,
        expires: created + SESSION_LIFETIME_SECONDS,
    };
    ctx.transaction(move |conn| {
        sessions::delete_expired(conn, created)?;
        sessions::insert(conn, &session)
    })
    .await?;
    tracing::info!(user_id = %user.id, "signed in");
    Ok(NewSession {
        token,
        csrf_token,
        max_age_seconds: SESSION_LIFETIME_SECONDS,
        user,
    })
}

/// The caller of a request made with the session cookie `token`: `UNAUTHORIZED` when there is no
/// such session or it expired, `USER_DEACTIVATED` or `REALM_DEACTIVATED` as for API keys. A
/// `metered` request takes one unit of the user's API allowance, as an API-key request does.
pub async fn access_user_by_session(
    ctx: &Context,
    token: String,
    metered: bool,
) -> ActionResult<ActiveSession> {
    let key = SessionKey::of_token(&token);
    let lookup = key.clone();
    let (user, csrf_token) = ctx
        .run(move |conn| {
            check_realm_active(conn)?;
            let session = sessions::by_hash(conn, &lookup.0)?.ok_or_else(not_logged_in)?;
            let at = now();
            if session.expires <= at {
                return Err(not_logged_in());
            }
            let user = users::by_id(conn, session.user_id)?.ok_or_else(not_logged_in)?;
            if !user.is_active {
                return Err(user_deactivated());
            }
            if at - session.last_used >= TOUCH_EVERY_SECONDS {
                sessions::touch(conn, &lookup.0, at)?;
            }
            Ok::<_, ActionError>((user, session.csrf_token))
        })
        .await?;
    if metered {
        ctx.limits.api_by_user.hit(&user.id.to_string())?;
    }
    Ok(ActiveSession {
        user,
        key,
        csrf_token,
    })
}

/// `POST /accounts/logout/`: ends the session (nothing happens when it has already ended).
pub async fn do_logout(ctx: &Context, session: &ActiveSession) -> ActionResult<()> {
    let key = session.key.0.clone();
    let user = session.user.id;
    ctx.run(move |conn| sessions::delete(conn, &key)).await?;
    tracing::info!(user_id = %user, "signed out");
    Ok(())
}

/// Ends every session of `user` but `keep`, inside the caller's transaction: deactivation ends
/// them all, a password change all but the one it was made from (as the reference keeps the
/// person who changed it signed in).
pub(crate) fn end_sessions(
    conn: &mut DbConn,
    user: UserId,
    keep: Option<&SessionKey>,
) -> Result<usize, StorageError> {
    let ended = sessions::delete_for_user(conn, user, keep.map(|k| k.0.as_str()))?;
    if ended > 0 {
        tracing::info!(user_id = %user, ended, "ended sessions");
    }
    Ok(ended)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_hashes_of_tokens() {
        let a = SessionKey::of_token("abc");
        assert_eq!(a, SessionKey::of_token("abc"));
        assert_ne!(a, SessionKey::of_token("abd"));
        assert_eq!(a.0.len(), 64);
        assert!(!a.0.contains("abc"));
    }

    #[test]
    fn csrf_tokens_compare_exactly() {
        let token = new_csrf_token();
        assert_eq!(token.len(), CSRF_TOKEN_LENGTH);
        assert!(csrf_tokens_match(&token, &token));
        assert!(!csrf_tokens_match("", ""));
        assert!(!csrf_tokens_match(&token[1..], &token));
        assert_ne!(token, new_csrf_token());
    }
}

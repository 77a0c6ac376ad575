//! Authentication as an extractor: a handler that takes [`Auth`] is authenticated, one that does
//! not is public. The path decides which credentials a request may use, so that one route table
//! serves both scopes (as the reference's `rest_dispatch`):
//!
//! - under `/api/`: HTTP Basic with the API address and API key;
//! - everywhere else (`/json/`, `/user_uploads/`, `/thumbnail`, ...): the web client's session
//!   cookie, or HTTP Basic when the request sends it and has no valid session. A state-changing
//!   request made with a session must carry the session's CSRF token in `X-CSRFToken`.

use crate::error::ApiError;
use crate::web::cookies;
use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::http::Method;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use base64::Engine;
use futures_util::future::LocalBoxFuture;
use parley_actions::auth::{access_user_by_api_key, access_user_by_api_key_unmetered};
use parley_actions::sessions::{access_user_by_session, SessionKey};
use parley_actions::{ActionError, Context};
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError, UserId};

/// The authenticated caller.
#[derive(Debug, Clone)]
pub struct Auth(pub User);

/// The caller's ID, left on the request for the access log.
#[derive(Debug, Clone, Copy)]
pub struct CallerId(pub UserId);

/// The browser session a request was made with, if any: the key of its session cookie outside
/// `/api/` (read from the cookie, so it needs no lookup; [`Auth`] is what checks the session).
/// A password change keeps this session.
#[derive(Debug, Clone, Default)]
pub struct CurrentSession(pub Option<SessionKey>);

impl FromRequest for CurrentSession {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let key = (!is_api_path(req.path()))
            .then(|| cookies::read(req.headers(), cookies::SESSION_COOKIE))
            .flatten()
            .map(|token| SessionKey::of_token(&token));
        std::future::ready(Ok(CurrentSession(key)))
    }
}

/// Whether the request is under `/api/`, where only HTTP Basic authenticates. Everything else
/// is a browser's scope, where the session cookie does too.
pub fn is_api_path(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// Whether a method only reads: such requests need no CSRF token.
pub fn is_safe_method(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The header that carries the CSRF token.
pub const CSRF_HEADER: &str = "X-CSRFToken";

/// The 403 of a state-changing browser request without its session's CSRF token.
pub fn csrf_failed(reason: &str) -> ApiError {
    ApiError(
        RequestError::new(ErrorCode::CsrfFailed, "CSRF verification failed.")
            .with("reason", reason),
    )
}

fn unauthorized(msg: &str) -> ApiError {
    ApiError(RequestError::new(ErrorCode::Unauthorized, msg))
}

/// Splits an `Authorization: Basic ...` header into address and key.
pub fn parse_basic(header_value: &str) -> Result<(String, String), ApiError> {
    let (scheme, encoded) = header_value
        .trim()
        .split_once(' ')
        .ok_or_else(|| unauthorized("Invalid authorization header for basic auth"))?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(unauthorized(
            "This endpoint requires HTTP basic authentication.",
        ));
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .filter(|text| !text.contains('\0'))
        .ok_or_else(|| unauthorized("Invalid authorization header for basic auth"))?;
    let (email, key) = decoded
        .split_once(':')
        .ok_or_else(|| unauthorized("Invalid authorization header for basic auth"))?;
    Ok((email.to_owned(), key.to_owned()))
}

/// The authenticated caller of `GET /events`, whose request does not use the API allowance
/// here: polling meters itself, so that long-polls never eat the budget of other requests.
#[derive(Debug, Clone)]
pub struct PollerAuth(pub User);

impl FromRequest for PollerAuth {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move { Ok(PollerAuth(authenticate(req, false).await?)) })
    }
}

impl FromRequest for Auth {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move { Ok(Auth(authenticate(req, true).await?)) })
    }
}

/// The caller of a request: by session cookie in a browser's scope (see the module's doc), else
/// from the `Authorization` header; `metered` requests use their API allowance.
async fn authenticate(req: HttpRequest, metered: bool) -> Result<User, ApiError> {
    let ctx = req.app_data::<web::Data<Context>>().ok_or_else(|| {
        ApiError::from(parley_actions::ActionError::Internal("no context".into()))
    })?;
    let basic = req.headers().get(header::AUTHORIZATION).cloned();
    if !is_api_path(req.path()) {
        if let Some(token) = cookies::read(req.headers(), cookies::SESSION_COOKIE) {
            match access_user_by_session(ctx, token, metered).await {
                Ok(session) => {
                    if !is_safe_method(req.method()) {
                        let sent = req
                            .headers()
                            .get(CSRF_HEADER)
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or_default();
                        if sent.is_empty() {
                            return Err(csrf_failed("CSRF token missing."));
                        }
                        if !session.csrf_matches(sent) {
                            return Err(csrf_failed("CSRF token incorrect."));
                        }
                    }
                    req.extensions_mut().insert(CallerId(session.user.id));
                    return Ok(session.user);
                }
                // A stale cookie next to Basic credentials: the credentials decide.
                Err(ActionError::Request(err))
                    if err.code == ErrorCode::Unauthorized && basic.is_some() => {}
                Err(err) => return Err(err.into()),
            }
        }
    }
    let value = basic.ok_or_else(|| {
        unauthorized("Not logged in: API authentication or user session required")
    })?;
    let value = value
        .to_str()
        .map_err(|_| unauthorized("Invalid authorization header for basic auth"))?;
    let (email, key) = parse_basic(value)?;
    let user = if metered {
        access_user_by_api_key(ctx, email, key).await?
    } else {
        access_user_by_api_key_unmetered(ctx, email, key).await?
    };
    req.extensions_mut().insert(CallerId(user.id));
    Ok(user)
}

/// The caller when credentials (or, in a browser's scope, a session cookie) were sent, None for
/// an anonymous request (public access). Credentials that are sent must be valid.
#[derive(Debug, Clone)]
pub struct MaybeAuth(pub Option<User>);

impl FromRequest for MaybeAuth {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let session_sent = !is_api_path(req.path())
            && cookies::read(req.headers(), cookies::SESSION_COOKIE).is_some();
        if req.headers().get(header::AUTHORIZATION).is_none() && !session_sent {
            return Box::pin(async { Ok(MaybeAuth(None)) });
        }
        let auth = Auth::from_request(req, payload);
        Box::pin(async move { Ok(MaybeAuth(Some(auth.await?.0))) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_basic_credentials() {
        let encoded = base64::engine::general_purpose::STANDARD.encode("iago@zulip.com:abc:def");
        let (email, key) = parse_basic(&format!("Basic {encoded}")).unwrap();
        assert_eq!(email, "iago@zulip.com");
        assert_eq!(key, "abc:def");
    }

    #[test]
    fn rejects_other_schemes_and_garbage() {
        for bad in [
            "Bearer abc",
            "Basic !!!",
            "Basic",
            "Basic bm9jb2xvbg==",
            "Basic YQBiOmM=",
        ] {
            let err = parse_basic(bad).unwrap_err();
            assert_eq!(err.0.code, ErrorCode::Unauthorized, "{bad}");
            assert_eq!(err.0.status, 401);
        }
    }
}

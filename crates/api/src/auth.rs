//! HTTP Basic authentication with the API address and API key, as an extractor: a handler that
//! takes [`Auth`] is authenticated, one that does not is public.

use crate::error::ApiError;
use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use base64::Engine;
use futures_util::future::LocalBoxFuture;
use parley_actions::auth::{access_user_by_api_key, access_user_by_api_key_unmetered};
use parley_actions::Context;
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError, UserId};

/// The authenticated caller.
#[derive(Debug, Clone)]
pub struct Auth(pub User);

/// The caller's ID, left on the request for the access log.
#[derive(Debug, Clone, Copy)]
pub struct CallerId(pub UserId);

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

/// The caller from the `Authorization` header; `metered` requests use their API allowance.
async fn authenticate(req: HttpRequest, metered: bool) -> Result<User, ApiError> {
    let value = req
        .headers()
        .get(header::AUTHORIZATION)
        .ok_or_else(|| unauthorized("Not logged in: API authentication or user session required"))?
        .to_str()
        .map_err(|_| unauthorized("Invalid authorization header for basic auth"))?;
    let (email, key) = parse_basic(value)?;
    let ctx = req.app_data::<web::Data<Context>>().ok_or_else(|| {
        ApiError::from(parley_actions::ActionError::Internal("no context".into()))
    })?;
    let user = if metered {
        access_user_by_api_key(ctx, email, key).await?
    } else {
        access_user_by_api_key_unmetered(ctx, email, key).await?
    };
    req.extensions_mut().insert(CallerId(user.id));
    Ok(user)
}

/// The caller when credentials were sent, None for an anonymous request (public access).
/// Credentials that are sent must be valid.
#[derive(Debug, Clone)]
pub struct MaybeAuth(pub Option<User>);

impl FromRequest for MaybeAuth {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        if req.headers().get(header::AUTHORIZATION).is_none() {
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

//! The two middlewares of the browser's scopes: CSRF protection of `/json/`, and the
//! `WWW-Authenticate` challenge that does not make a browser prompt for a password.

use crate::auth::{csrf_failed, is_api_path, is_safe_method, CSRF_HEADER};
use crate::web::cookies;
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderValue, WWW_AUTHENTICATE};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::ResponseError;
use parley_actions::sessions::csrf_tokens_match;

/// Middleware function of the `/json` scope: a state-changing request (anything but GET, HEAD
/// and OPTIONS) must send `X-CSRFToken` equal to its `csrftoken` cookie, else 403 `CSRF_FAILED`
/// before any handler runs. (Requests made with a session must moreover send that session's own
/// token, which [`crate::auth::Auth`] checks.)
pub async fn require_csrf(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    if !is_safe_method(req.method()) {
        let sent = req
            .headers()
            .get(CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let refusal = match cookies::read(req.headers(), cookies::CSRF_COOKIE) {
            _ if sent.is_empty() => Some("CSRF token missing."),
            None => Some("CSRF cookie not set."),
            Some(cookie) if !csrf_tokens_match(&sent, &cookie) => Some("CSRF token incorrect."),
            Some(_) => None,
        };
        if let Some(reason) = refusal {
            let response = csrf_failed(reason).error_response();
            return Ok(req.into_response(response).map_into_right_body());
        }
    }
    Ok(next.call(req).await?.map_into_left_body())
}

/// The challenge of a 401 outside `/api/`: `Session realm="zulip"`, as the reference sends, so
/// that a browser following an upload link or calling `/json` does not prompt for Basic
/// credentials. Under `/api/` the challenge stays `Basic realm="zulip"`.
pub async fn session_challenge(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let api = is_api_path(req.path());
    let mut response = next.call(req).await?;
    if !api
        && response.status() == StatusCode::UNAUTHORIZED
        && response.headers().contains_key(WWW_AUTHENTICATE)
    {
        response.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Session realm=\"zulip\""),
        );
    }
    Ok(response)
}

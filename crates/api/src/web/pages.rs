//! The web client's pages: `GET /` (the app's shell when signed in, else a redirect to the login
//! page), `GET`/`POST /login/`, `POST /accounts/logout/`, `/favicon.ico` and `/robots.txt`, and
//! [`sign_in`], which every sign-up ends with. Handlers only read the form and the cookies; the
//! rules (passwords, rate limits, sessions) are `parley_actions::sessions`.

use crate::auth::CSRF_HEADER;
use crate::params::ParamMap;
use crate::web::assets::assets;
use crate::web::cookies;
use crate::web::templates::{self, LoginForm};
use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use maud::Markup;
use parley_actions::sessions::{self, ActiveSession, NewSession};
use parley_actions::web_pages;
use parley_actions::{ActionError, Context};
use parley_domain::user::User;
use parley_domain::ErrorCode;

/// The content security policy of the login and sign-up pages: nothing but their own form.
const FORM_PAGE_POLICY: &str = "default-src 'self'; img-src 'self' data: https: http:; \
     style-src 'self' 'unsafe-inline'; script-src 'none'; object-src 'none'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// The content security policy of the app's shell: scripts only from this server, no plugins,
/// not framed by other sites. Images, media and styles stay open, for messages' previews.
const APP_POLICY: &str =
    "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/// An HTML response that no cache keeps (pages carry CSRF tokens and personal data).
fn html(status: StatusCode, policy: &'static str) -> HttpResponseBuilder {
    let mut response = HttpResponse::build(status);
    response
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "same-origin"))
        .insert_header((header::CONTENT_SECURITY_POLICY, policy));
    response
}

/// A form page (login, sign-up, messages) with this status.
pub fn form_page(status: StatusCode, markup: Markup) -> HttpResponse {
    html(status, FORM_PAGE_POLICY).body(markup.into_string())
}

/// A page saying one thing, with this status.
pub fn message(status: StatusCode, title: &str, text: &str) -> HttpResponse {
    form_page(status, templates::message_page(title, text))
}

/// The page of a failure on the server's side (logged; nothing leaks).
pub fn failure(err: ActionError) -> HttpResponse {
    tracing::error!(error = %err, "web page failed");
    message(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something went wrong",
        "Something went wrong on the server; please try again later.",
    )
}

fn redirect(status: StatusCode, to: &str) -> HttpResponseBuilder {
    let mut response = HttpResponse::build(status);
    response
        .insert_header((header::LOCATION, to))
        .insert_header((header::CACHE_CONTROL, "no-store"));
    response
}

/// `next` when it is a path on this server (`/...`, not `//host` nor anything with a
/// backslash or a control character), so that a login link cannot send anyone elsewhere.
pub fn local_path(next: &str) -> Option<&str> {
    let local = next.starts_with('/')
        && !next.starts_with("//")
        && !next.contains('\\')
        && !next.chars().any(char::is_control);
    local.then_some(next)
}

/// The browser's login CSRF token: its `csrftoken` cookie when it has a well-formed one, else a
/// new one; and whether it is new (the response must then set the cookie).
pub fn form_csrf_token(req: &HttpRequest) -> (String, bool) {
    match cookies::read(req.headers(), cookies::CSRF_COOKIE) {
        Some(token)
            if (16..=128).contains(&token.len())
                && token.bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            (token, false)
        }
        _ => (sessions::new_csrf_token(), true),
    }
}

/// Whether a form's `csrfmiddlewaretoken` matches the browser's `csrftoken` cookie (the login
/// and sign-up forms, which have no session yet to hold a token).
pub fn form_csrf_ok(req: &HttpRequest, form: &mut ParamMap) -> bool {
    let sent = form
        .raw("csrfmiddlewaretoken")
        .unwrap_or_default()
        .to_owned();
    cookies::read(req.headers(), cookies::CSRF_COOKIE)
        .is_some_and(|cookie| sessions::csrf_tokens_match(&sent, &cookie))
}

/// The session the request's cookie names, when it is valid; None when there is none or it
/// ended. Not metered: pages are loaded rarely, and the app's own requests are.
async fn session_of(
    ctx: &Context,
    req: &HttpRequest,
) -> Result<Option<ActiveSession>, ActionError> {
    let Some(token) = cookies::read(req.headers(), cookies::SESSION_COOKIE) else {
        return Ok(None);
    };
    match sessions::access_user_by_session(ctx, token, false).await {
        Ok(session) => Ok(Some(session)),
        Err(ActionError::Request(_)) => Ok(None),
        Err(other) => Err(other),
    }
}

/// GET / — the app's shell with its page params when signed in; otherwise 302 to `/login/`
/// (forgetting a session cookie that no longer works).
pub async fn home(ctx: web::Data<Context>, req: HttpRequest) -> HttpResponse {
    let session = match session_of(&ctx, &req).await {
        Ok(Some(session)) => session,
        Ok(None) => {
            let mut response = redirect(StatusCode::FOUND, "/login/");
            if cookies::read(req.headers(), cookies::SESSION_COOKIE).is_some() {
                response.cookie(cookies::session_removal(&ctx));
            }
            return response.finish();
        }
        Err(err) => return failure(err),
    };
    let params = match web_pages::page_params(&ctx, &session).await {
        Ok(params) => params,
        Err(err) => return failure(err),
    };
    let files = assets();
    let (Some(css), Some(js)) = (files.url("app.css"), files.url("app.js")) else {
        return failure(ActionError::Internal(
            "web/dist has no app.js or app.css".into(),
        ));
    };
    html(StatusCode::OK, APP_POLICY).body(templates::app_shell(&params, &css, &js).into_string())
}

/// The login page with this status, setting the CSRF cookie when the token is new.
async fn login_form(
    ctx: &Context,
    status: StatusCode,
    (csrf_token, new_token): (String, bool),
    error: Option<&str>,
    username: &str,
    next: Option<&str>,
) -> HttpResponse {
    let org = match web_pages::organization(ctx).await {
        Ok(org) => org,
        Err(err) => return failure(err),
    };
    let markup = templates::login_page(
        &org,
        &LoginForm {
            csrf_token: &csrf_token,
            error,
            username,
            next,
        },
    );
    let mut response = html(status, FORM_PAGE_POLICY);
    if new_token {
        response.cookie(cookies::csrf(ctx, csrf_token.clone(), None));
    }
    response.body(markup.into_string())
}

/// GET /login/ — the login form (or, already signed in, straight on to `next` or `/`).
pub async fn login_page(ctx: web::Data<Context>, req: HttpRequest) -> HttpResponse {
    let mut query = ParamMap::default();
    // A malformed query string is as good as an empty one here.
    let _ = query.add_form(req.query_string().as_bytes());
    let next = query.raw("next").and_then(local_path).map(str::to_owned);
    match session_of(&ctx, &req).await {
        Ok(Some(_)) => {
            return redirect(StatusCode::FOUND, next.as_deref().unwrap_or("/")).finish();
        }
        Ok(None) => {}
        Err(err) => return failure(err),
    }
    login_form(
        &ctx,
        StatusCode::OK,
        form_csrf_token(&req),
        None,
        "",
        next.as_deref(),
    )
    .await
}

/// The answer that signs a browser in: the session and CSRF cookies, and 303 to `to`.
fn signed_in(ctx: &Context, session: NewSession, to: &str) -> HttpResponse {
    redirect(StatusCode::SEE_OTHER, to)
        .cookie(cookies::session(
            ctx,
            session.token,
            session.max_age_seconds,
        ))
        .cookie(cookies::csrf(
            ctx,
            session.csrf_token,
            Some(session.max_age_seconds),
        ))
        .finish()
}

/// Signs `user` in and sends the browser to the app (303 to `/` with the session's cookies):
/// how every sign-up ends, the invitation link's form and any other, so they cannot differ.
pub async fn sign_in(ctx: &Context, user: User) -> HttpResponse {
    match sessions::do_start_session(ctx, user).await {
        Ok(session) => signed_in(ctx, session, "/"),
        Err(err) => failure(err),
    }
}

/// POST /login/ — `username`, `password` and `csrfmiddlewaretoken` (and `next`): 303 to `next`
/// or `/` signed in, or the form again saying what was wrong (400 for a missing field, 401 for
/// wrong credentials or a deactivated account, 403 for a stale form, 429 past the failed-login
/// limit that `POST /fetch_api_key` shares).
pub async fn login(ctx: web::Data<Context>, req: HttpRequest, body: Bytes) -> HttpResponse {
    let mut form = ParamMap::default();
    let parsed = form.add_form(&body);
    let username = form.raw("username").unwrap_or_default().trim().to_owned();
    let password = form.raw("password").unwrap_or_default().to_owned();
    let next = form
        .raw("next")
        .and_then(local_path)
        .unwrap_or("/")
        .to_owned();
    let shown_next = (next != "/").then_some(next.as_str());
    if parsed.is_err() {
        let token = form_csrf_token(&req);
        return login_form(
            &ctx,
            StatusCode::BAD_REQUEST,
            token,
            Some("The form could not be read; please try again."),
            "",
            None,
        )
        .await;
    }
    if !form_csrf_ok(&req, &mut form) {
        // A stale form (or cookies refused): a fresh token, and the person tries again.
        return login_form(
            &ctx,
            StatusCode::FORBIDDEN,
            (sessions::new_csrf_token(), true),
            Some(
                "Your login form expired, or your browser does not accept cookies. \
                 Please try again.",
            ),
            &username,
            shown_next,
        )
        .await;
    }
    let again = |status: StatusCode, error: String| {
        let ctx = ctx.clone();
        let token = form_csrf_token(&req);
        let username = username.clone();
        let shown_next = shown_next.map(str::to_owned);
        async move {
            login_form(
                &ctx,
                status,
                token,
                Some(&error),
                &username,
                shown_next.as_deref(),
            )
            .await
        }
    };
    if username.is_empty() || password.is_empty() {
        return again(
            StatusCode::BAD_REQUEST,
            "Enter your email address and your password.".into(),
        )
        .await;
    }
    match sessions::do_login(&ctx, username.clone(), password).await {
        Ok(session) => signed_in(&ctx, session, &next),
        Err(ActionError::Request(err)) => {
            let (status, text) = match err.code {
                ErrorCode::AuthenticationFailed => (
                    StatusCode::UNAUTHORIZED,
                    "Wrong email address or password. Check both and try again.".to_owned(),
                ),
                ErrorCode::UserDeactivated => (
                    StatusCode::UNAUTHORIZED,
                    "Your account has been deactivated. Ask an administrator of this \
                     organization to reactivate it."
                        .to_owned(),
                ),
                ErrorCode::RealmDeactivated => (
                    StatusCode::UNAUTHORIZED,
                    "This organization has been deactivated.".to_owned(),
                ),
                ErrorCode::RateLimitHit => {
                    let seconds = err
                        .data
                        .get("retry-after")
                        .and_then(serde_json::Value::as_f64)
                        .unwrap_or(60.0)
                        .ceil()
                        .max(1.0) as u64;
                    let mut response = again(
                        StatusCode::TOO_MANY_REQUESTS,
                        format!(
                            "Too many failed login attempts for this account. \
                             Try again in {seconds} seconds."
                        ),
                    )
                    .await;
                    if let Ok(value) = header::HeaderValue::from_str(&seconds.to_string()) {
                        response.headers_mut().insert(header::RETRY_AFTER, value);
                    }
                    return response;
                }
                _ => (StatusCode::BAD_REQUEST, err.msg.clone()),
            };
            again(status, text).await
        }
        Err(other) => failure(other),
    }
}

/// POST /accounts/logout/ — ends the session (its CSRF token in `X-CSRFToken` or the form field
/// `csrfmiddlewaretoken`), forgets the cookie, 303 to `/login/`. Without a valid session there
/// is nothing to end: straight to `/login/`.
pub async fn logout(ctx: web::Data<Context>, req: HttpRequest, body: Bytes) -> HttpResponse {
    let session = match session_of(&ctx, &req).await {
        Ok(Some(session)) => session,
        Ok(None) => {
            return redirect(StatusCode::SEE_OTHER, "/login/")
                .cookie(cookies::session_removal(&ctx))
                .finish()
        }
        Err(err) => return failure(err),
    };
    let mut form = ParamMap::default();
    let _ = form.add_form(&body);
    let sent = req
        .headers()
        .get(CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| form.raw("csrfmiddlewaretoken").map(str::to_owned))
        .unwrap_or_default();
    if !session.csrf_matches(&sent) {
        return message(
            StatusCode::FORBIDDEN,
            "CSRF verification failed",
            "The request did not carry this session's CSRF token, so it was refused.",
        );
    }
    if let Err(err) = sessions::do_logout(&ctx, &session).await {
        return failure(err);
    }
    redirect(StatusCode::SEE_OTHER, "/login/")
        .cookie(cookies::session_removal(&ctx))
        .finish()
}

/// GET /favicon.ico — the organization's icon (an SVG, which browsers accept as a favicon).
pub async fn favicon() -> HttpResponse {
    crate::routes::server::icon().await
}

/// GET /robots.txt — a chat server's pages are private: crawlers stay out.
pub async fn robots() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "public, max-age=86400"))
        .body("User-agent: *\nDisallow: /\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_paths_are_followed() {
        for ok in ["/", "/#narrow/channel/1-x", "/json/x?y=1"] {
            assert_eq!(local_path(ok), Some(ok));
        }
        for bad in [
            "",
            "//evil.example",
            "/\\evil.example",
            "https://evil.example/",
            "javascript:alert(1)",
            "/\nx",
            "evil",
        ] {
            assert_eq!(local_path(bad), None, "{bad:?}");
        }
    }
}

//! The web client's two cookies: `sessionid` (the session token: HttpOnly, SameSite=Lax, Path=/,
//! Secure when the server's external URL is https) and `csrftoken` (the CSRF token, readable by
//! the page's script, otherwise the same).

use actix_web::cookie::time::Duration;
use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::header::{HeaderMap, COOKIE};
use parley_actions::Context;

/// The session cookie's name (the reference's, Django's default).
pub const SESSION_COOKIE: &str = "sessionid";

/// The CSRF cookie's name (Django's default).
pub const CSRF_COOKIE: &str = "csrftoken";

/// Lifetime of a CSRF cookie given to a browser that is not signed in: a year, as Django's
/// `CSRF_COOKIE_AGE`.
const CSRF_COOKIE_SECONDS: i64 = 365 * 24 * 60 * 60;

/// The value of cookie `name` in the request's `Cookie` headers. Read leniently, one pair at a
/// time, so that another site's malformed cookie on the same host does not hide ours.
pub fn read(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| key.trim() == name)
        .map(|(_, value)| value.trim().trim_matches('"').to_owned())
        .filter(|value| !value.is_empty())
}

/// Whether cookies must be `Secure`: the server is reached over https.
fn secure(ctx: &Context) -> bool {
    ctx.realm.url.starts_with("https://")
}

fn build(ctx: &Context, name: &'static str, value: String, http_only: bool) -> Cookie<'static> {
    Cookie::build(name, value)
        .path("/")
        .http_only(http_only)
        .same_site(SameSite::Lax)
        .secure(secure(ctx))
        .finish()
}

/// The session cookie of a new session, living as long as the session.
pub fn session(ctx: &Context, token: String, max_age_seconds: i64) -> Cookie<'static> {
    let mut cookie = build(ctx, SESSION_COOKIE, token, true);
    cookie.set_max_age(Duration::seconds(max_age_seconds));
    cookie
}

/// The CSRF cookie holding `token`, for `max_age_seconds` (a year when None).
pub fn csrf(ctx: &Context, token: String, max_age_seconds: Option<i64>) -> Cookie<'static> {
    let mut cookie = build(ctx, CSRF_COOKIE, token, false);
    cookie.set_max_age(Duration::seconds(
        max_age_seconds.unwrap_or(CSRF_COOKIE_SECONDS),
    ));
    cookie
}

/// A cookie that makes the browser forget the session cookie.
pub fn session_removal(ctx: &Context) -> Cookie<'static> {
    let mut cookie = build(ctx, SESSION_COOKIE, String::new(), true);
    cookie.make_removal();
    cookie
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::HeaderValue;

    #[test]
    fn reads_one_cookie_among_others_even_malformed_ones() {
        let mut headers = HeaderMap::new();
        headers.append(
            COOKIE,
            HeaderValue::from_static("junk; other=1; sessionid=abc ; =x"),
        );
        headers.append(COOKIE, HeaderValue::from_static("csrftoken=\"tok\""));
        assert_eq!(read(&headers, "sessionid").as_deref(), Some("abc"));
        assert_eq!(read(&headers, "csrftoken").as_deref(), Some("tok"));
        assert_eq!(read(&headers, "missing"), None);
        let mut empty = HeaderMap::new();
        empty.append(COOKIE, HeaderValue::from_static("sessionid="));
        assert_eq!(read(&empty, "sessionid"), None);
    }
}

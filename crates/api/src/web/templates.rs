//! The server-rendered HTML: the login page, the sign-up page of an invitation, the shell of the
//! signed-in client and short message pages. Written with `maud`, which escapes every
//! interpolated value, so no organization- or user-provided text can become markup; the one
//! exception is the organization's description, which is already sanitized HTML (rendered from
//! Markdown as `realm_description` is), and the page params, which [`script_json`] makes safe
//! inside `<script>`.

use maud::{html, Markup, PreEscaped, DOCTYPE};
use parley_actions::web_pages::Organization;
use parley_wire::web::PageParams;

/// The icon every page shows in the browser's tab.
const ICON: &str = "/static/images/logo/parley-icon.svg";

/// The pages' own small style sheet (the client's bundle styles the app itself).
const STYLE: &str = "\
body{margin:0;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;background:#f5f5f7;color:#222}\
main{max-width:26rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.15)}\
header{display:flex;align-items:center;gap:.75rem}header img{width:48px;height:48px}h1{font-size:1.4rem;margin:0}h2{font-size:1.15rem;margin:1.5rem 0 0}\
.description{color:#555;margin:1rem 0}label{display:block;margin:1rem 0 .25rem;font-weight:600}\
input[type=email],input[type=password],input[type=text]{box-sizing:border-box;width:100%;padding:.5rem;font-size:1rem;border:1px solid #bbb;border-radius:4px}\
button{margin-top:1.25rem;width:100%;padding:.6rem;font-size:1rem;border:0;border-radius:4px;background:#2f6fde;color:#fff;cursor:pointer}\
.error{background:#fdecea;color:#8a1c12;border:1px solid #f5c2bd;border-radius:4px;padding:.6rem}\
.apps{margin-top:2rem;font-size:.9rem;color:#555}code{background:#eee;padding:.1rem .3rem;border-radius:3px;word-break:break-all}";

/// A page: head with title and icon, and `body`.
fn layout(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="robots" content="noindex";
                title { (title) }
                link rel="icon" type="image/svg+xml" href=(ICON);
                style { (PreEscaped(STYLE)) }
            }
            body { (body) }
        }
    }
}

/// The organization's name, icon and description, at the top of its pages.
fn organization_header(org: &Organization) -> Markup {
    html! {
        header {
            img src=(org.icon_url) alt="";
            h1 { (org.name) }
        }
        @if !org.description_html.trim().is_empty() {
            div class="description" { (PreEscaped(&org.description_html)) }
        }
    }
}

/// What the login form shows besides its fields.
#[derive(Debug, Default)]
pub struct LoginForm<'a> {
    /// The login CSRF token (also in the `csrftoken` cookie).
    pub csrf_token: &'a str,
    /// What went wrong with the last attempt.
    pub error: Option<&'a str>,
    /// The address typed last time.
    pub username: &'a str,
    /// Where to go after signing in (a local path).
    pub next: Option<&'a str>,
}

/// `GET /login/`: the organization, the form, and the URL to type into the other apps.
pub fn login_page(org: &Organization, form: &LoginForm<'_>) -> Markup {
    let title = if org.name.is_empty() {
        "Log in".to_owned()
    } else {
        format!("Log in to {}", org.name)
    };
    layout(
        &title,
        html! {
            main {
                (organization_header(org))
                @if let Some(error) = form.error {
                    p class="error" role="alert" { (error) }
                }
                form method="post" action="/login/" {
                    input type="hidden" name="csrfmiddlewaretoken" value=(form.csrf_token);
                    @if let Some(next) = form.next {
                        input type="hidden" name="next" value=(next);
                    }
                    label for="username" { "Email address" }
                    input id="username" type="email" name="username" value=(form.username)
                        autocomplete="username" required autofocus;
                    label for="password" { "Password" }
                    input id="password" type="password" name="password"
                        autocomplete="current-password" required;
                    button type="submit" { "Log in" }
                }
                p class="apps" {
                    "Using the Zulip mobile, desktop or terminal app? Enter this server URL: "
                    code { (org.url) }
                }
            }
        },
    )
}

/// What the sign-up form of an invitation shows besides its fields.
#[derive(Debug, Default)]
pub struct SignupForm<'a> {
    /// The CSRF token (also in the `csrftoken` cookie).
    pub csrf_token: &'a str,
    /// What went wrong with the last attempt.
    pub error: Option<&'a str>,
    /// The address typed last time.
    pub email: &'a str,
    /// The name typed last time.
    pub full_name: &'a str,
}

/// `GET /join/{key}/`: the sign-up form of an invitation link; it posts back to the same address.
pub fn signup_page(org: &Organization, form: &SignupForm<'_>) -> Markup {
    layout(
        "Create your account",
        html! {
            main {
                (organization_header(org))
                h2 { "Create your account" }
                @if let Some(error) = form.error {
                    p class="error" role="alert" { (error) }
                }
                form method="post" {
                    input type="hidden" name="csrfmiddlewaretoken" value=(form.csrf_token);
                    label for="email" { "Email" }
                    input id="email" type="email" name="email" value=(form.email)
                        autocomplete="email" required;
                    label for="full_name" { "Full name" }
                    input id="full_name" type="text" name="full_name" value=(form.full_name)
                        autocomplete="name" required;
                    label for="password" { "Password" }
                    input id="password" type="password" name="password"
                        autocomplete="new-password" required;
                    button type="submit" { "Sign up" }
                }
            }
        },
    )
}

/// A page with a title and one sentence, for links that cannot be used and failures.
pub fn message_page(title: &str, text: &str) -> Markup {
    layout(
        title,
        html! {
            main {
                h1 { (title) }
                p { (text) }
            }
        },
    )
}

/// JSON made safe to place inside a `<script>` element: `<`, `>` and `&` become `\u003c`,
/// `\u003e` and `\u0026`, so no `</script>` or `<!--` can end it, and U+2028/U+2029 are escaped
/// too. The result parses to the same value.
pub fn script_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| "{}".to_owned())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// `GET /` signed in: the shell the client's bundle fills, with its page params.
pub fn app_shell(params: &PageParams, css_url: &str, js_url: &str) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (params.realm_name) }
                link rel="icon" type="image/svg+xml" href=(ICON);
                link rel="stylesheet" href=(css_url);
                script id="page-params" type="application/json" { (PreEscaped(script_json(params))) }
                script type="module" src=(js_url) {}
            }
            body {
                div id="app" {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parley_domain::UserId;

    fn org(name: &str) -> Organization {
        Organization {
            name: name.to_owned(),
            description_html: "<p>Our <strong>team</strong></p>".to_owned(),
            icon_url: "http://x/icon.svg?a=1&b=\"2\"".to_owned(),
            url: "http://x".to_owned(),
        }
    }

    #[test]
    fn organization_text_is_escaped() {
        let page = login_page(
            &org("<script>alert(1)</script> & \"co\""),
            &LoginForm {
                csrf_token: "tok",
                error: Some("<b>bad</b>"),
                username: "\"><img src=x onerror=alert(1)>",
                next: Some("/\"><x>"),
            },
        )
        .into_string();
        assert!(!page.contains("<script>alert"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;co&quot;"));
        assert!(!page.contains("<b>bad</b>"));
        assert!(!page.contains("<img src=x"));
        assert!(!page.contains("<x>"));
        assert!(page.contains("icon.svg?a=1&amp;b=&quot;2&quot;"));
        // The description is sanitized HTML already.
        assert!(page.contains("<p>Our <strong>team</strong></p>"));
        assert!(page.contains("name=\"csrfmiddlewaretoken\" value=\"tok\""));
    }

    #[test]
    fn page_params_cannot_end_their_script() {
        let params = PageParams {
            csrf_token: "t".into(),
            user_id: UserId(7),
            email: "a@b".into(),
            full_name: "</script><script>alert(1)</script> &\u{2028}".into(),
            realm_name: "<!-- org".into(),
            realm_icon_url: "http://x/i.svg".into(),
            server_url: "http://x".into(),
            zulip_feature_level: 420,
        };
        let page = app_shell(&params, "/static/app.1.css", "/static/app.1.js").into_string();
        let start = page.find("type=\"application/json\">").unwrap() + 24;
        let end = start + page[start..].find("</script>").unwrap();
        let json: serde_json::Value = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(json["full_name"], params.full_name);
        assert_eq!(json["realm_name"], "<!-- org");
        assert_eq!(json["user_id"], 7);
        assert!(page.contains("<title>&lt;!-- org</title>"));
        assert!(page.contains("<div id=\"app\"></div>"));
        assert!(page.contains("<script type=\"module\" src=\"/static/app.1.js\"></script>"));
    }
}

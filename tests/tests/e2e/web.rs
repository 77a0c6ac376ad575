//! The web client's server side: the login page and sessions, the `sessionid` and `csrftoken`
//! cookies, CSRF refusal, `/json` serving the same endpoints as `/api/v1` (long-polls included),
//! what ends a session (logout, password change, deactivation), uploads fetched with the
//! session, an invitation sign-up that ends signed in, and the client's static files.

use actix_web::http::Method;
use parley_actions::rate_limit::{RateLimiter, RateLimits};
use parley_actions::RealmAddress;
use parley_domain::{Role, UserId};
use parley_tests::{backend_test, set_cookie, Backend, Response, TestApp};
use serde_json::{json, Value};
use std::io::Read;
use std::time::Duration;

/// The page params of the shell `GET /` answers.
fn page_params(page: &Response) -> Value {
    let start = page
        .text
        .find("<script id=\"page-params\" type=\"application/json\">")
        .expect("page params")
        + "<script id=\"page-params\" type=\"application/json\">".len();
    let end = start + page.text[start..].find("</script>").unwrap();
    serde_json::from_str(&page.text[start..end]).unwrap()
}

fn header(response: &Response, name: &str) -> String {
    response
        .headers
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

backend_test! {
    async fn signed_out_browsers_get_the_login_page(app) {
        let browser = app.browser();
        let root = browser.get("/").await;
        assert_eq!(root.status, 302);
        assert_eq!(header(&root, "location"), "/login/");
        assert!(set_cookie(&root, "sessionid").is_none());

        let page = browser.get("/login/").await;
        assert_eq!(page.status, 200);
        assert!(header(&page, "content-type").starts_with("text/html"));
        assert_eq!(header(&page, "cache-control"), "no-store");
        assert!(header(&page, "content-security-policy").contains("frame-ancestors 'none'"));
        assert!(page.text.contains("<title>Log in to Test Org</title>"), "{}", page.text);
        assert!(page.text.contains("<h1>Test Org</h1>"));
        assert!(page.text.contains("src=\"http://parley.test/static/images/logo/parley-icon.svg\""));
        for field in ["name=\"username\"", "name=\"password\"", "name=\"csrfmiddlewaretoken\""] {
            assert!(page.text.contains(field), "{field}");
        }
        // The address to type into the other apps.
        assert!(page.text.contains("mobile, desktop or terminal app"));
        assert!(page.text.contains("<code>http://parley.test</code>"));
        // The login CSRF cookie: readable by scripts, SameSite=Lax, for the whole site.
        let cookie = set_cookie(&page, "csrftoken").expect("csrftoken set");
        assert!(cookie.contains("Path=/"), "{cookie}");
        assert!(cookie.contains("SameSite=Lax"), "{cookie}");
        assert!(!cookie.contains("HttpOnly"), "{cookie}");
        assert!(!cookie.contains("Secure"), "{cookie}");
        let token = browser.cookie("csrftoken").unwrap();
        assert!(page.text.contains(&format!("value=\"{token}\"")));
        // A second visit keeps the token.
        let again = browser.get("/login/").await;
        assert!(set_cookie(&again, "csrftoken").is_none());
        assert!(again.text.contains(&token));

        // Unauthenticated API calls in the browser's scope do not ask for Basic credentials.
        let json = app.json_request(Method::GET, "/users/me").send().await;
        assert_eq!(header(&json, "www-authenticate"), "Session realm=\"zulip\"");
        let body = json.error(401, "UNAUTHORIZED");
        assert_eq!(body["msg"], "Not logged in: API authentication or user session required");
        let api = app.get("/users/me").send().await;
        assert_eq!(header(&api, "www-authenticate"), "Basic realm=\"zulip\"");

        let robots = app.get_page("/robots.txt").send().await;
        assert_eq!(robots.status, 200);
        assert!(robots.text.contains("User-agent: *"));
        let icon = app.get_page("/favicon.ico").send().await;
        assert_eq!(icon.status, 200);
        assert!(icon.text.contains("<svg"));
    }
}

backend_test! {
    async fn logging_in_sets_the_session_and_opens_the_app(app) {
        let ann = app.create_user("ann@parley.test", "Ann & <Dev", Role::Member).await;
        let browser = app.browser();
        let login_token = {
            browser.get("/login/").await;
            browser.cookie("csrftoken").unwrap()
        };
        let done = browser.log_in("ANN@parley.test", &ann.password).await;
        assert_eq!(done.status, 303, "{}", done.text);
        assert_eq!(header(&done, "location"), "/");
        let session = set_cookie(&done, "sessionid").expect("sessionid set");
        for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=1209600"] {
            assert!(session.contains(attribute), "{attribute}: {session}");
        }
        assert!(!session.contains("Secure"), "{session}");
        // The CSRF token changes at login, and the session's is the cookie's.
        let csrf = set_cookie(&done, "csrftoken").expect("csrftoken set");
        assert!(!csrf.contains("HttpOnly"), "{csrf}");
        let token = browser.cookie("csrftoken").unwrap();
        assert_ne!(token, login_token);

        let shell = browser.get("/").await;
        assert_eq!(shell.status, 200, "{}", shell.text);
        assert_eq!(header(&shell, "cache-control"), "no-store");
        assert!(header(&shell, "content-security-policy").contains("script-src 'self'"));
        assert!(shell.text.contains("<div id=\"app\"></div>"));
        assert!(shell.text.contains("<title>Test Org</title>"));
        let params = page_params(&shell);
        assert_eq!(params["csrf_token"], token.as_str());
        assert_eq!(params["user_id"], ann.user_id.0);
        assert_eq!(params["email"], "ann@parley.test");
        assert_eq!(params["full_name"], "Ann & <Dev");
        assert_eq!(params["realm_name"], "Test Org");
        assert_eq!(params["realm_icon_url"], "http://parley.test/static/images/logo/parley-icon.svg");
        assert_eq!(params["server_url"], "http://parley.test");
        assert_eq!(params["zulip_feature_level"], 420);
        // The name cannot close the script.
        assert!(!shell.text.contains("<Dev"));
        // The bundle, by its hashed names.
        let css = regex_like(&shell.text, "href=\"/static/app.", ".css\"");
        assert!(css.chars().all(|c| c.is_ascii_hexdigit()), "{css}");
        let js = regex_like(&shell.text, "src=\"/static/app.", ".js\"");
        assert_eq!(css.len(), 10);
        assert_eq!(js.len(), 10);
        assert!(shell.text.contains(&format!("<script type=\"module\" src=\"/static/app.{js}.js\"></script>")));

        // Signed in, the login page moves on.
        let page = browser.get("/login/").await;
        assert_eq!(page.status, 302);
        assert_eq!(header(&page, "location"), "/");

        // `next` is followed to local paths only.
        let other = app.browser();
        other.get("/login/?next=%2F%23narrow%2Fis%2Fstarred").await;
        let token = other.cookie("csrftoken").unwrap();
        let fields = |next: &'static str| {
            vec![("username", "ann@parley.test".to_owned()), ("password", ann.password.clone()),
                 ("csrfmiddlewaretoken", token.clone()), ("next", next.to_owned())]
        };
        for (next, to) in [("/#narrow/is/starred", "/#narrow/is/starred"), ("//evil.example/", "/"),
                           ("https://evil.example/", "/")] {
            let b = app.browser();
            b.set("csrftoken", Some(&token));
            let f = fields(next);
            let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let done = b.post_form("/login/", &f).await;
            assert_eq!(done.status, 303, "{}", done.text);
            assert_eq!(header(&done, "location"), to, "{next}");
        }
    }
}

/// A message to `general` on this request.
fn send(b: parley_tests::RequestBuilder<'_>) -> parley_tests::RequestBuilder<'_> {
    b.param("type", "stream")
        .param("to", "general")
        .param("topic", "t")
        .param("content", "hi")
}

/// The text between `before` and `after` in `text`.
fn regex_like(text: &str, before: &str, after: &str) -> String {
    let start = text
        .find(before)
        .unwrap_or_else(|| panic!("{before} in {text}"))
        + before.len();
    let end = start + text[start..].find(after).unwrap();
    text[start..end].to_owned()
}

#[actix_web::test]
async fn cookies_are_secure_when_the_server_is_reached_over_https() {
    for backend in Backend::available() {
        let app = TestApp::start(backend)
            .await
            .reconfigured(|mut ctx| {
                ctx.realm = RealmAddress::parse("https://chat.parley.test").unwrap();
                ctx
            })
            .await;
        let browser = app.browser();
        let page = browser.get("/login/").await;
        assert!(set_cookie(&page, "csrftoken").unwrap().contains("Secure"));
        assert!(page.text.contains("<code>https://chat.parley.test</code>"));
        let done = browser.log_in(&app.owner.email, &app.owner.password).await;
        assert_eq!(done.status, 303, "{}", done.text);
        let session = set_cookie(&done, "sessionid").unwrap();
        assert!(session.contains("Secure"), "{session}");
        assert!(session.contains("HttpOnly"), "{session}");
    }
}

backend_test! {
    async fn failed_logins_say_what_is_wrong(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let browser = app.browser();
        let wrong = browser.log_in("ann@parley.test", "not her password").await;
        assert_eq!(wrong.status, 401);
        assert!(wrong.text.contains("Wrong email address or password"), "{}", wrong.text);
        assert!(wrong.text.contains("value=\"ann@parley.test\""), "the address is kept");
        assert!(set_cookie(&wrong, "sessionid").is_none());
        let unknown = browser.log_in("nobody@parley.test", "whatever").await;
        assert_eq!(unknown.status, 401);
        assert!(unknown.text.contains("Wrong email address or password"));
        let empty = browser.log_in("ann@parley.test", "").await;
        assert_eq!(empty.status, 400);
        assert!(empty.text.contains("Enter your email address and your password"));

        // A form without its cookie (or with another token) is refused before any password check.
        let stranger = app.browser();
        let stale = stranger.post_form("/login/", &[("username", "ann@parley.test"),
            ("password", &ann.password), ("csrfmiddlewaretoken", "abc")]).await;
        assert_eq!(stale.status, 403);
        assert!(stale.text.contains("login form expired"), "{}", stale.text);
        assert!(set_cookie(&stale, "sessionid").is_none());
        // ... and hands out a token to try again with.
        let token = stranger.cookie("csrftoken").expect("a fresh token");
        let retried = stranger.post_form("/login/", &[("username", "ann@parley.test"),
            ("password", &ann.password), ("csrfmiddlewaretoken", &token)]).await;
        assert_eq!(retried.status, 303, "{}", retried.text);

        // A deactivated account is told so (after its password is checked).
        app.delete(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner).send().await.success();
        let gone = app.browser().log_in("ann@parley.test", &ann.password).await;
        assert_eq!(gone.status, 401);
        assert!(gone.text.contains("deactivated"), "{}", gone.text);

        // Organization text on the page is escaped.
        app.patch("/realm").as_user(&app.owner)
            .param("name", "<script>alert(1)</script> & Co")
            .param("description", "Hello <img src=x onerror=alert(1)> **team**")
            .send().await.success();
        let page = app.browser().get("/login/").await;
        assert!(!page.text.contains("<script>alert"), "{}", page.text);
        assert!(!page.text.contains("<img src=x"), "{}", page.text);
        assert!(page.text.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co"), "{}", page.text);
        assert!(page.text.contains("<strong>team</strong>"), "{}", page.text);
    }
}

#[actix_web::test]
async fn the_login_form_shares_the_fetch_api_key_limit() {
    for backend in Backend::available() {
        let limits = RateLimits {
            login_failures_by_username: RateLimiter::new(3, Duration::from_secs(600)),
            ..RateLimits::default()
        };
        let app = TestApp::start_with_limits(backend, limits).await;
        let ann = app
            .create_user("ann@parley.test", "Ann", Role::Member)
            .await;
        app.post("/fetch_api_key")
            .param("username", "ann@parley.test")
            .param("password", "guess")
            .send()
            .await
            .error(401, "AUTHENTICATION_FAILED");
        let browser = app.browser();
        for _ in 0..2 {
            assert_eq!(browser.log_in("ann@parley.test", "guess").await.status, 401);
        }
        // The allowance is used before the password is checked: even the right one waits.
        let limited = browser.log_in("ann@parley.test", &ann.password).await;
        assert_eq!(limited.status, 429, "{}", limited.text);
        assert!(
            limited.text.contains("Too many failed login attempts"),
            "{}",
            limited.text
        );
        assert!(header(&limited, "retry-after").parse::<u64>().unwrap() > 0);
        assert!(set_cookie(&limited, "sessionid").is_none());
        app.post("/fetch_api_key")
            .param("username", "ann@parley.test")
            .param("password", &ann.password)
            .send()
            .await
            .error(429, "RATE_LIMIT_HIT");
        // Other accounts are not held up.
        app.browser().log_in_as(&app.owner).await;
    }
}

backend_test! {
    async fn state_changing_json_requests_need_the_csrf_token(app) {
        let browser = app.browser();
        browser.log_in_as(&app.owner).await;
        let token = browser.cookie("csrftoken").unwrap();
        // No header.
        let response = browser.request(Method::POST, "/json/messages");
        let body = send(response).send().await.error(403, "CSRF_FAILED");
        assert_eq!(body["msg"], "CSRF verification failed.");
        // A header that is not the cookie's.
        let response = browser.request(Method::POST, "/json/messages").header("X-CSRFToken", "nope");
        send(response).send().await.error(403, "CSRF_FAILED");
        // Cookie and header agree, but not with the session's own token.
        let forged = app.page(Method::POST, "/json/messages")
            .cookie("sessionid", &browser.cookie("sessionid").unwrap())
            .cookie("csrftoken", "forgedforgedforgedforgedforged12")
            .header("X-CSRFToken", "forgedforgedforgedforgedforged12");
        send(forged).send().await.error(403, "CSRF_FAILED");
        // Every state-changing method, not only POST, on any path of the scope (one without a
        // route included): refused before any handler runs.
        for (method, path) in [(Method::PATCH, "/json/settings"), (Method::DELETE, "/json/users/me"),
                               (Method::PUT, "/json/users/me/subscriptions"), (Method::PATCH, "/json/no/such/path")] {
            let forged = browser.request(method.clone(), path).param("full_name", "Forged");
            forged.send().await.error(403, "CSRF_FAILED");
            let wrong = browser.request(method.clone(), path).header("X-CSRFToken", "nope")
                .param("full_name", "Forged");
            wrong.send().await.error(403, "CSRF_FAILED");
        }
        let me = browser.json(Method::GET, "/users/me").send().await.success();
        assert_ne!(me["full_name"], "Forged");
        // Nothing was sent.
        let none = browser.send(browser.json(Method::GET, "/messages")
            .param("anchor", "newest").param("num_before", 10).param("num_after", 0)).await.success();
        assert!(!none["messages"].as_array().unwrap().iter().any(|m| m["content"] == "<p>hi</p>"));
        // With the token: sent. Reads need none.
        let sent = send(browser.json(Method::POST, "/messages")).send().await.success();
        assert!(sent["id"].as_i64().unwrap() > 0);
        let read = browser.request(Method::GET, "/json/users/me").send().await.success();
        assert_eq!(read["user_id"], app.owner.user_id.0);
        assert_eq!(token, browser.cookie("csrftoken").unwrap());
        // HTTP Basic stays the way into /api/v1; a session cookie there means nothing.
        browser.request(Method::GET, "/api/v1/users/me").send().await.error(401, "UNAUTHORIZED");
    }
}

backend_test! {
    async fn json_serves_the_same_endpoints_as_api_v1(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let browser = app.browser();
        browser.log_in_as(&ann).await;
        for path in ["/users/me", "/users", "/streams", "/users/me/subscriptions", "/server_settings"] {
            let api = app.get(path).as_user(&ann).send().await.success();
            let json = browser.json(Method::GET, path).send().await.success();
            assert_eq!(api, json, "{path}");
        }
        // Parameters and errors alike.
        let api = app.get("/messages").as_user(&ann).param("anchor", "bogus").send().await;
        let json = browser.json(Method::GET, "/messages").param("anchor", "bogus").send().await;
        assert_eq!((api.status, api.json), (json.status, json.json));
        let body = browser.json(Method::GET, "/no/such/endpoint").send().await.error(404, "BAD_REQUEST");
        assert_eq!(body["msg"], "Not Found");
        let body = browser.json(Method::PUT, "/users/me").send().await.error(405, "BAD_REQUEST");
        assert!(body["allowed_methods"].as_array().is_some());
        // Writes through /json are the same writes.
        let id = browser.json(Method::POST, "/messages").param("type", "stream").param("to", "general")
            .param("topic", "web").param("content", "from the browser").send().await.success()["id"]
            .as_i64().unwrap();
        let got = app.get(&format!("/messages/{id}")).as_user(&app.owner).send().await.success();
        assert_eq!(got["message"]["sender_id"], ann.user_id.0);
        assert_eq!(got["raw_content"], "from the browser");
        browser.json(Method::PATCH, "/settings").param("full_name", "Ann B").send().await.success();
        let me = app.get("/users/me").as_user(&ann).send().await.success();
        assert_eq!(me["full_name"], "Ann B");
    }
}

#[actix_web::test]
async fn json_long_polls_work_and_cost_no_allowance() {
    for backend in Backend::available() {
        let limits = RateLimits {
            api_by_user: RateLimiter::new(6, Duration::from_secs(600)),
            ..RateLimits::default()
        };
        let app = TestApp::start_with_limits(backend, limits).await;
        let bob = app
            .create_user("bob@parley.test", "Bob", Role::Member)
            .await;
        let browser = app.browser();
        browser.log_in_as(&bob).await;
        let snapshot = browser
            .json(Method::POST, "/register")
            .param("event_types", json!(["realm_user"]).to_string())
            .send()
            .await
            .success();
        let queue = snapshot["queue_id"].as_str().unwrap().to_owned();
        let mut last = snapshot["last_event_id"].as_i64().unwrap();
        // A blocking poll waits until a message arrives.
        for n in 0..8 {
            let poll = browser
                .json(Method::GET, "/events")
                .param("queue_id", &queue)
                .param("last_event_id", last)
                .send();
            let create = async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                app.create_user(&format!("u{n}@parley.test"), &format!("U{n}"), Role::Member)
                    .await
            };
            let (body, created) = futures_util::future::join(poll, create).await;
            let body = body.success();
            let events = body["events"].as_array().unwrap();
            assert!(!events.is_empty(), "{events:?}");
            assert!(
                events.iter().all(|e| e["type"] == "realm_user"),
                "{events:?}"
            );
            assert!(
                events
                    .iter()
                    .any(|e| e["person"]["user_id"] == created.user_id.0),
                "{events:?}"
            );
            last = events.last().unwrap()["id"].as_i64().unwrap();
        }
        // Eight polls, more than the allowance left, and the allowance is still there.
        for _ in 0..5 {
            browser
                .json(Method::GET, "/users/me")
                .send()
                .await
                .success();
        }
        browser
            .json(Method::GET, "/users/me")
            .send()
            .await
            .error(429, "RATE_LIMIT_HIT");
        browser
            .json(Method::DELETE, "/events")
            .param("queue_id", &queue)
            .send()
            .await
            .error(429, "RATE_LIMIT_HIT");
    }
}

backend_test! {
    async fn logging_out_ends_the_session(app) {
        let browser = app.browser();
        browser.log_in_as(&app.owner).await;
        let session = browser.cookie("sessionid").unwrap();
        // Without the CSRF token, nothing happens.
        let refused = browser.send(browser.request(Method::POST, "/accounts/logout/")).await;
        assert_eq!(refused.status, 403);
        browser.json(Method::GET, "/users/me").send().await.success();
        // With it (as a header, or as the form field): the session ends.
        let token = browser.cookie("csrftoken").unwrap();
        let out = browser.post_form("/accounts/logout/", &[("csrfmiddlewaretoken", &token)]).await;
        assert_eq!(out.status, 303);
        assert_eq!(header(&out, "location"), "/login/");
        let removal = set_cookie(&out, "sessionid").unwrap();
        assert!(removal.contains("Max-Age=0"), "{removal}");
        assert!(browser.cookie("sessionid").is_none());
        // The old cookie opens nothing any more.
        let old = app.json_request(Method::GET, "/users/me").cookie("sessionid", &session).send().await;
        old.error(401, "UNAUTHORIZED");
        let root = app.get_page("/").cookie("sessionid", &session).send().await;
        assert_eq!(root.status, 302);
        assert!(set_cookie(&root, "sessionid").unwrap().contains("Max-Age=0"));
        // Logging out again is harmless.
        let again = browser.send(browser.request(Method::POST, "/accounts/logout/")
            .cookie("sessionid", &session)).await;
        assert_eq!(again.status, 303);
        let id = app.owner.user_id;
        let left = app.ctx.db.run(move |c| parley_storage::sessions::for_user(c, id)).await.unwrap();
        assert!(left.is_empty(), "{left:?}");
    }
}

async fn sessions_of(app: &TestApp, id: UserId) -> usize {
    app.ctx
        .db
        .run(move |c| parley_storage::sessions::for_user(c, id))
        .await
        .unwrap()
        .len()
}

backend_test! {
    async fn a_password_change_ends_the_other_sessions(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let laptop = app.browser();
        laptop.log_in_as(&ann).await;
        let phone = app.browser();
        phone.log_in_as(&ann).await;
        assert_eq!(sessions_of(&app, ann.user_id).await, 2);
        // The stored key is a hash, not the cookie.
        let cookie = laptop.cookie("sessionid").unwrap();
        let id = ann.user_id;
        let stored = app.ctx.db.run(move |c| parley_storage::sessions::for_user(c, id)).await.unwrap();
        assert!(stored.iter().all(|s| s.token_hash != cookie && s.token_hash.len() == 64));

        laptop.json(Method::PATCH, "/settings").param("old_password", &ann.password)
            .param("new_password", "a-new-long-password").send().await.success();
        // The laptop that changed it stays signed in; the phone is signed out.
        laptop.json(Method::GET, "/users/me").send().await.success();
        phone.json(Method::GET, "/users/me").send().await.error(401, "UNAUTHORIZED");
        assert_eq!(phone.get("/").await.status, 302);
        assert_eq!(sessions_of(&app, ann.user_id).await, 1);

        // A change through the API (no session) ends them all.
        app.patch("/settings").as_user(&ann).param("old_password", "a-new-long-password")
            .param("new_password", "a-third-long-password").send().await.success();
        laptop.json(Method::GET, "/users/me").send().await.error(401, "UNAUTHORIZED");
        assert_eq!(sessions_of(&app, ann.user_id).await, 0);

        // So does the operator's `parley change-password`.
        let desk = app.browser();
        assert_eq!(desk.log_in("ann@parley.test", "a-third-long-password").await.status, 303);
        parley_actions::operator::do_set_password(&app.ctx, "ann@parley.test", "a-fourth-password")
            .await.unwrap();
        desk.json(Method::GET, "/users/me").send().await.error(401, "UNAUTHORIZED");
        assert_eq!(sessions_of(&app, ann.user_id).await, 0);
    }
}

backend_test! {
    async fn deactivation_ends_every_session(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let browser = app.browser();
        browser.log_in_as(&ann).await;
        let other = app.browser();
        other.log_in_as(&ann).await;
        browser.json(Method::GET, "/users/me").send().await.success();
        app.delete(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner).send().await.success();
        assert_eq!(sessions_of(&app, ann.user_id).await, 0);
        browser.json(Method::GET, "/users/me").send().await.error(401, "UNAUTHORIZED");
        assert_eq!(other.get("/").await.status, 302);
        // Reactivating does not bring the sessions back.
        app.post(&format!("/users/{}/reactivate", ann.user_id.0)).as_user(&app.owner).send().await.success();
        browser.json(Method::GET, "/users/me").send().await.error(401, "UNAUTHORIZED");
        // Deactivating one's own account through the browser ends that session too.
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let own = app.browser();
        own.log_in_as(&bob).await;
        own.json(Method::DELETE, "/users/me").send().await.success();
        own.json(Method::GET, "/users/me").send().await.error(401, "UNAUTHORIZED");
        assert_eq!(sessions_of(&app, bob.user_id).await, 0);
    }
}

backend_test! {
    async fn uploads_are_fetched_with_the_session(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let browser = app.browser();
        browser.log_in_as(&ann).await;
        let body = browser.json(Method::POST, "/user_uploads")
            .files(&[("notes.txt", "text/plain", b"from the browser")]).send().await.success();
        let url = body["url"].as_str().unwrap().to_owned();
        let got = browser.get(&url).await;
        assert_eq!(got.status, 200, "{}", got.text);
        assert_eq!(got.text, "from the browser");
        // Without the session: 401, and no Basic challenge for the browser to prompt with.
        let anonymous = app.get_page(&url).send().await;
        assert_eq!(anonymous.status, 401);
        assert_eq!(header(&anonymous, "www-authenticate"), "Session realm=\"zulip\"");
        // Basic credentials still work there, as for the apps.
        let basic = app.get_page(&url).as_user(&ann).send().await;
        assert_eq!(basic.text, "from the browser");
        // Someone else's session cannot read it before a message links it.
        let owner = app.browser();
        owner.log_in_as(&app.owner).await;
        assert_eq!(owner.get(&url).await.status, 403);

        // Image thumbnails too.
        let png = parley_tests::images::png(1200, 900);
        let body = browser.json(Method::POST, "/user_uploads")
            .files(&[("big.png", "image/png", &png)]).send().await.success();
        let path = body["url"].as_str().unwrap().strip_prefix("/user_uploads/").unwrap().to_owned();
        let thumbnail = browser.get(&format!("/user_uploads/thumbnail/{path}/840x560.webp")).await;
        assert_eq!(thumbnail.status, 200);
        assert_eq!(header(&thumbnail, "content-type"), "image/webp");
        assert_eq!(app.get_page(&format!("/user_uploads/thumbnail/{path}/840x560.webp")).send().await.status, 401);
    }
}

backend_test! {
    async fn an_invitation_sign_up_ends_signed_in(app) {
        let link = app.post("/invites/multiuse").as_user(&app.owner)
            .param("invite_as", 400).param("stream_ids", "[]").send().await.success();
        let url = link["invite_link"].as_str().unwrap();
        let path = url.strip_prefix("http://parley.test").unwrap().to_owned();
        let browser = app.browser();
        let page = browser.get(&path).await;
        assert_eq!(page.status, 200);
        let token = browser.cookie("csrftoken").expect("the form's CSRF cookie");
        assert!(page.text.contains(&format!("value=\"{token}\"")));
        // Without the token: refused, nobody created.
        let forged = app.browser().post_form(&path, &[("email", "cy@parley.test"),
            ("full_name", "Cy"), ("password", "a-long-password")]).await;
        assert_eq!(forged.status, 403);
        let users = app.get("/users").as_user(&app.owner).send().await.success();
        assert!(!users["members"].as_array().unwrap().iter().any(|u| u["email"] == "cy@parley.test"));

        let done = browser.post_form(&path, &[("email", "cy@parley.test"), ("full_name", "Cy & Co"),
            ("password", "a-long-password"), ("csrfmiddlewaretoken", &token)]).await;
        assert_eq!(done.status, 303, "{}", done.text);
        assert_eq!(header(&done, "location"), "/");
        assert!(set_cookie(&done, "sessionid").unwrap().contains("HttpOnly"));
        let shell = browser.get("/").await;
        assert_eq!(shell.status, 200);
        let params = page_params(&shell);
        assert_eq!(params["full_name"], "Cy & Co");
        assert_eq!(params["email"], "cy@parley.test");
        assert_eq!(params["csrf_token"], browser.cookie("csrftoken").unwrap().as_str());
        browser.json(Method::POST, "/messages").param("type", "stream").param("to", "general")
            .param("topic", "hello").param("content", "I am in").send().await.success();
    }
}

fn decompress(response: &Response) -> Vec<u8> {
    let mut out = Vec::new();
    match header(response, "content-encoding").as_str() {
        "br" => {
            brotli::Decompressor::new(&response.bytes[..], 4096)
                .read_to_end(&mut out)
                .unwrap();
        }
        "gzip" => {
            flate2::read::GzDecoder::new(&response.bytes[..])
                .read_to_end(&mut out)
                .unwrap();
        }
        _ => out = response.bytes.clone(),
    }
    out
}

#[actix_web::test]
async fn static_files_are_hashed_compressed_and_cached() {
    let app = TestApp::start(Backend::Sqlite).await;
    let browser = app.browser();
    browser.log_in_as(&app.owner).await;
    let shell = browser.get("/").await;
    for (name, kind) in [("app.js", "text/javascript"), ("app.css", "text/css")] {
        let (stem, ext) = name.split_once('.').unwrap();
        let attribute = if ext == "js" { "src" } else { "href" };
        let hash = regex_like(
            &shell.text,
            &format!("{attribute}=\"/static/{stem}."),
            &format!(".{ext}\""),
        );
        let plain = app.get_page(&format!("/static/{name}")).send().await;
        assert_eq!(plain.status, 200);
        assert!(header(&plain, "content-type").starts_with(kind), "{name}");
        assert_eq!(header(&plain, "cache-control"), "no-cache");
        assert_eq!(header(&plain, "content-encoding"), "");
        let digest = sha2_hex(&plain.bytes);
        assert_eq!(
            hash,
            digest[..10],
            "{name}: the name carries the content's hash"
        );
        let hashed_path = format!("/static/{stem}.{hash}.{ext}");
        for encoding in ["br", "gzip", "identity"] {
            let got = app
                .get_page(&hashed_path)
                .header("Accept-Encoding", &format!("{encoding}, x"))
                .send()
                .await;
            assert_eq!(got.status, 200);
            assert_eq!(
                header(&got, "cache-control"),
                "public, max-age=31536000, immutable"
            );
            assert!(header(&got, "content-type").starts_with(kind));
            assert_eq!(decompress(&got), plain.bytes, "{name} {encoding}");
            // The asked-for coding, or none when that copy was not worth keeping (tiny files).
            let sent = header(&got, "content-encoding");
            if encoding == "identity" {
                assert_eq!(sent, "");
            } else {
                assert!(
                    sent == encoding || sent.is_empty(),
                    "{name} {encoding}: {sent}"
                );
                assert!(sent.is_empty() || header(&got, "vary") == "Accept-Encoding");
            }
        }
        // Revalidation.
        let etag = header(&plain, "etag");
        let fresh = app
            .get_page(&format!("/static/{name}"))
            .header("If-None-Match", &etag)
            .send()
            .await;
        assert_eq!(fresh.status, 304);
        assert!(fresh.bytes.is_empty());
    }
    // Preferences: brotli when both are accepted, nothing refused with q=0.
    let app_js = app.get_page("/static/app.js").send().await;
    if app_js.bytes.len() > 200 {
        let both = app
            .get_page("/static/app.js")
            .header("Accept-Encoding", "gzip, deflate, br")
            .send()
            .await;
        assert_eq!(header(&both, "content-encoding"), "br");
        let no_br = app
            .get_page("/static/app.js")
            .header("Accept-Encoding", "br;q=0, gzip")
            .send()
            .await;
        assert_eq!(header(&no_br, "content-encoding"), "gzip");
    }
    assert_eq!(
        app.get_page("/static/app.0000000000.js")
            .send()
            .await
            .status,
        404
    );
    assert_eq!(app.get_page("/static/nothing.css").send().await.status, 404);
    // The fixed files under /static are still there.
    assert_eq!(
        app.get_page("/static/images/logo/parley-icon.svg")
            .send()
            .await
            .status,
        200
    );
}

fn sha2_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

//! Authentication: HTTP Basic with API keys, and `POST /fetch_api_key`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_actions::rate_limit::{RateLimiter, RateLimits};
use parley_domain::user::EmailAddressVisibility;
use parley_domain::Role;
use parley_storage::users;
use parley_tests::{backend_test, Backend, TestApp};
use std::time::Duration;

backend_test! {
    async fn requests_without_credentials_are_401(app) {
        let response = app.get("/users").send().await;
        assert!(response.headers.contains_key("www-authenticate"));
        let body = response.error(401, "UNAUTHORIZED");
        assert!(body["msg"].as_str().unwrap().contains("Not logged in"));
        app.get("/users").authorization("Bearer abc").send().await.error(401, "UNAUTHORIZED");
        app.get("/users").authorization("Basic ***").send().await.error(401, "UNAUTHORIZED");
    }
}

backend_test! {
    async fn wrong_key_and_unknown_email_are_invalid_api_key(app) {
        let owner = app.owner.clone();
        app.get("/users").basic_auth(&owner.email, "x".repeat(32).as_str()).send().await
            .error(401, "INVALID_API_KEY");
        app.get("/users").basic_auth("nobody@parley.test", &owner.api_key).send().await
            .error(401, "INVALID_API_KEY");
        // The address is matched case-insensitively.
        app.get("/users").basic_auth(&owner.email.to_uppercase(), &owner.api_key).send().await.success();
    }
}

backend_test! {
    async fn deactivated_accounts_are_refused(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        // Ann authenticated just before (the cache keeps her), then an administrator
        // deactivates her: her very next request is refused.
        app.get("/users/me").as_user(&ann).send().await.success();
        app.delete(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner).send().await.success();
        let body = app.get("/users/me").as_user(&ann).send().await.error(401, "USER_DEACTIVATED");
        assert_eq!(body["msg"], "Account is deactivated");
        app.post("/fetch_api_key").param("username", "ann@parley.test").param("password", &ann.password)
            .send().await.error(401, "USER_DEACTIVATED");
    }
}

backend_test! {
    async fn fetch_api_key_trades_password_for_key(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let body = app.post("/fetch_api_key")
            .param("username", "ANN@parley.test")
            .param("password", &ann.password)
            .send().await.success();
        assert_eq!(body["api_key"], ann.api_key.as_str());
        assert_eq!(body["email"], "ann@parley.test");
        assert_eq!(body["user_id"], ann.user_id.0);

        let body = app.post("/fetch_api_key").param("username", "ann@parley.test")
            .param("password", "wrong password").send().await.error(401, "AUTHENTICATION_FAILED");
        assert_eq!(body["msg"], "Your username or password is incorrect");
        app.post("/fetch_api_key").param("username", "ghost@parley.test")
            .param("password", "whatever").send().await.error(401, "AUTHENTICATION_FAILED");
        let body = app.post("/fetch_api_key").param("username", "ann@parley.test")
            .send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "password");
    }
}

backend_test! {
    async fn hidden_addresses_authenticate_with_their_placeholder(app) {
        let bea = app.create_user("bea@parley.test", "Bea", Role::Member).await;
        let id = bea.user_id;
        app.ctx.db.run(move |c| users::set_email_address_visibility(c, id, EmailAddressVisibility::Admins))
            .await.unwrap();
        let placeholder = format!("user{}@parley.test", id.0);
        let body = app.get("/users/me").basic_auth(&placeholder, &bea.api_key).send().await.success();
        assert_eq!(body["email"], placeholder.as_str());
        assert_eq!(body["delivery_email"], "bea@parley.test");
        // The real address still logs in; fetch_api_key hands back the API address.
        app.get("/users/me").basic_auth("bea@parley.test", &bea.api_key).send().await.success();
        let body = app.post("/fetch_api_key").param("username", "bea@parley.test")
            .param("password", &bea.password).send().await.success();
        assert_eq!(body["email"], placeholder.as_str());
    }
}

#[actix_web::test]
async fn api_requests_and_failed_logins_are_rate_limited() {
    for backend in Backend::available() {
        let limits = RateLimits {
            api_by_user: RateLimiter::new(3, Duration::from_secs(60)),
            login_failures_by_username: RateLimiter::new(2, Duration::from_secs(60)),
            ..RateLimits::default()
        };
        let app = TestApp::start_with_limits(backend, limits).await;
        for _ in 0..3 {
            app.get("/users/me")
                .as_user(&app.owner)
                .send()
                .await
                .success();
        }
        let response = app.get("/users/me").as_user(&app.owner).send().await;
        assert!(response.headers.contains_key("retry-after"));
        let body = response.error(429, "RATE_LIMIT_HIT");
        assert!(body["retry-after"].as_f64().unwrap() > 0.0);
        // Another user has an allowance of their own.
        let ann = app
            .create_user("ann@parley.test", "Ann", Role::Member)
            .await;
        app.get("/users/me").as_user(&ann).send().await.success();

        for _ in 0..2 {
            app.post("/fetch_api_key")
                .param("username", "ann@parley.test")
                .param("password", "guess")
                .send()
                .await
                .error(401, "AUTHENTICATION_FAILED");
        }
        // Even the right password waits once the failures are used up.
        app.post("/fetch_api_key")
            .param("username", "Ann@parley.test")
            .param("password", &ann.password)
            .send()
            .await
            .error(429, "RATE_LIMIT_HIT");
        app.post("/fetch_api_key")
            .param("username", "owner@parley.test")
            .param("password", &app.owner.password)
            .send()
            .await
            .success();
    }
}

#[actix_web::test]
async fn concurrent_guesses_and_both_addresses_share_one_login_allowance() {
    for backend in Backend::available() {
        let limits = RateLimits {
            login_failures_by_username: RateLimiter::new(3, Duration::from_secs(600)),
            ..RateLimits::default()
        };
        let app = TestApp::start_with_limits(backend, limits).await;
        app.create_user("ann@parley.test", "Ann", Role::Member)
            .await;
        // Twenty guesses at once: only the allowance gets to a password check.
        let guesses = (0..20).map(|n| {
            app.post("/fetch_api_key")
                .param("username", "ann@parley.test")
                .param("password", format!("guess {n}"))
                .send()
        });
        let statuses: Vec<u16> = futures_util::future::join_all(guesses)
            .await
            .into_iter()
            .map(|r| r.status)
            .collect();
        assert_eq!(
            statuses.iter().filter(|s| **s == 401).count(),
            3,
            "{statuses:?}"
        );
        assert_eq!(
            statuses.iter().filter(|s| **s == 429).count(),
            17,
            "{statuses:?}"
        );

        // A hidden address and its placeholder are one account, with one allowance.
        let bea = app
            .create_user("bea@parley.test", "Bea", Role::Member)
            .await;
        let id = bea.user_id;
        app.ctx
            .db
            .run(move |c| {
                users::set_email_address_visibility(c, id, EmailAddressVisibility::Admins)
            })
            .await
            .unwrap();
        let placeholder = format!("user{}@parley.test", id.0);
        for username in ["bea@parley.test", placeholder.as_str(), "BEA@parley.test"] {
            app.post("/fetch_api_key")
                .param("username", username)
                .param("password", "guess")
                .send()
                .await
                .error(401, "AUTHENTICATION_FAILED");
        }
        app.post("/fetch_api_key")
            .param("username", placeholder.as_str())
            .param("password", &bea.password)
            .send()
            .await
            .error(429, "RATE_LIMIT_HIT");

        // Correct passwords do not use the allowance up; unknown addresses are limited too.
        for _ in 0..5 {
            app.post("/fetch_api_key")
                .param("username", "owner@parley.test")
                .param("password", &app.owner.password)
                .send()
                .await
                .success();
        }
        for _ in 0..3 {
            app.post("/fetch_api_key")
                .param("username", "ghost@parley.test")
                .param("password", "x")
                .send()
                .await
                .error(401, "AUTHENTICATION_FAILED");
        }
        app.post("/fetch_api_key")
            .param("username", "ghost@parley.test")
            .param("password", "x")
            .send()
            .await
            .error(429, "RATE_LIMIT_HIT");
    }
}

#[actix_web::test]
async fn long_polls_that_follow_their_queue_never_use_the_request_allowance() {
    for backend in Backend::available() {
        let limits = RateLimits {
            api_by_user: RateLimiter::new(4, Duration::from_secs(600)),
            ..RateLimits::default()
        };
        let app = TestApp::start_with_limits(backend, limits).await;
        let bob = app
            .create_user("bob@parley.test", "Bob", Role::Member)
            .await;
        let snapshot = app.register(&bob, &[]).await; // one request of four
        let queue = snapshot["queue_id"].as_str().unwrap().to_owned();
        let mut last = snapshot["last_event_id"].as_i64().unwrap();
        // A busy organization: something happens before every poll, and Bob polls again
        // right after each answer, many more times than his allowance.
        for n in 0..12 {
            app.create_user(&format!("u{n}@parley.test"), &format!("U{n}"), Role::Member)
                .await;
            let body = app
                .get("/events")
                .as_user(&bob)
                .param("queue_id", &queue)
                .param("last_event_id", last)
                .send()
                .await
                .success();
            let events = body["events"].as_array().unwrap();
            assert!(!events.is_empty());
            last = events.last().unwrap()["id"].as_i64().unwrap();
        }
        // Polling used none of the allowance his other requests need.
        for _ in 0..3 {
            app.get("/users/me").as_user(&bob).send().await.success();
        }
        app.get("/users/me")
            .as_user(&bob)
            .send()
            .await
            .error(429, "RATE_LIMIT_HIT");
        // Polls that are not long-polls following the queue are requests like any other.
        app.get("/events")
            .as_user(&bob)
            .param("queue_id", &queue)
            .param("last_event_id", -1)
            .param("dont_block", "true")
            .send()
            .await
            .error(429, "RATE_LIMIT_HIT");
        app.get("/events")
            .as_user(&bob)
            .param("queue_id", &queue)
            .param("last_event_id", last - 3)
            .send()
            .await
            .error(429, "RATE_LIMIT_HIT");
    }
}

/// On PostgreSQL a process takes a twentieth of an allowance at once and spends it itself, so a
/// busy client's requests do not each run a statement; two processes sharing one allowance
/// never give a client more than it, and at most a lease less.
#[actix_web::test]
async fn on_postgresql_processes_lease_tokens_and_share_the_allowance() {
    use diesel::prelude::*;
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let app = TestApp::start(backend).await;
    let process = || RateLimiter::new(200, Duration::from_secs(600)).shared_in(&app.ctx.db, "t");
    let (one, two) = (process(), process());
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Double)]
        tokens: f64,
        #[diesel(sql_type = diesel::sql_types::Double)]
        granted: f64,
    }
    // (tokens in the shared bucket, tokens its last take granted)
    let shared_bucket = || async {
        app.ctx
            .db
            .run(|conn| {
                let parley_storage::DbConn::Pg(pg) = conn else {
                    unreachable!()
                };
                Ok::<_, parley_storage::StorageError>(
                    diesel::sql_query(
                        "SELECT tokens, granted FROM rate_limit_buckets WHERE key = 't:k'",
                    )
                    .get_result::<Row>(pg)
                    .map(|row| (row.tokens.floor(), row.granted))
                    .unwrap(),
                )
            })
            .await
            .unwrap()
    };
    // Ten takes, one statement: the first leased ten tokens (200 / 20), and the bucket lost ten.
    for _ in 0..10 {
        one.take("k").await.unwrap();
    }
    assert_eq!(shared_bucket().await, (190.0, 10.0));
    one.take("k").await.unwrap();
    assert_eq!(shared_bucket().await, (180.0, 10.0));
    // Alternating between the processes until both refuse: at most the allowance (plus what
    // refilled meanwhile, a third of a token a second), at least the allowance less the nine
    // tokens the other process may still hold.
    let mut allowed = 11;
    for _ in 0..150 {
        for process in [&two, &one] {
            if process.take("k").await.is_ok() {
                allowed += 1;
            }
        }
    }
    assert!((191..=202).contains(&allowed), "{allowed} allowed");
    let refused = one.take("k").await.unwrap_err();
    assert_eq!(refused.code, parley_domain::ErrorCode::RateLimitHit);
}

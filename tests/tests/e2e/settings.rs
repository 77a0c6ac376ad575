//! Personal settings and the organization's defaults: every row of the settings table round-trips
//! through its endpoint(s) and register, each allowed value and one value outside the set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::settings::{SettingKind, SettingSpec, SETTINGS};
use parley_domain::Role;
use parley_tests::{backend_test, busy_backend_test, Account, TestApp};
use serde_json::{json, Value};

/// The values a test tries for a setting (as form text and as the JSON read back), and one
/// value outside what it accepts.
fn values(spec: &SettingSpec, own: bool) -> (Vec<(String, Value)>, String) {
    match (spec.name, spec.kind) {
        (_, SettingKind::Bool) => (
            vec![("true".into(), json!(true)), ("false".into(), json!(false))],
            "maybe".into(),
        ),
        ("web_channel_default_view", _) if own => (
            [1, 2, 4]
                .iter()
                .map(|v| (v.to_string(), json!(v)))
                .collect(),
            "3".into(),
        ),
        ("web_font_size_px", _) => (vec![("20".into(), json!(20))], "400".into()),
        ("web_line_height_percent", _) => (vec![("150".into(), json!(150))], "10".into()),
        ("email_notifications_batching_period_seconds", _) => {
            (vec![("300".into(), json!(300))], "5".into())
        }
        (_, SettingKind::Int(allowed)) => (
            allowed.iter().map(|v| (v.to_string(), json!(v))).collect(),
            "99".into(),
        ),
        ("default_language", _) => (
            vec![("de".into(), json!("de")), ("en".into(), json!("en"))],
            "klingon".into(),
        ),
        ("timezone", _) => (
            vec![("Europe/Berlin".into(), json!("Europe/Berlin"))],
            "Mars/Olympus".into(),
        ),
        ("notification_sound", _) => (
            vec![
                ("ding".into(), json!("ding")),
                ("none".into(), json!("none")),
            ],
            "trumpet".into(),
        ),
        (_, SettingKind::Str(allowed)) => (
            allowed.iter().map(|v| (v.to_string(), json!(v))).collect(),
            "nonsense".into(),
        ),
    }
}

async fn own_settings(app: &TestApp, who: &Account) -> Value {
    app.register(who, &[("fetch_event_types", json!(["user_settings"]))])
        .await["user_settings"]
        .clone()
}

async fn defaults(app: &TestApp, who: &Account) -> Value {
    app.register(
        who,
        &[("fetch_event_types", json!(["realm_user_settings_defaults"]))],
    )
    .await["realm_user_settings_defaults"]
        .clone()
}

busy_backend_test! {
    async fn every_own_setting_round_trips(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        for spec in SETTINGS.iter().filter(|s| s.accepted.own) {
            let (good, bad) = values(spec, true);
            assert!(!good.is_empty(), "{}", spec.name);
            for (text, expected) in good {
                app.patch("/settings").as_user(&ann).param(spec.name, &text).send().await.success();
                assert_eq!(own_settings(&app, &ann).await[spec.name], expected, "{} = {text}", spec.name);
            }
            let body = app.patch("/settings").as_user(&ann).param(spec.name, &bad).send().await
                .error(400, "BAD_REQUEST");
            assert!(body["msg"].as_str().unwrap().contains(spec.name), "{body}");
        }
        // The ones the web client's settings offer among them (the reference takes them all here).
        for name in ["enter_sends", "wildcard_mentions_notify", "pm_content_in_desktop_notifications"] {
            assert!(SETTINGS.iter().any(|s| s.name == name && s.accepted.own), "{name}");
        }
    }
}

busy_backend_test! {
    async fn every_default_round_trips_and_reaches_only_new_users(app) {
        let owner = app.owner.clone();
        let before = app.create_user("old@parley.test", "Old", Role::Member).await;
        for spec in SETTINGS.iter().filter(|s| s.accepted.defaults) {
            let (good, bad) = values(spec, false);
            for (text, expected) in good {
                app.patch("/realm/user_settings_defaults").as_user(&owner).param(spec.name, &text)
                    .send().await.success();
                assert_eq!(defaults(&app, &owner).await[spec.name], expected, "{} = {text}", spec.name);
            }
            let body = app.patch("/realm/user_settings_defaults").as_user(&owner).param(spec.name, &bad)
                .send().await.error(400, "BAD_REQUEST");
            assert!(body["msg"].as_str().unwrap().contains(spec.name), "{body}");
        }
        app.patch("/realm/user_settings_defaults").as_user(&owner).param("enter_sends", "true")
            .param("emojiset", "text").send().await.success();
        let got = app.get("/realm/user_settings_defaults").as_user(&owner).send().await.success();
        assert_eq!(got["realm_user_settings_defaults"]["enter_sends"], true);
        let after = app.create_user("new@parley.test", "New", Role::Member).await;
        assert_eq!(own_settings(&app, &after).await["enter_sends"], true);
        assert_eq!(own_settings(&app, &after).await["emojiset"], "text");
        assert_eq!(own_settings(&app, &before).await["enter_sends"], false, "existing users are untouched");
        let body = app.patch("/realm/user_settings_defaults").as_user(&before).param("enter_sends", "false")
            .send().await;
        assert_eq!(body.status, 400, "{}", body.text);
    }
}

backend_test! {
    async fn settings_changes_send_events(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let modern = app.register(&ann, &[("client_capabilities", json!({"user_settings_object": true}))]).await;
        let legacy = app.register(&ann, &[]).await;
        let watcher = app.register(&bob, &[("event_types", json!(["realm_user"]))]).await;
        app.patch("/settings").as_user(&ann).param("twenty_four_hour_time", "true")
            .param("enable_sounds", "false").param("default_language", "de")
            .param("full_name", "Ann B").param("timezone", "Asia/Tokyo").send().await.success();
        let q = |s: &Value| s["queue_id"].as_str().unwrap().to_owned();
        let events = app.events_of(&ann, &q(&modern), &["user_settings", "update_display_settings", "update_global_notifications"]).await;
        let props: Vec<&str> = events.iter().map(|e| e["property"].as_str().unwrap()).collect();
        // In the order of the settings table.
        assert_eq!(props, ["twenty_four_hour_time", "default_language", "timezone", "enable_sounds"]);
        assert_eq!(events[1]["language_name"], "German");
        let old = app.events_of(&ann, &q(&legacy), &["user_settings", "update_display_settings", "update_global_notifications"]).await;
        let types: Vec<&str> = old.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["user_settings", "update_display_settings", "user_settings",
            "update_display_settings", "user_settings", "update_display_settings",
            "user_settings", "update_global_notifications"]);
        assert_eq!(old[1]["setting_name"], "twenty_four_hour_time");
        assert_eq!(old[3]["language_name"], "German");
        assert_eq!(old[7]["notification_name"], "enable_sounds");
        let people = app.events(&bob, &q(&watcher), -1).await;
        assert!(people.iter().any(|e| e["person"]["full_name"] == "Ann B"));
        assert!(people.iter().any(|e| e["person"]["timezone"] == "Asia/Tokyo"));
        // Nothing changes, nothing is sent.
        app.patch("/settings").as_user(&ann).param("twenty_four_hour_time", "true").send().await.success();
        assert!(app.events_of(&ann, &q(&modern), &["user_settings"]).await.len() == 4);
    }
}

backend_test! {
    async fn passwords_need_the_old_one(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        app.patch("/settings").as_user(&ann).param("new_password", "another-secret").send().await
            .error(400, "BAD_REQUEST");
        let body = app.patch("/settings").as_user(&ann).param("old_password", "wrong")
            .param("new_password", "another-secret").send().await.error(400, "BAD_REQUEST");
        assert!(body["msg"].as_str().unwrap().contains("Wrong password"));
        app.patch("/settings").as_user(&ann).param("old_password", &ann.password)
            .param("new_password", "another-secret").send().await.success();
        app.post("/fetch_api_key").param("username", "ann@parley.test")
            .param("password", "another-secret").send().await.success();
        app.post("/fetch_api_key").param("username", "ann@parley.test")
            .param("password", &ann.password).send().await.error(401, "AUTHENTICATION_FAILED");
    }
}

backend_test! {
    async fn email_changes_wait_for_the_mailed_link(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let admin = app.create_user("admin@parley.test", "Admin", Role::Administrator).await;
        let watch = app.register(&admin, &[("event_types", json!(["realm_user"]))]).await;
        app.patch("/settings").as_user(&ann).param("email", "not-an-address").send().await
            .error(400, "BAD_REQUEST");
        app.patch("/settings").as_user(&ann).param("email", "admin@parley.test").send().await
            .error(400, "BAD_REQUEST");
        app.patch("/settings").as_user(&ann).param("email", "Ann.New@Example.com").send().await.success();
        // Nothing changes until the link is followed.
        let me = app.get("/users/me").as_user(&ann).send().await.success();
        assert_eq!(me["delivery_email"], "ann@parley.test");
        let mail = app.mail.sent();
        assert_eq!(mail.len(), 1);
        assert_eq!(mail[0].to, "ann.new@example.com");
        let link = mail[0].body.lines().find(|l| l.contains("/accounts/confirm_new_email/")).unwrap();
        let path = link.trim().trim_start_matches("http://parley.test");
        let page = app.get_page(path).send().await;
        assert_eq!(page.status, 200, "{}", page.text);
        assert!(page.text.contains("ann.new@example.com"));
        // The API address follows the real one (visible to everyone), so credentials change too.
        let renamed = Account { email: "ann.new@example.com".into(), ..ann.clone() };
        let me = app.get("/users/me").as_user(&renamed).send().await.success();
        assert_eq!(me["delivery_email"], "ann.new@example.com");
        // A link works once.
        assert_eq!(app.get_page(path).send().await.status, 400);
        let q = watch["queue_id"].as_str().unwrap();
        let events = app.events(&admin, q, -1).await;
        assert!(events.iter().any(|e| e["person"]["delivery_email"] == "ann.new@example.com"), "{events:?}");
    }
}

backend_test! {
    async fn hiding_the_real_address_tells_those_who_lose_it(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let admin = app.create_user("admin@parley.test", "Admin", Role::Administrator).await;
        let q = |s: Value| s["queue_id"].as_str().unwrap().to_owned();
        let qb = q(app.register(&bob, &[("event_types", json!(["realm_user"]))]).await);
        let qa = q(app.register(&admin, &[("event_types", json!(["realm_user"]))]).await);
        app.patch("/settings").as_user(&ann).param("email_address_visibility", "9").send().await
            .error(400, "BAD_REQUEST");
        app.patch("/settings").as_user(&ann).param("email_address_visibility", "3").send().await.success();
        let bob_events = app.events(&bob, &qb, -1).await;
        assert!(bob_events.iter().any(|e| e["person"]["user_id"] == ann.user_id.0
            && e["person"].get("delivery_email") == Some(&Value::Null)), "{bob_events:?}");
        let new_email = format!("user{}@parley.test", ann.user_id.0);
        assert!(bob_events.iter().any(|e| e["person"]["new_email"] == new_email.as_str()), "{bob_events:?}");
        // Administrators keep access: no delivery_email change for them.
        let admin_events = app.events(&admin, &qa, -1).await;
        assert!(!admin_events.iter().any(|e| e["person"].get("delivery_email").is_some()));
        let seen = app.get(&format!("/users/{}", ann.user_id.0)).as_user(&bob).send().await.success();
        assert_eq!(seen["user"]["delivery_email"], Value::Null);
        assert_eq!(own_settings(&app, &ann).await["email_address_visibility"], 3);
    }
}

//! Push devices: `POST /mobile_push/register` with and without a configured push service, and
//! `push_notifications_enabled` in `GET /server_settings` and register.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_actions::push_devices::{get_push_devices, PushConfig};
use parley_domain::push::TokenKind;
use parley_domain::Role;
use parley_tests::{backend_test, TestApp};

const KEY: &str = "cHVzaC1wdWJsaWMta2V5LWJ5dGVz";
const PAYLOAD: &str = "ZW5jcnlwdGVkLXJlZ2lzdHJhdGlvbg==";

fn register<'a>(app: &'a TestApp, account_id: i64) -> parley_tests::RequestBuilder<'a> {
    app.post("/mobile_push/register")
        .as_user(&app.owner)
        .param("token_kind", "fcm")
        .param("push_account_id", account_id)
        .param("push_public_key", KEY)
        .param("bouncer_public_key", "bouncer-key-1")
        .param("encrypted_push_registration", PAYLOAD)
}

async fn owner_user(app: &TestApp) -> parley_domain::user::User {
    let id = app.owner.user_id;
    app.ctx
        .db
        .run(move |c| parley_storage::users::by_ids(c, &[id]))
        .await
        .unwrap()
        .remove(0)
}

async fn with_push(app: TestApp) -> TestApp {
    app.reconfigured(|ctx| {
        ctx.with_push(Some(PushConfig {
            service_url: "https://push.parley.test".into(),
        }))
    })
    .await
}

backend_test! {
    async fn registration_needs_a_push_service(app) {
        let body = register(&app, 7).send().await.error(400, "PUSH_SERVICE_NOT_CONFIGURED");
        assert!(body["msg"].as_str().unwrap().contains("push notification service"));
        let settings = app.get("/server_settings").send().await.success();
        assert_eq!(settings["push_notifications_enabled"], false);
        let s = app.register(&app.owner, &[]).await;
        assert_eq!(s["realm_push_notifications_enabled"], false);
        // Missing parameters are reported before the configuration.
        let body = app.post("/mobile_push/register").as_user(&app.owner)
            .param("token_kind", "fcm").send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "push_account_id");
        // Unauthenticated requests are refused.
        app.post("/mobile_push/register").send().await.error(401, "UNAUTHORIZED");
    }
}

backend_test! {
    async fn registrations_are_stored_and_replaced(app) {
        let app = with_push(app).await;
        let settings = app.get("/server_settings").send().await.success();
        assert_eq!(settings["push_notifications_enabled"], true);
        let s = app.register(&app.owner, &[]).await;
        assert_eq!(s["realm_push_notifications_enabled"], true);

        register(&app, 7).send().await.success();
        register(&app, 8).param("token_kind", "apns").send().await.success();
        // Same push_account_id again: replaces the first registration.
        register(&app, 7).param("bouncer_public_key", "bouncer-key-2").send().await.success();

        let owner = owner_user(&app).await;
        let devices = get_push_devices(&app.ctx, owner).await.unwrap();
        assert_eq!(devices.len(), 2);
        let seven = devices.iter().find(|d| d.push_account_id == 7).unwrap();
        assert_eq!(seven.bouncer_public_key, "bouncer-key-2");
        assert_eq!(seven.token_kind, TokenKind::Fcm);
        assert_eq!(seven.push_public_key, KEY);
        assert_eq!(seven.encrypted_push_registration, PAYLOAD);
        let eight = devices.iter().find(|d| d.push_account_id == 8).unwrap();
        assert_eq!(eight.token_kind, TokenKind::Apns);

        // Another user's registrations are their own.
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        app.post("/mobile_push/register").as_user(&ann)
            .param("token_kind", "apns").param("push_account_id", 7)
            .param("push_public_key", KEY).param("bouncer_public_key", "k")
            .param("encrypted_push_registration", PAYLOAD)
            .send().await.success();
        let devices = get_push_devices(&app.ctx, owner_user(&app).await).await.unwrap();
        assert_eq!(devices.len(), 2);
    }
}

backend_test! {
    async fn invalid_registrations_name_the_parameter(app) {
        let app = with_push(app).await;
        for (name, value) in [
            ("token_kind", "gcm"),
            ("push_account_id", "seven"),
            ("push_public_key", "not base64!"),
            ("push_public_key", "cHVzaA"),
            ("push_public_key", "cHVz-A__"),
            ("encrypted_push_registration", "%%%"),
            ("encrypted_push_registration", ""),
            ("bouncer_public_key", " "),
        ] {
            let body = register(&app, 7).param(name, value).send().await.error(400, "BAD_REQUEST");
            assert_eq!(body["var_name"], name, "{name}={value}");
        }
        let owner = owner_user(&app).await;
        assert!(get_push_devices(&app.ctx, owner).await.unwrap().is_empty());
    }
}

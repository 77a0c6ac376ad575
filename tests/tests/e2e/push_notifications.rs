//! Legacy push tokens (`/users/me/apns_device_token`, `/users/me/android_gcm_reg_id`) and test
//! notifications (`/mobile_push/test_notification`, `/mobile_push/e2ee/test_notification`)
//! delivered to a fake push service listening on a local port.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use parley_actions::push_devices::{get_push_tokens, PushConfig};
use parley_domain::push::TokenKind;
use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

/// A push service that records every request (path and JSON body) and answers with `status`.
struct FakePushService {
    url: String,
    received: Arc<Mutex<Vec<(String, Value)>>>,
    status: Arc<AtomicU16>,
}

impl FakePushService {
    fn start() -> FakePushService {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let status = Arc::new(AtomicU16::new(200));
        let (log, answer) = (received.clone(), status.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                reader.read_line(&mut request_line).unwrap();
                let path = request_line
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("")
                    .to_owned();
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if line.trim().is_empty() {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':') {
                        if name.eq_ignore_ascii_case("content-length") {
                            length = value.trim().parse().unwrap();
                        }
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                log.lock()
                    .unwrap()
                    .push((path, serde_json::from_slice(&body).unwrap_or(Value::Null)));
                let code = answer.load(Ordering::SeqCst);
                let text = if code == 200 {
                    r#"{"result":"success","msg":""}"#.to_owned()
                } else {
                    r#"{"result":"error","msg":"Bouncer says no","code":"BAD_REQUEST"}"#.to_owned()
                };
                let _ = write!(stream, "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}", text.len());
            }
        });
        FakePushService {
            url,
            received,
            status,
        }
    }

    fn take(&self) -> Vec<(String, Value)> {
        std::mem::take(&mut *self.received.lock().unwrap())
    }
}

async fn with_service(app: TestApp, url: &str) -> TestApp {
    let url = url.to_owned();
    app.reconfigured(|ctx| ctx.with_push(Some(PushConfig { service_url: url })))
        .await
}

async fn user_of(app: &TestApp, who: &Account) -> parley_domain::user::User {
    let id = who.user_id;
    app.ctx
        .db
        .run(move |c| parley_storage::users::by_ids(c, &[id]))
        .await
        .unwrap()
        .remove(0)
}

const APNS: &str = "c0ffee00deadbeef";

backend_test! {
    async fn legacy_tokens_are_stored_and_removed(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        app.post("/users/me/apns_device_token").as_user(&ann)
            .param("token", APNS).param("appid", "org.zulip.Zulip").send().await.success();
        app.post("/users/me/android_gcm_reg_id").as_user(&ann)
            .param("token", "android-token:1").send().await.success();
        // Registering again refreshes rather than duplicates.
        app.post("/users/me/android_gcm_reg_id").as_user(&ann)
            .param("token", "android-token:1").send().await.success();
        let tokens = get_push_tokens(&app.ctx, user_of(&app, &ann).await).await.unwrap();
        assert_eq!(tokens.len(), 2);
        assert_eq!(tokens[0].kind, TokenKind::Apns);
        assert_eq!(tokens[0].ios_app_id.as_deref(), Some("org.zulip.Zulip"));
        assert_eq!(tokens[1].kind, TokenKind::Fcm);
        assert_eq!(tokens[1].token, "android-token:1");

        // Validation as the reference.
        let body = app.post("/users/me/apns_device_token").as_user(&ann)
            .param("token", "not hex").param("appid", "org.zulip.Zulip").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid APNS token");
        let body = app.post("/users/me/android_gcm_reg_id").as_user(&ann)
            .param("token", "").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Empty or invalid length token");
        let body = app.post("/users/me/android_gcm_reg_id").as_user(&ann)
            .param("token", "x".repeat(4097)).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Empty or invalid length token");
        let body = app.post("/users/me/apns_device_token").as_user(&ann)
            .param("token", APNS).send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "appid");
        let body = app.post("/users/me/apns_device_token").as_user(&ann)
            .param("token", APNS).param("appid", "bad app").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "appid");

        // Removing: only one's own, of the right kind.
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let body = app.delete("/users/me/android_gcm_reg_id").as_user(&bob)
            .param("token", "android-token:1").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Token does not exist");
        let body = app.delete("/users/me/apns_device_token").as_user(&ann)
            .param("token", "abcd").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Token does not exist");
        app.delete("/users/me/apns_device_token").as_user(&ann).param("token", APNS).send().await.success();
        app.delete("/users/me/android_gcm_reg_id").as_user(&ann).param("token", "android-token:1").send().await.success();
        assert!(get_push_tokens(&app.ctx, user_of(&app, &ann).await).await.unwrap().is_empty());
        let body = app.delete("/users/me/android_gcm_reg_id").as_user(&ann)
            .param("token", "android-token:1").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Token does not exist");

        // Bots have no devices.
        let bot = app.post("/bots").as_user(&app.owner).param("full_name", "Helper")
            .param("short_name", "helper").send().await.success();
        let bot = Account {
            user_id: parley_domain::UserId(bot["user_id"].as_i64().unwrap()),
            email: format!("helper-bot@{}", app.ctx.realm.host),
            api_key: bot["api_key"].as_str().unwrap().to_owned(),
            password: String::new(),
        };
        let body = app.post("/users/me/android_gcm_reg_id").as_user(&bot)
            .param("token", "t").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "This endpoint does not accept bot requests.");
    }
}

backend_test! {
    async fn test_notifications_go_through_the_push_service(app) {
        let body = app.post("/mobile_push/test_notification").as_user(&app.owner)
            .send().await.error(400, "PUSH_SERVICE_NOT_CONFIGURED");
        assert!(body["msg"].as_str().unwrap().contains("push notification service"));
        app.post("/mobile_push/e2ee/test_notification").as_user(&app.owner)
            .send().await.error(400, "PUSH_SERVICE_NOT_CONFIGURED");

        let service = FakePushService::start();
        let app = with_service(app, &service.url).await;
        // Nothing registered: nothing is sent; an unknown token is refused.
        app.post("/mobile_push/test_notification").as_user(&app.owner).send().await.success();
        assert!(service.take().is_empty());
        let body = app.post("/mobile_push/test_notification").as_user(&app.owner)
            .param("token", "nope").send().await.error(400, "INVALID_PUSH_DEVICE_TOKEN");
        assert_eq!(body["msg"], "Device not recognized");

        app.post("/users/me/apns_device_token").as_user(&app.owner)
            .param("token", APNS).param("appid", "org.zulip.Zulip").send().await.success();
        app.post("/users/me/android_gcm_reg_id").as_user(&app.owner)
            .param("token", "fcm-1").send().await.success();
        app.post("/mobile_push/test_notification").as_user(&app.owner).send().await.success();
        let got = service.take();
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].0, "/api/v1/remotes/push/test_notification");
        assert_eq!(got[0].1["token"], APNS);
        assert_eq!(got[0].1["token_kind"], 1);
        assert_eq!(got[1].1["token"], "fcm-1");
        assert_eq!(got[1].1["token_kind"], 2);
        assert_eq!(got[1].1["user_id"], app.owner.user_id.0);
        assert_eq!(got[1].1["base_payload"], json!({
            "server": "parley.test", "realm_id": got[1].1["base_payload"]["realm_id"],
            "realm_name": "Test Org", "realm_uri": "http://parley.test",
            "realm_url": "http://parley.test", "user_id": app.owner.user_id.0,
        }));

        // One device only.
        app.post("/mobile_push/test_notification").as_user(&app.owner)
            .param("token", "fcm-1").send().await.success();
        let got = service.take();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].1["token"], "fcm-1");

        // The service's failures come back as the reference reports them.
        service.status.store(500, Ordering::SeqCst);
        app.post("/mobile_push/test_notification").as_user(&app.owner)
            .param("token", "fcm-1").send().await.error(502, "INTERNAL_SERVER_ERROR_ON_BOUNCER");
        service.status.store(403, Ordering::SeqCst);
        app.post("/mobile_push/test_notification").as_user(&app.owner)
            .param("token", "fcm-1").send().await.error(403, "ADMIN_ACTION_REQUIRED");
        service.status.store(400, Ordering::SeqCst);
        let body = app.post("/mobile_push/test_notification").as_user(&app.owner)
            .param("token", "fcm-1").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Bouncer says no");
        service.take();

        // An unreachable service.
        let closed = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", closed.local_addr().unwrap());
        drop(closed);
        let app = with_service(app, &url).await;
        app.post("/mobile_push/test_notification").as_user(&app.owner)
            .send().await.error(502, "FAILED_TO_CONNECT_BOUNCER");
    }
}

backend_test! {
    async fn e2ee_test_notifications_are_sealed_to_the_device(app) {
        let service = FakePushService::start();
        let app = with_service(app, &service.url).await;
        let body = app.post("/mobile_push/e2ee/test_notification").as_user(&app.owner)
            .send().await.error(400, "NO_ACTIVE_PUSH_DEVICE");
        assert_eq!(body["msg"], "No active registered push device");

        let secret = crypto_box::SecretKey::generate(&mut crypto_box::aead::OsRng);
        let public = STANDARD.encode(secret.public_key().as_bytes());
        for (account, key) in [(11, public.as_str()), (12, "cHVzaC1wdWJsaWMta2V5LWJ5dGVz")] {
            app.post("/mobile_push/register").as_user(&app.owner)
                .param("token_kind", "fcm").param("push_account_id", account)
                .param("push_public_key", key).param("bouncer_public_key", "bouncer-1")
                .param("encrypted_push_registration", "ZW5jcnlwdGVk")
                .send().await.success();
        }
        let body = app.post("/mobile_push/e2ee/test_notification").as_user(&app.owner)
            .param("push_account_id", 99).send().await.error(400, "NO_ACTIVE_PUSH_DEVICE");
        assert_eq!(body["msg"], "No active registered push device");
        app.post("/mobile_push/e2ee/test_notification").as_user(&app.owner)
            .param("push_account_id", 11).send().await.success();
        let got = service.take();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, "/api/v1/remotes/push/e2ee/notify");
        let request = &got[0].1["push_requests"][0];
        assert_eq!(request["push_account_id"], 11);
        assert_eq!(request["token_kind"], "fcm");
        assert_eq!(request["bouncer_public_key"], "bouncer-1");
        assert_eq!(request["encrypted_push_registration"], "ZW5jcnlwdGVk");
        let sealed = STANDARD.decode(request["encrypted_data"].as_str().unwrap()).unwrap();
        let opened = secret.unseal(&sealed).expect("sealed to the device's key");
        let payload: Value = serde_json::from_slice(&opened).unwrap();
        assert_eq!(payload["type"], "test");
        assert_eq!(payload["realm_url"], "http://parley.test");
        assert_eq!(payload["user_id"], app.owner.user_id.0);

        // A device whose key is not a NaCl key cannot be reached.
        app.post("/mobile_push/e2ee/test_notification").as_user(&app.owner)
            .param("push_account_id", 12).send().await.error(400, "BAD_REQUEST");
        app.post("/mobile_push/e2ee/test_notification").as_user(&app.owner)
            .param("push_account_id", "x").send().await.error(400, "BAD_REQUEST");
        assert!(service.take().is_empty());
    }
}

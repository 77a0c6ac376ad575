//! User status: `POST /users/me/status`, the administrators' `POST /users/{user_id}/status`,
//! `GET /users/{user_id}/status`, the rules and errors, `user_status` events and the snapshot.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::user::{BotType, EmailAddressVisibility};
use parley_domain::{Role, UserId};
use parley_storage::users::{self, NewUser};
use parley_tests::{backend_test, Account, Response, TestApp};
use serde_json::{json, Value};

async fn set_status(app: &TestApp, who: &Account, params: &[(&str, &str)]) -> Response {
    let mut request = app.post("/users/me/status").as_user(who);
    for (name, value) in params {
        request = request.param(name, value);
    }
    request.send().await
}

async fn queue(app: &TestApp, who: &Account) -> String {
    app.register(who, &[("event_types", json!(["user_status"]))])
        .await["queue_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn statuses(app: &TestApp, who: &Account) -> Value {
    app.register(who, &[("fetch_event_types", json!(["user_status"]))])
        .await["user_status"]
        .clone()
}

async fn status_of(app: &TestApp, viewer: &Account, user: UserId) -> Value {
    app.get(&format!("/users/{}/status", user.0))
        .as_user(viewer)
        .send()
        .await
        .success()["status"]
        .clone()
}

/// The event without its queue-assigned `id`.
fn body(mut event: Value) -> Value {
    event.as_object_mut().unwrap().remove("id");
    event
}

async fn people(app: &TestApp) -> (Account, Account) {
    let ann = app
        .create_user("ann@parley.test", "Ann", Role::Member)
        .await;
    let bob = app
        .create_user("bob@parley.test", "Bob", Role::Member)
        .await;
    (ann, bob)
}

backend_test! {
    async fn setting_and_clearing_a_status(app) {
        let (ann, bob) = people(&app).await;
        let bob_q = queue(&app, &bob).await;
        let owner_q = queue(&app, &app.owner).await;
        let id = ann.user_id.0;

        set_status(&app, &ann, &[("status_text", "  out to lunch  "), ("emoji_name", "car")])
            .await.success();
        let full = json!({
            "status_text": "out to lunch", "emoji_name": "car", "emoji_code": "1f697",
            "reaction_type": "unicode_emoji",
        });
        let mut expected = full.clone();
        expected["type"] = json!("user_status");
        expected["user_id"] = json!(id);
        for (who, q) in [(&bob, &bob_q), (&app.owner, &owner_q)] {
            let events = app.events_of(who, q, &["user_status"]).await;
            assert_eq!(events.len(), 1, "{events:?}");
            assert_eq!(body(events[0].clone()), expected);
        }
        assert_eq!(status_of(&app, &bob, ann.user_id).await, full);
        assert_eq!(statuses(&app, &bob).await, json!({ id.to_string(): full }));

        // Only what was sent changes, and the event carries only that.
        set_status(&app, &ann, &[("status_text", "")]).await.success();
        let events = app.events_of(&bob, &bob_q, &["user_status"]).await;
        assert_eq!(body(events[1].clone()), json!({"type": "user_status", "user_id": id, "status_text": ""}));
        let emoji_only = json!({"emoji_name": "car", "emoji_code": "1f697", "reaction_type": "unicode_emoji"});
        assert_eq!(status_of(&app, &bob, ann.user_id).await, emoji_only);
        assert_eq!(statuses(&app, &bob).await, json!({ id.to_string(): emoji_only }));

        // An empty name clears the emoji (whatever code comes with it).
        set_status(&app, &ann, &[("emoji_name", ""), ("emoji_code", "1f697")]).await.success();
        let events = app.events_of(&bob, &bob_q, &["user_status"]).await;
        assert_eq!(body(events[2].clone()), json!({
            "type": "user_status", "user_id": id,
            "emoji_name": "", "emoji_code": "", "reaction_type": "unicode_emoji",
        }));
        assert_eq!(status_of(&app, &bob, ann.user_id).await, json!({}));
        assert_eq!(statuses(&app, &bob).await, json!({}));
        assert_eq!(status_of(&app, &bob, bob.user_id).await, json!({}));
    }
}

backend_test! {
    async fn emoji_names_codes_and_types(app) {
        let (ann, _) = people(&app).await;
        set_status(&app, &ann, &[("emoji_name", "zulip")]).await.success();
        assert_eq!(status_of(&app, &ann, ann.user_id).await, json!({
            "emoji_name": "zulip", "emoji_code": "zulip", "reaction_type": "zulip_extra_emoji",
        }));
        set_status(&app, &ann, &[
            ("emoji_name", "car"), ("emoji_code", "1f697"), ("reaction_type", "unicode_emoji"),
        ]).await.success();
        assert_eq!(status_of(&app, &ann, ann.user_id).await["emoji_code"], "1f697");
        set_status(&app, &ann, &[("status_text", &"é".repeat(60))]).await.success();
        assert_eq!(status_of(&app, &ann, ann.user_id).await["status_text"], "é".repeat(60));
    }
}

backend_test! {
    async fn invalid_updates_are_bad_requests_and_change_nothing(app) {
        let (ann, bob) = people(&app).await;
        set_status(&app, &ann, &[("status_text", "busy")]).await.success();
        let q = queue(&app, &bob).await;
        let long = "x".repeat(61);
        for (params, msg) in [
            (vec![("status_text", long.as_str())], "status_text is too long (limit: 60 characters)"),
            (vec![], "Client did not pass any new values."),
            (vec![("emoji_code", "1f697")], "Client did not pass any new values."),
            (vec![("status_text", "x"), ("emoji_code", "1f697")],
                "Client must pass emoji_name if they pass either emoji_code or reaction_type."),
            (vec![("status_text", "x"), ("reaction_type", "unicode_emoji")],
                "Client must pass emoji_name if they pass either emoji_code or reaction_type."),
            (vec![("emoji_name", "no_such_emoji")], "Emoji 'no_such_emoji' does not exist"),
            (vec![("emoji_name", "car"), ("emoji_code", "zzzz")], "Invalid emoji code."),
            (vec![("emoji_name", "car"), ("emoji_code", "1f604")], "Invalid emoji name."),
            (vec![("emoji_name", "party"), ("emoji_code", "1"), ("reaction_type", "realm_emoji")],
                "Invalid custom emoji."),
            (vec![("emoji_name", "zulip"), ("emoji_code", "other"), ("reaction_type", "zulip_extra_emoji")],
                "Invalid emoji code."),
            (vec![("emoji_name", "car"), ("emoji_code", "1f697"), ("reaction_type", "sticker")],
                "Invalid emoji type."),
        ] {
            let err = set_status(&app, &ann, &params).await.error(400, "BAD_REQUEST");
            assert_eq!(err["msg"], msg, "{params:?}");
        }
        assert!(app.events_of(&bob, &q, &["user_status"]).await.is_empty());
        assert_eq!(status_of(&app, &bob, ann.user_id).await, json!({"status_text": "busy"}));
    }
}

backend_test! {
    async fn deprecated_away_is_accepted_and_changes_nothing(app) {
        let (ann, bob) = people(&app).await;
        let q = queue(&app, &bob).await;
        let body = set_status(&app, &ann, &[("away", "true")]).await.success();
        assert!(body.get("ignored_parameters_unsupported").is_none(), "{body}");
        assert!(app.events_of(&bob, &q, &["user_status"]).await.is_empty());
        assert_eq!(status_of(&app, &bob, ann.user_id).await, json!({}));
    }
}

backend_test! {
    async fn administrators_set_other_peoples_status(app) {
        let (ann, bob) = people(&app).await;
        let q = queue(&app, &ann).await;
        let path = format!("/users/{}/status", bob.user_id.0);
        let response = app.post(&path).as_user(&app.owner)
            .param("status_text", "on leave").param("away", "true")
            .send().await.success();
        assert_eq!(response["ignored_parameters_unsupported"], json!(["away"]));
        let events = app.events_of(&ann, &q, &["user_status"]).await;
        assert_eq!(body(events[0].clone()),
            json!({"type": "user_status", "user_id": bob.user_id.0, "status_text": "on leave"}));
        assert_eq!(status_of(&app, &ann, bob.user_id).await, json!({"status_text": "on leave"}));

        // Members may not; the rules still apply for administrators.
        let err = app.post(&path).as_user(&ann).param("status_text", "x")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Insufficient permission");
        let err = app.post(&path).as_user(&app.owner).param("status_text", "x".repeat(61))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "status_text is too long (limit: 60 characters)");
        let err = app.post(&path).as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Client did not pass any new values.");
        let err = app.post("/users/9999/status").as_user(&app.owner).param("status_text", "x")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "No such user");
        assert_eq!(status_of(&app, &ann, bob.user_id).await, json!({"status_text": "on leave"}));

        // An administrator may also set their own status this way.
        app.post(&format!("/users/{}/status", app.owner.user_id.0)).as_user(&app.owner)
            .param("emoji_name", "car").send().await.success();
        assert_eq!(status_of(&app, &ann, app.owner.user_id).await["emoji_name"], "car");
    }
}

backend_test! {
    async fn bots_unknown_and_deactivated_people(app) {
        let (ann, bob) = people(&app).await;
        let bot = app.ctx.db.run(move |conn| users::insert(conn, &NewUser {
            delivery_email: "helper-bot@parley.test".into(),
            full_name: "Helper".into(),
            password_hash: None,
            api_key: "b".repeat(32),
            role: Role::Member,
            bot_type: Some(BotType::Generic),
            bot_owner_id: None,
            timezone: String::new(),
            date_joined: 0,
            email_address_visibility: EmailAddressVisibility::Everyone,
            can_create_users: false,
        })).await.unwrap();
        let bot_account = Account {
            user_id: bot,
            email: "helper-bot@parley.test".into(),
            api_key: "b".repeat(32),
            password: String::new(),
        };
        let err = set_status(&app, &bot_account, &[("status_text", "x")]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "This endpoint does not accept bot requests.");
        for path in [format!("/users/{}/status", bot.0), "/users/9999/status".to_owned()] {
            let err = app.get(&path).as_user(&ann).send().await.error(400, "BAD_REQUEST");
            assert_eq!(err["msg"], "No such user");
        }
        app.get("/users/me/status").as_user(&ann).send().await.error(405, "BAD_REQUEST");

        // A deactivated person's status leaves the snapshot and cannot be read.
        set_status(&app, &bob, &[("status_text", "gone fishing")]).await.success();
        assert_eq!(statuses(&app, &ann).await[bob.user_id.0.to_string()]["status_text"], "gone fishing");
        let id = bob.user_id;
        app.ctx.db.run(move |c| users::set_active(c, id, false)).await.unwrap();
        assert_eq!(statuses(&app, &ann).await, json!({}));
        let err = app.get(&format!("/users/{}/status", id.0)).as_user(&ann).send().await
            .error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "User is deactivated");
    }
}

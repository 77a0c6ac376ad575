//! Muting people: `POST` and `DELETE /users/me/muted_users/{muted_user_id}`, the errors, the
//! `muted_users` event and snapshot, and the muted person's messages becoming read.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, Response, TestApp};
use serde_json::{json, Value};

async fn mute(app: &TestApp, who: &Account, id: i64) -> Response {
    app.post(&format!("/users/me/muted_users/{id}"))
        .as_user(who)
        .send()
        .await
}

async fn unmute(app: &TestApp, who: &Account, id: i64) -> Response {
    app.delete(&format!("/users/me/muted_users/{id}"))
        .as_user(who)
        .send()
        .await
}

async fn snapshot(app: &TestApp, who: &Account) -> Value {
    app.register(who, &[("fetch_event_types", json!(["muted_users"]))])
        .await["muted_users"]
        .clone()
}

async fn is_read(app: &TestApp, who: &Account, id: i64) -> bool {
    app.get(&format!("/messages/{id}"))
        .as_user(who)
        .send()
        .await
        .success()["message"]["flags"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "read")
}

async fn people(app: &TestApp) -> (Account, Account, Account) {
    let ann = app
        .create_user("ann@parley.test", "Ann", Role::Member)
        .await;
    let bob = app
        .create_user("bob@parley.test", "Bob", Role::Member)
        .await;
    let cat = app
        .create_user("cat@parley.test", "Cat", Role::Member)
        .await;
    (ann, bob, cat)
}

backend_test! {
    async fn muting_and_unmuting(app) {
        let (ann, bob, cat) = people(&app).await;
        let q = app.register(&bob, &[("event_types", json!(["muted_users"]))]).await["queue_id"]
            .as_str().unwrap().to_owned();
        let ann_q = app.register(&ann, &[("event_types", json!(["muted_users"]))]).await["queue_id"]
            .as_str().unwrap().to_owned();
        assert_eq!(snapshot(&app, &bob).await, json!([]));

        mute(&app, &bob, ann.user_id.0).await.success();
        mute(&app, &bob, cat.user_id.0).await.success();
        let list = snapshot(&app, &bob).await;
        let ids: Vec<i64> = list.as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap()).collect();
        assert_eq!(ids, vec![ann.user_id.0, cat.user_id.0]);
        assert!(list[0]["timestamp"].as_i64().unwrap() > 1_600_000_000);
        assert_eq!(snapshot(&app, &ann).await, json!([]));

        let events = app.events_of(&bob, &q, &["muted_users"]).await;
        assert_eq!(events.len(), 2);
        assert_eq!(events[0]["muted_users"].as_array().unwrap().len(), 1);
        assert_eq!(events[0]["muted_users"][0]["id"], ann.user_id.0);
        assert_eq!(events[1]["muted_users"], list);
        assert!(app.events_of(&ann, &ann_q, &["muted_users"]).await.is_empty());

        unmute(&app, &bob, ann.user_id.0).await.success();
        let events = app.events_of(&bob, &q, &["muted_users"]).await;
        assert_eq!(events[2]["muted_users"], json!([list[1]]));
        assert_eq!(snapshot(&app, &bob).await, json!([list[1]]));
        // Muting again after unmuting works.
        mute(&app, &bob, ann.user_id.0).await.success();
        assert_eq!(snapshot(&app, &bob).await.as_array().unwrap().len(), 2);
    }
}

backend_test! {
    async fn invalid_mutes(app) {
        let (ann, bob, _) = people(&app).await;
        let q = app.register(&bob, &[("event_types", json!(["muted_users"]))]).await["queue_id"]
            .as_str().unwrap().to_owned();
        let err = mute(&app, &bob, bob.user_id.0).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Cannot mute self");
        let err = mute(&app, &bob, 9999).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "No such user");
        let err = unmute(&app, &bob, 9999).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "No such user");
        let err = unmute(&app, &bob, ann.user_id.0).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "User is not muted");
        mute(&app, &bob, ann.user_id.0).await.success();
        let err = mute(&app, &bob, ann.user_id.0).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "User already muted");
        let err = app.post("/users/me/muted_users/abc").as_user(&bob).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["var_name"], "muted_user_id");
        assert_eq!(app.events_of(&bob, &q, &["muted_users"]).await.len(), 1);
        assert_eq!(snapshot(&app, &bob).await.as_array().unwrap().len(), 1);

        // Deactivated people can be muted.
        let id = ann.user_id;
        unmute(&app, &bob, id.0).await.success();
        app.ctx.db.run(move |c| parley_storage::users::set_active(c, id, false)).await.unwrap();
        mute(&app, &bob, id.0).await.success();
    }
}

backend_test! {
    async fn muting_marks_the_muted_persons_messages_read(app) {
        let (ann, bob, cat) = people(&app).await;
        app.create_channel(&cat, "dev", &[&ann, &bob, &cat], &[]).await;
        let from_ann = app.send_to_channel(&ann, "dev", "t", "one").await;
        let dm = app.post("/messages").as_user(&ann).param("type", "direct")
            .json_param("to", &json!([bob.user_id.0])).param("content", "two")
            .send().await.success()["id"].as_i64().unwrap();
        let from_cat = app.send_to_channel(&cat, "dev", "t", "three").await;
        let q = app.register(&bob, &[("event_types", json!(["update_message_flags"]))]).await["queue_id"]
            .as_str().unwrap().to_owned();
        assert!(!is_read(&app, &bob, from_ann).await);

        mute(&app, &bob, ann.user_id.0).await.success();
        assert!(is_read(&app, &bob, from_ann).await);
        assert!(is_read(&app, &bob, dm).await);
        assert!(!is_read(&app, &bob, from_cat).await);
        // Only the muter's flags change.
        assert!(!is_read(&app, &cat, from_ann).await);
        let events = app.events_of(&bob, &q, &["update_message_flags"]).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["op"], "add");
        assert_eq!(events[0]["flag"], "read");
        assert_eq!(events[0]["messages"], json!([from_ann, dm]));

        // Muting again when nothing is left unread sends no flags event.
        mute(&app, &bob, cat.user_id.0).await.success();
        unmute(&app, &bob, cat.user_id.0).await.success();
        mute(&app, &bob, cat.user_id.0).await.success();
        let events = app.events_of(&bob, &q, &["update_message_flags"]).await;
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[1]["messages"], json!([from_cat]));
    }
}

backend_test! {
    async fn new_messages_from_muted_people_arrive_read(app) {
        let (ann, bob, _) = people(&app).await;
        mute(&app, &ann, bob.user_id.0).await.success();
        let dm = app.post("/messages").as_user(&bob).param("type", "direct")
            .json_param("to", &json!([ann.user_id.0])).param("content", "hello?")
            .send().await.success()["id"].as_i64().unwrap();
        assert!(is_read(&app, &ann, dm).await);
        unmute(&app, &ann, bob.user_id.0).await.success();
        let later = app.post("/messages").as_user(&bob).param("type", "direct")
            .json_param("to", &json!([ann.user_id.0])).param("content", "again")
            .send().await.success()["id"].as_i64().unwrap();
        assert!(!is_read(&app, &ann, later).await);
    }
}

//! Drafts: `GET/POST /drafts`, `PATCH/DELETE /drafts/{draft_id}`, their `drafts` events, the
//! register snapshot, and how turning `enable_drafts_synchronization` off refuses them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

struct Setup {
    ann: Account,
    bob: Account,
    dev: i64,
    secret: i64,
}

async fn setup(app: &TestApp) -> Setup {
    let ann = app
        .create_user("ann@parley.test", "Ann", Role::Member)
        .await;
    let bob = app
        .create_user("bob@parley.test", "Bob", Role::Member)
        .await;
    let dev = app.create_channel(&ann, "dev", &[&ann, &bob], &[]).await;
    let secret = app
        .create_channel(&bob, "secret", &[&bob], &[("invite_only", json!(true))])
        .await;
    Setup {
        ann,
        bob,
        dev,
        secret,
    }
}

async fn create(app: &TestApp, who: &Account, drafts: Value) -> Vec<i64> {
    app.post("/drafts")
        .as_user(who)
        .json_param("drafts", &drafts)
        .send()
        .await
        .success()["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect()
}

async fn fetch(app: &TestApp, who: &Account) -> Value {
    app.get("/drafts").as_user(who).send().await.success()
}

async fn queue(app: &TestApp, who: &Account) -> String {
    app.register(who, &[("event_types", json!(["drafts"]))])
        .await["queue_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn disable_sync(app: &TestApp, who: &Account) {
    let id = who.user_id;
    app.ctx
        .db
        .run(move |conn| {
            parley_storage::settings::set(conn, id, "enable_drafts_synchronization", "false")
        })
        .await
        .unwrap();
}

backend_test! {
    async fn drafts_are_created_and_fetched(app) {
        let s = setup(&app).await;
        let ids = create(&app, &s.ann, json!([
            {"type": "stream", "to": [s.dev], "topic": "plans", "content": "hello", "timestamp": 1595479019},
            {"type": "private", "to": [s.bob.user_id.0], "topic": "", "content": "hi Bob", "timestamp": 1595479020},
            {"type": "", "to": [], "topic": "", "content": "  someday\n", "timestamp": 1595479021.7},
        ])).await;
        assert_eq!(ids.len(), 3);
        assert!(ids[0] < ids[1] && ids[1] < ids[2]);
        let got = fetch(&app, &s.ann).await;
        assert_eq!(got["count"], 3);
        assert_eq!(got["drafts"], json!([
            {"id": ids[0], "type": "stream", "to": [s.dev], "topic": "plans", "content": "hello", "timestamp": 1595479019},
            {"id": ids[1], "type": "private", "to": [s.bob.user_id.0], "topic": "", "content": "hi Bob", "timestamp": 1595479020},
            {"id": ids[2], "type": "", "to": [], "topic": "", "content": "  someday", "timestamp": 1595479021},
        ]));
        // Bob sees none of them.
        assert_eq!(fetch(&app, &s.bob).await["count"], 0);
    }
}

backend_test! {
    async fn drafts_are_normalized(app) {
        let s = setup(&app).await;
        let before = parley_actions::time::now();
        let long_topic = "t".repeat(80);
        let ann = s.ann.user_id.0;
        let bob = s.bob.user_id.0;
        create(&app, &s.ann, json!([
            // No timestamp: now. A long topic is truncated like a message's.
            {"type": "stream", "to": [s.dev], "topic": long_topic, "content": "x"},
            // The author is left out of a conversation with others, repeats dropped.
            {"type": "private", "to": [bob, ann, bob], "topic": "ignored", "content": "x"},
            // A note to self keeps the author.
            {"type": "private", "to": [ann], "topic": "", "content": "x"},
            // Direct without recipients, and unaddressed with some: unaddressed, no recipients.
            {"type": "private", "to": [], "topic": "", "content": "x"},
            {"type": "", "to": [bob], "topic": "t", "content": "x"},
        ])).await;
        let got = fetch(&app, &s.ann).await;
        let drafts = got["drafts"].as_array().unwrap();
        let ts = drafts[0]["timestamp"].as_i64().unwrap();
        assert!(ts >= before && ts <= parley_actions::time::now() + 1, "{ts}");
        let topic = drafts[0]["topic"].as_str().unwrap();
        assert_eq!(topic.chars().count(), 60);
        assert!(topic.ends_with("..."));
        let shapes: Vec<(Value, Value, Value)> = drafts[1..]
            .iter()
            .map(|d| (d["type"].clone(), d["to"].clone(), d["topic"].clone()))
            .collect();
        assert_eq!(shapes, vec![
            (json!("private"), json!([bob]), json!("")),
            (json!("private"), json!([ann]), json!("")),
            (json!(""), json!([]), json!("")),
            (json!(""), json!([]), json!("")),
        ]);
    }
}

backend_test! {
    async fn invalid_drafts_are_refused_and_nothing_is_created(app) {
        let s = setup(&app).await;
        let ok = json!({"type": "", "to": [], "topic": "", "content": "fine"});
        let with = |key: &str, value: Value| {
            let mut d = ok.clone();
            d[key] = value;
            d
        };
        let stream = |to: Value| json!({"type": "stream", "to": to, "topic": "t", "content": "c"});
        let private = |to: Value| json!({"type": "private", "to": to, "topic": "", "content": "c"});
        for (draft, needle) in [
            (with("id", json!(5)), "id must not be sent"),
            (stream(json!([])), "exactly 1 channel ID"),
            (stream(json!([s.dev, s.secret])), "exactly 1 channel ID"),
            (stream(json!([s.secret])), "Invalid channel ID"),
            (stream(json!([99999])), "Invalid channel ID"),
            (private(json!([99999])), "Invalid user ID 99999"),
            (with("type", json!("channel")), "type"),
            (with("content", json!("   ")), "content must not be empty"),
            (with("timestamp", json!(-5)), "Timestamp must not be negative."),
            (with("to", json!("everyone")), "to"),
            (with("bogus", json!(1)), "unknown field"),
            (json!({"type": "", "to": [], "topic": ""}), "content is missing"),
            (json!("not an object"), "not an object"),
        ] {
            // The bad draft comes second: the first, valid one is not kept either.
            let body = app.post("/drafts").as_user(&s.ann)
                .json_param("drafts", &json!([ok, draft]))
                .send().await.error(400, "BAD_REQUEST");
            assert!(body["msg"].as_str().unwrap().contains(needle), "{draft}: {body}");
            assert_eq!(body["var_name"], "drafts", "{body}");
        }
        let body = app.post("/drafts").as_user(&s.ann)
            .param("drafts", "[{").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "drafts");
        let body = app.post("/drafts").as_user(&s.ann)
            .json_param("drafts", &json!({"type": ""})).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "drafts");
        assert_eq!(fetch(&app, &s.ann).await["count"], 0);
        // Bob may draft to his private channel.
        create(&app, &s.bob, json!([stream(json!([s.secret]))])).await;
        // No drafts at all is no change.
        let body = app.post("/drafts").as_user(&s.ann).send().await.success();
        assert_eq!(body["ids"], json!([]));
    }
}

backend_test! {
    async fn drafts_are_edited_and_deleted(app) {
        let s = setup(&app).await;
        let ids = create(&app, &s.ann, json!([{"type": "", "to": [], "topic": "", "content": "v1"}])).await;
        let id = ids[0];
        app.patch(&format!("/drafts/{id}")).as_user(&s.ann)
            .json_param("draft", &json!({"type": "stream", "to": [s.dev], "topic": "t", "content": "v2", "timestamp": 1700000000}))
            .send().await.success();
        assert_eq!(fetch(&app, &s.ann).await["drafts"], json!([
            {"id": id, "type": "stream", "to": [s.dev], "topic": "t", "content": "v2", "timestamp": 1700000000},
        ]));

        // Edits are checked like new drafts.
        let body = app.patch(&format!("/drafts/{id}")).as_user(&s.ann)
            .json_param("draft", &json!({"id": id, "type": "", "to": [], "topic": "", "content": "v3"}))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "draft");
        app.patch(&format!("/drafts/{id}")).as_user(&s.ann)
            .json_param("draft", &json!({"type": "stream", "to": [s.secret], "topic": "", "content": "v3"}))
            .send().await.error(400, "BAD_REQUEST");
        app.patch(&format!("/drafts/{id}")).as_user(&s.ann)
            .send().await.error(400, "REQUEST_VARIABLE_MISSING");

        // Nonexistent drafts, and other people's, do not exist.
        let missing = json!({"type": "", "to": [], "topic": "", "content": "x"});
        for (who, path) in [(&s.ann, "/drafts/99999".to_owned()), (&s.bob, format!("/drafts/{id}"))] {
            let body = app.patch(&path).as_user(who).json_param("draft", &missing)
                .send().await.error(404, "BAD_REQUEST");
            assert_eq!(body["msg"], "Draft does not exist");
            let body = app.delete(&path).as_user(who).send().await.error(404, "BAD_REQUEST");
            assert_eq!(body["msg"], "Draft does not exist");
        }
        let body = app.delete("/drafts/abc").as_user(&s.ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "draft_id");

        app.delete(&format!("/drafts/{id}")).as_user(&s.ann).send().await.success();
        assert_eq!(fetch(&app, &s.ann).await["count"], 0);
        app.delete(&format!("/drafts/{id}")).as_user(&s.ann).send().await.error(404, "BAD_REQUEST");
    }
}

backend_test! {
    async fn each_change_reaches_the_owners_other_clients(app) {
        let s = setup(&app).await;
        let q = queue(&app, &s.ann).await;
        let bob_q = queue(&app, &s.bob).await;
        let ids = create(&app, &s.ann, json!([
            {"type": "stream", "to": [s.dev], "topic": "t", "content": "one", "timestamp": 100},
            {"type": "", "to": [], "topic": "", "content": "two", "timestamp": 200},
        ])).await;
        app.patch(&format!("/drafts/{}", ids[0])).as_user(&s.ann)
            .json_param("draft", &json!({"type": "private", "to": [s.bob.user_id.0], "topic": "", "content": "edited", "timestamp": 300}))
            .send().await.success();
        app.delete(&format!("/drafts/{}", ids[1])).as_user(&s.ann).send().await.success();

        let events = app.events_of(&s.ann, &q, &["drafts"]).await;
        assert_eq!(events.len(), 3, "{events:?}");
        assert_eq!(events[0]["op"], "add");
        assert_eq!(events[0]["drafts"], json!([
            {"id": ids[0], "type": "stream", "to": [s.dev], "topic": "t", "content": "one", "timestamp": 100},
            {"id": ids[1], "type": "", "to": [], "topic": "", "content": "two", "timestamp": 200},
        ]));
        assert_eq!(events[1]["op"], "update");
        assert_eq!(events[1]["draft"], json!(
            {"id": ids[0], "type": "private", "to": [s.bob.user_id.0], "topic": "", "content": "edited", "timestamp": 300}
        ));
        assert_eq!(events[2]["op"], "remove");
        assert_eq!(events[2]["draft_id"], ids[1]);
        assert!(app.events_of(&s.bob, &bob_q, &["drafts"]).await.is_empty());

        // Failed requests send nothing.
        app.delete("/drafts/99999").as_user(&s.ann).send().await.error(404, "BAD_REQUEST");
        assert_eq!(app.events_of(&s.ann, &q, &["drafts"]).await.len(), 3);
    }
}

backend_test! {
    async fn the_snapshot_has_the_drafts_newest_first(app) {
        let s = setup(&app).await;
        let ids = create(&app, &s.ann, json!([
            {"type": "", "to": [], "topic": "", "content": "old", "timestamp": 100},
            {"type": "", "to": [], "topic": "", "content": "new", "timestamp": 300},
            {"type": "", "to": [], "topic": "", "content": "mid", "timestamp": 200},
        ])).await;
        let snapshot = app.register(&s.ann, &[("fetch_event_types", json!(["drafts"]))]).await;
        let order: Vec<i64> = snapshot["drafts"].as_array().unwrap()
            .iter().map(|d| d["id"].as_i64().unwrap()).collect();
        assert_eq!(order, vec![ids[1], ids[2], ids[0]]);
        assert_eq!(snapshot["drafts"][0]["content"], "new");
        // GET lists them least recently edited first.
        let listed: Vec<i64> = fetch(&app, &s.ann).await["drafts"].as_array().unwrap()
            .iter().map(|d| d["id"].as_i64().unwrap()).collect();
        assert_eq!(listed, vec![ids[0], ids[2], ids[1]]);
        let other = app.register(&s.ann, &[("fetch_event_types", json!(["message"]))]).await;
        assert!(other.get("drafts").is_none());
        let bob = app.register(&s.bob, &[("fetch_event_types", json!(["drafts"]))]).await;
        assert_eq!(bob["drafts"], json!([]));
    }
}

backend_test! {
    async fn drafts_are_refused_while_synchronization_is_off(app) {
        let s = setup(&app).await;
        let ids = create(&app, &s.ann, json!([{"type": "", "to": [], "topic": "", "content": "x"}])).await;
        disable_sync(&app, &s.ann).await;
        let draft = json!({"type": "", "to": [], "topic": "", "content": "y"});
        let responses = [
            app.get("/drafts").as_user(&s.ann).send().await,
            app.post("/drafts").as_user(&s.ann).json_param("drafts", &json!([draft])).send().await,
            app.patch(&format!("/drafts/{}", ids[0])).as_user(&s.ann).json_param("draft", &draft).send().await,
            app.delete(&format!("/drafts/{}", ids[0])).as_user(&s.ann).send().await,
        ];
        for response in responses {
            let body = response.error(400, "BAD_REQUEST");
            assert_eq!(body["msg"], "User has disabled synchronizing drafts.");
        }
        let snapshot = app.register(&s.ann, &[("fetch_event_types", json!(["drafts"]))]).await;
        assert_eq!(snapshot["drafts"], json!([]));
        // Others are unaffected.
        create(&app, &s.bob, json!([draft])).await;
    }
}

backend_test! {
    async fn turning_synchronization_off_deletes_the_drafts(app) {
        let s = setup(&app).await;
        create(&app, &s.ann, json!([{"type": "", "to": [], "topic": "", "content": "x"}])).await;
        app.patch("/settings")
            .as_user(&s.ann)
            .json_param("enable_drafts_synchronization", &json!(false))
            .send()
            .await
            .success();
        app.patch("/settings").as_user(&s.ann)
            .json_param("enable_drafts_synchronization", &json!(true)).send().await.success();
        assert_eq!(fetch(&app, &s.ann).await["count"], 0);
    }
}

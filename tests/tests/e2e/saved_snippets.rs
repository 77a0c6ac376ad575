//! Saved snippets: `GET/POST /saved_snippets`, `PATCH/DELETE /saved_snippets/{id}`, their
//! `saved_snippets` events and the register snapshot.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

async fn users(app: &TestApp) -> (Account, Account) {
    let ann = app
        .create_user("ann@parley.test", "Ann", Role::Member)
        .await;
    let bob = app
        .create_user("bob@parley.test", "Bob", Role::Member)
        .await;
    (ann, bob)
}

async fn create(app: &TestApp, who: &Account, title: &str, content: &str) -> i64 {
    app.post("/saved_snippets")
        .as_user(who)
        .param("title", title)
        .param("content", content)
        .send()
        .await
        .success()["saved_snippet_id"]
        .as_i64()
        .unwrap()
}

async fn list(app: &TestApp, who: &Account) -> Value {
    app.get("/saved_snippets")
        .as_user(who)
        .send()
        .await
        .success()["saved_snippets"]
        .clone()
}

backend_test! {
    async fn snippets_are_created_listed_edited_and_deleted(app) {
        let (ann, bob) = users(&app).await;
        let before = parley_actions::time::now();
        let a = create(&app, &ann, "  Greeting ", "Hello **there**\n").await;
        let b = create(&app, &ann, "Bye", "See you").await;
        let got = list(&app, &ann).await;
        assert_eq!(got.as_array().unwrap().len(), 2);
        assert_eq!(got[0]["id"], a);
        assert_eq!(got[0]["title"], "Greeting");
        assert_eq!(got[0]["content"], "Hello **there**");
        let created = got[0]["date_created"].as_i64().unwrap();
        assert!(created >= before && created <= parley_actions::time::now() + 1);
        assert_eq!(got[1]["id"], b);
        assert_eq!(list(&app, &bob).await, json!([]));

        app.patch(&format!("/saved_snippets/{a}")).as_user(&ann)
            .param("title", "Hi").send().await.success();
        app.patch(&format!("/saved_snippets/{b}")).as_user(&ann)
            .param("content", " Later ").send().await.success();
        app.patch(&format!("/saved_snippets/{b}")).as_user(&ann).send().await.success();
        let got = list(&app, &ann).await;
        assert_eq!((got[0]["title"].clone(), got[0]["content"].clone()), (json!("Hi"), json!("Hello **there**")));
        assert_eq!((got[1]["title"].clone(), got[1]["content"].clone()), (json!("Bye"), json!("Later")));

        app.delete(&format!("/saved_snippets/{a}")).as_user(&ann).send().await.success();
        let got = list(&app, &ann).await;
        assert_eq!(got.as_array().unwrap().len(), 1);
        assert_eq!(got[0]["id"], b);
    }
}

backend_test! {
    async fn invalid_and_missing_snippets_are_refused(app) {
        let (ann, bob) = users(&app).await;
        for (title, content, var) in [("  ", "body", "title"), ("T", "\n \t", "content"), ("", "", "title")] {
            let body = app.post("/saved_snippets").as_user(&ann)
                .param("title", title).param("content", content)
                .send().await.error(400, "BAD_REQUEST");
            assert_eq!(body["var_name"], var, "{body}");
            assert!(body["msg"].as_str().unwrap().contains(var), "{body}");
        }
        let body = app.post("/saved_snippets").as_user(&ann)
            .param("title", "t".repeat(61)).param("content", "c")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "title");
        let body = app.post("/saved_snippets").as_user(&ann)
            .param("content", "c").send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "title");
        assert_eq!(list(&app, &ann).await, json!([]));

        let id = create(&app, &ann, "T", "C").await;
        let body = app.patch(&format!("/saved_snippets/{id}")).as_user(&ann)
            .param("content", " ").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "content");
        let body = app.patch(&format!("/saved_snippets/{id}")).as_user(&ann)
            .param("title", "").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "title");

        // Nonexistent snippets, and other people's, do not exist.
        for (who, path) in [(&ann, "/saved_snippets/99999".to_owned()), (&bob, format!("/saved_snippets/{id}"))] {
            let body = app.patch(&path).as_user(who).param("title", "x")
                .send().await.error(404, "BAD_REQUEST");
            assert_eq!(body["msg"], "Saved snippet does not exist.");
            app.patch(&path).as_user(who).send().await.error(404, "BAD_REQUEST");
            app.delete(&path).as_user(who).send().await.error(404, "BAD_REQUEST");
        }
        let body = app.delete("/saved_snippets/x").as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "saved_snippet_id");
        assert_eq!(list(&app, &ann).await[0]["title"], "T");
    }
}

backend_test! {
    async fn each_change_reaches_the_owners_other_clients(app) {
        let (ann, bob) = users(&app).await;
        let q = app.register(&ann, &[("event_types", json!(["saved_snippets"]))]).await["queue_id"]
            .as_str().unwrap().to_owned();
        let bob_q = app.register(&bob, &[]).await["queue_id"].as_str().unwrap().to_owned();
        let id = create(&app, &ann, "T", "C").await;
        app.patch(&format!("/saved_snippets/{id}")).as_user(&ann)
            .param("title", "T2").param("content", "C2").send().await.success();
        // Changing nothing sends nothing.
        app.patch(&format!("/saved_snippets/{id}")).as_user(&ann).send().await.success();
        app.delete(&format!("/saved_snippets/{id}")).as_user(&ann).send().await.success();

        let events = app.events_of(&ann, &q, &["saved_snippets"]).await;
        assert_eq!(events.len(), 3, "{events:?}");
        assert_eq!(events[0]["op"], "add");
        let date = events[0]["saved_snippet"]["date_created"].as_i64().unwrap();
        assert_eq!(events[0]["saved_snippet"], json!({"id": id, "title": "T", "content": "C", "date_created": date}));
        assert_eq!(events[1]["op"], "update");
        assert_eq!(events[1]["saved_snippet"], json!({"id": id, "title": "T2", "content": "C2", "date_created": date}));
        assert_eq!(events[2], json!({"id": events[2]["id"], "type": "saved_snippets", "op": "remove", "saved_snippet_id": id}));
        assert!(app.events_of(&bob, &bob_q, &["saved_snippets"]).await.is_empty());
    }
}

backend_test! {
    async fn the_snapshot_has_the_snippets(app) {
        let (ann, bob) = users(&app).await;
        let a = create(&app, &ann, "A", "one").await;
        let b = create(&app, &ann, "B", "two").await;
        let snapshot = app.register(&ann, &[("fetch_event_types", json!(["saved_snippets"]))]).await;
        assert_eq!(snapshot["saved_snippets"], list(&app, &ann).await);
        let ids: Vec<i64> = snapshot["saved_snippets"].as_array().unwrap()
            .iter().map(|s| s["id"].as_i64().unwrap()).collect();
        assert_eq!(ids, vec![a, b]);
        let other = app.register(&ann, &[("fetch_event_types", json!(["message"]))]).await;
        assert!(other.get("saved_snippets").is_none());
        let snapshot = app.register(&bob, &[("fetch_event_types", json!(["saved_snippets"]))]).await;
        assert_eq!(snapshot["saved_snippets"], json!([]));
    }
}

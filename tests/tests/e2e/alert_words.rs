//! Alert words: `GET`, `POST` and `DELETE /users/me/alert_words`, the rules and errors, the
//! `alert_words` event and snapshot, and the `has_alert_word` flag on messages.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, Response, TestApp};
use serde_json::{json, Value};

async fn change(app: &TestApp, who: &Account, delete: bool, words: Value) -> Response {
    let request = if delete {
        app.delete("/users/me/alert_words")
    } else {
        app.post("/users/me/alert_words")
    };
    request
        .as_user(who)
        .json_param("alert_words", &words)
        .send()
        .await
}

async fn list(app: &TestApp, who: &Account) -> Value {
    app.get("/users/me/alert_words")
        .as_user(who)
        .send()
        .await
        .success()["alert_words"]
        .clone()
}

async fn flags(app: &TestApp, who: &Account, id: i64) -> Value {
    app.get(&format!("/messages/{id}"))
        .as_user(who)
        .send()
        .await
        .success()["message"]["flags"]
        .clone()
}

fn has_alert(flags: &Value) -> bool {
    flags
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "has_alert_word")
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
    async fn adding_listing_and_removing_words(app) {
        let (ann, bob) = people(&app).await;
        let q = app.register(&ann, &[("event_types", json!(["alert_words"]))]).await["queue_id"]
            .as_str().unwrap().to_owned();
        let bob_q = app.register(&bob, &[("event_types", json!(["alert_words"]))]).await["queue_id"]
            .as_str().unwrap().to_owned();
        assert_eq!(list(&app, &ann).await, json!([]));

        // Trimmed, blanks dropped, repeats (ignoring case) merged.
        let body = change(&app, &ann, false, json!(["  foo ", "Bar", "   ", "", "FOO"])).await.success();
        assert_eq!(body["alert_words"], json!(["FOO", "Bar"]));
        let body = change(&app, &ann, false, json!(["bar", "release train"])).await.success();
        assert_eq!(body["alert_words"], json!(["FOO", "Bar", "release train"]));
        assert_eq!(list(&app, &ann).await, json!(["FOO", "Bar", "release train"]));

        let body = change(&app, &ann, true, json!(["foo", "not there"])).await.success();
        assert_eq!(body["alert_words"], json!(["Bar", "release train"]));

        let events = app.events_of(&ann, &q, &["alert_words"]).await;
        let lists: Vec<Value> = events.iter().map(|e| e["alert_words"].clone()).collect();
        assert_eq!(lists, vec![
            json!(["FOO", "Bar"]),
            json!(["FOO", "Bar", "release train"]),
            json!(["Bar", "release train"]),
        ]);
        assert!(app.events_of(&bob, &bob_q, &["alert_words"]).await.is_empty());

        let snapshot = app.register(&ann, &[("fetch_event_types", json!(["alert_words"]))]).await;
        assert_eq!(snapshot["alert_words"], json!(["Bar", "release train"]));
        let snapshot = app.register(&bob, &[]).await;
        assert_eq!(snapshot["alert_words"], json!([]));
    }
}

backend_test! {
    async fn invalid_requests(app) {
        let (ann, _) = people(&app).await;
        let err = change(&app, &ann, false, json!(["ok", "x".repeat(101)])).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "alert_words[1] is too long (limit: 100 characters)");
        change(&app, &ann, false, json!(["é".repeat(100)])).await.success();
        let err = app.post("/users/me/alert_words").as_user(&ann).send().await
            .error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(err["var_name"], "alert_words");
        app.post("/users/me/alert_words").as_user(&ann).param("alert_words", "foo")
            .send().await.error(400, "BAD_REQUEST");
        change(&app, &ann, true, json!([1, 2])).await.error(400, "BAD_REQUEST");
        assert_eq!(list(&app, &ann).await, json!(["é".repeat(100)]));
    }
}

backend_test! {
    async fn messages_with_a_recipients_word_are_flagged_for_them(app) {
        let (ann, bob) = people(&app).await;
        app.create_channel(&ann, "dev", &[&ann, &bob], &[]).await;
        change(&app, &bob, false, json!(["Deploy", "release train"])).await.success();
        change(&app, &ann, false, json!(["deploy"])).await.success();
        let q = app.register(&bob, &[("event_types", json!(["message"]))]).await["queue_id"]
            .as_str().unwrap().to_owned();

        let hit = app.send_to_channel(&ann, "dev", "t", "Time to DEPLOY!").await;
        assert!(has_alert(&flags(&app, &bob, hit).await));
        // Never for the sender, even with the same word.
        assert!(!has_alert(&flags(&app, &ann, hit).await));
        let events = app.events_of(&bob, &q, &["message"]).await;
        assert!(has_alert(&events[0]["flags"]), "{}", events[0]);

        let phrase = app.send_to_channel(&ann, "dev", "t", "is the (Release Train) late?").await;
        assert!(has_alert(&flags(&app, &bob, phrase).await));
        let miss = app.send_to_channel(&ann, "dev", "t", "redeploy and deployment").await;
        assert!(!has_alert(&flags(&app, &bob, miss).await));

        // Direct messages too.
        let dm = app.post("/messages").as_user(&ann).param("type", "direct")
            .json_param("to", &json!([bob.user_id.0])).param("content", "deploy now")
            .send().await.success()["id"].as_i64().unwrap();
        assert!(has_alert(&flags(&app, &bob, dm).await));
        assert!(!has_alert(&flags(&app, &ann, dm).await));

        // The `is:alerted` narrow finds them.
        let found = app.get("/messages").as_user(&bob)
            .param("anchor", "newest").param("num_before", 10).param("num_after", 0)
            .json_param("narrow", &json!([{"operator": "is", "operand": "alerted"}]))
            .send().await.success();
        let ids: Vec<i64> = found["messages"].as_array().unwrap().iter()
            .map(|m| m["id"].as_i64().unwrap()).collect();
        assert_eq!(ids, vec![hit, phrase, dm]);

        // Editing the content recomputes the flag.
        app.patch(&format!("/messages/{hit}")).as_user(&ann).param("content", "never mind")
            .send().await.success();
        assert!(!has_alert(&flags(&app, &bob, hit).await));
        app.patch(&format!("/messages/{miss}")).as_user(&ann).param("content", "deploy, finally")
            .send().await.success();
        assert!(has_alert(&flags(&app, &bob, miss).await));
        assert!(!has_alert(&flags(&app, &ann, miss).await));
    }
}

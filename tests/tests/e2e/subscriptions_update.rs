//! `PATCH /users/me/subscriptions`: joining `add` and leaving `delete` in one request, with the
//! answers and events of `POST` and `DELETE /users/me/subscriptions`, all or nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::backend_test;
use serde_json::json;

async fn subscribed_names(app: &parley_tests::TestApp, who: &parley_tests::Account) -> Vec<String> {
    let subs = app
        .get("/users/me/subscriptions")
        .as_user(who)
        .send()
        .await
        .success();
    subs["subscriptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

backend_test! {
    async fn add_and_delete_in_one_request(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        app.create_channel(&app.owner, "design", &[&app.owner], &[]).await;
        let queue = app.register(&ann, &[("event_types", json!(["subscription", "stream"]))]).await;
        let queue_id = queue["queue_id"].as_str().unwrap();

        let body = app.patch("/users/me/subscriptions").as_user(&ann)
            .json_param("add", &json!([{"name": "design"}, {"name": "fresh", "description": "New *one*", "color": "#e79ab5"}, {"name": "general"}]))
            .json_param("delete", &json!([]))
            .send().await.success();
        let key = ann.user_id.0.to_string();
        assert_eq!(body["subscribed"][&key], json!(["design", "fresh"]));
        assert_eq!(body["already_subscribed"][&key], json!(["general"]));
        assert_eq!(body["removed"], json!([]));
        assert_eq!(body["not_removed"], json!([]));
        assert_eq!(subscribed_names(&app, &ann).await, vec!["design", "fresh", "general"]);

        let body = app.patch("/users/me/subscriptions").as_user(&ann)
            .json_param("delete", &json!(["design", "general"]))
            .send().await.success();
        assert_eq!(body["subscribed"], json!({}));
        assert_eq!(body["already_subscribed"], json!({}));
        assert_eq!(body["removed"], json!(["design", "general"]));
        assert_eq!(body["not_removed"], json!([]));

        // Both at once, one of them already left.
        let body = app.patch("/users/me/subscriptions").as_user(&ann)
            .json_param("add", &json!([{"name": "design"}]))
            .json_param("delete", &json!(["fresh", "general"]))
            .send().await.success();
        assert_eq!(body["subscribed"][&key], json!(["design"]));
        assert_eq!(body["removed"], json!(["fresh"]));
        assert_eq!(body["not_removed"], json!(["general"]));
        assert_eq!(subscribed_names(&app, &ann).await, vec!["design"]);

        // The events of joining and leaving reached Ann's queue.
        let events = app.events_of(&ann, queue_id, &["subscription", "stream"]).await;
        let ops: Vec<(String, String)> = events.iter().map(|e| (
            e["type"].as_str().unwrap().to_owned(), e["op"].as_str().unwrap().to_owned()
        )).collect();
        let adds: Vec<&serde_json::Value> = events.iter()
            .filter(|e| e["type"] == "subscription" && e["op"] == "add").collect();
        let added: Vec<&str> = adds.iter().flat_map(|e| e["subscriptions"].as_array().unwrap())
            .map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(added, vec!["design", "fresh", "design"], "{ops:?}");
        let removed: Vec<&str> = events.iter()
            .filter(|e| e["type"] == "subscription" && e["op"] == "remove")
            .flat_map(|e| e["subscriptions"].as_array().unwrap())
            .map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(removed.len(), 3, "{ops:?}");
        assert!(ops.contains(&("stream".into(), "create".into())), "the new channel is announced: {ops:?}");
    }
}

backend_test! {
    async fn errors_leave_nothing_changed(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let body = app.patch("/users/me/subscriptions").as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Nothing to do. Specify at least one of \"add\" or \"delete\".");
        let body = app.patch("/users/me/subscriptions").as_user(&ann)
            .json_param("add", &json!([])).json_param("delete", &json!([]))
            .send().await.error(400, "BAD_REQUEST");
        assert!(body["msg"].as_str().unwrap().starts_with("Nothing to do"));

        // A channel to leave that does not exist undoes the joining of the same request.
        let body = app.patch("/users/me/subscriptions").as_user(&ann)
            .json_param("add", &json!([{"name": "brand new"}]))
            .json_param("delete", &json!(["general", "ghost"]))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Channel(s) (ghost) do not exist");
        assert_eq!(subscribed_names(&app, &ann).await, vec!["general"]);
        let streams = app.get("/streams").as_user(&ann).send().await.success();
        assert!(!streams["streams"].as_array().unwrap().iter().any(|s| s["name"] == "brand new"),
            "the channel created by the failed request is gone");

        // A private channel one may not join is refused.
        app.create_channel(&app.owner, "secret", &[&app.owner], &[("invite_only", json!(true))]).await;
        let body = app.patch("/users/me/subscriptions").as_user(&ann)
            .json_param("add", &json!([{"name": "secret"}]))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Unable to access channel (secret).");

        // Malformed parameters name themselves.
        let body = app.patch("/users/me/subscriptions").as_user(&ann)
            .param("add", "not json").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "add");
        let body = app.patch("/users/me/subscriptions").as_user(&ann)
            .json_param("delete", &json!([1, 2])).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "delete");

        // Guests may leave channels but not join them.
        let guest = app.create_user("gus@parley.test", "Gus", Role::Guest).await;
        app.patch("/users/me/subscriptions").as_user(&guest)
            .json_param("add", &json!([{"name": "general"}])).send().await.error(400, "BAD_REQUEST");
        app.patch("/users/me/subscriptions").as_user(&guest)
            .json_param("delete", &json!(["general"])).send().await.success();
    }
}

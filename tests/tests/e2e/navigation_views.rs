//! Navigation views: `GET/POST /navigation_views`, `PATCH/DELETE /navigation_views/{fragment}`,
//! their `navigation_view` events and the register snapshot.

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

async fn add(app: &TestApp, who: &Account, fragment: &str, pinned: bool, name: Option<&str>) {
    let mut request = app
        .post("/navigation_views")
        .as_user(who)
        .param("fragment", fragment)
        .param("is_pinned", pinned);
    if let Some(name) = name {
        request = request.param("name", name);
    }
    request.send().await.success();
}

async fn list(app: &TestApp, who: &Account) -> Value {
    app.get("/navigation_views")
        .as_user(who)
        .send()
        .await
        .success()["navigation_views"]
        .clone()
}

/// A fragment as a path segment.
fn path(fragment: &str) -> String {
    format!("/navigation_views/{}", fragment.replace('/', "%2F"))
}

backend_test! {
    async fn views_are_added_updated_and_removed(app) {
        let (ann, bob) = users(&app).await;
        add(&app, &ann, "inbox", true, None).await;
        add(&app, &ann, " narrow/channel/5-dev ", false, Some(" Dev ")).await;
        assert_eq!(list(&app, &ann).await, json!([
            {"fragment": "inbox", "is_pinned": true, "name": null},
            {"fragment": "narrow/channel/5-dev", "is_pinned": false, "name": "Dev"},
        ]));
        assert_eq!(list(&app, &bob).await, json!([]));
        // Another person may use the same fragment and name.
        add(&app, &bob, "narrow/channel/5-dev", true, Some("Dev")).await;

        app.patch(&path("narrow/channel/5-dev")).as_user(&ann)
            .param("is_pinned", true).param("name", "Development").send().await.success();
        app.patch("/navigation_views/inbox").as_user(&ann)
            .param("is_pinned", false).send().await.success();
        // Renaming a view to its own name is no clash.
        app.patch(&path("narrow/channel/5-dev")).as_user(&ann)
            .param("name", "Development").send().await.success();
        assert_eq!(list(&app, &ann).await, json!([
            {"fragment": "inbox", "is_pinned": false, "name": null},
            {"fragment": "narrow/channel/5-dev", "is_pinned": true, "name": "Development"},
        ]));

        // Unencoded slashes address the same view.
        app.delete("/navigation_views/narrow/channel/5-dev").as_user(&ann).send().await.success();
        app.delete("/navigation_views/inbox").as_user(&ann).send().await.success();
        assert_eq!(list(&app, &ann).await, json!([]));
        assert_eq!(list(&app, &bob).await.as_array().unwrap().len(), 1);
    }
}

backend_test! {
    async fn invalid_views_are_refused(app) {
        let (ann, bob) = users(&app).await;
        let post = |fragment: &str, pinned: &str, name: Option<&str>| {
            let mut request = app.post("/navigation_views").as_user(&ann)
                .param("fragment", fragment).param("is_pinned", pinned);
            if let Some(name) = name {
                request = request.param("name", name);
            }
            request
        };
        for (request, msg, var) in [
            (post("  ", "true", None), "fragment cannot be blank", Some("fragment")),
            (post("inbox", "true", Some("My inbox")), "Built-in views cannot have a custom name.", Some("name")),
            (post("narrow/is/dm", "true", None), "Custom views must have a valid name.", Some("name")),
            (post("narrow/is/dm", "true", Some("  ")), "name cannot be blank", Some("name")),
            (post("inbox", "maybe", None), "is_pinned is not a boolean", Some("is_pinned")),
        ] {
            let body = request.send().await.error(400, "BAD_REQUEST");
            assert_eq!(body["msg"], msg, "{body}");
            if let Some(var) = var {
                assert_eq!(body["var_name"], var, "{body}");
            }
        }
        let body = app.post("/navigation_views").as_user(&ann).param("fragment", "inbox")
            .send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "is_pinned");
        let body = app.post("/navigation_views").as_user(&ann).param("is_pinned", "true")
            .send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "fragment");

        add(&app, &ann, "inbox", true, None).await;
        add(&app, &ann, "narrow/is/dm", true, Some("DMs")).await;
        // Fragments and names are unique per person.
        for request in [
            post("inbox", "false", None),
            post(" inbox", "false", None),
            post("narrow/is/followed", "true", Some("DMs")),
        ] {
            let body = request.send().await.error(400, "BAD_REQUEST");
            assert_eq!(body["msg"], "Navigation view already exists.");
        }
        add(&app, &ann, "narrow/is/followed", true, Some("Followed")).await;
        let body = app.patch(&path("narrow/is/followed")).as_user(&ann).param("name", "DMs")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Navigation view already exists.");
        let body = app.patch("/navigation_views/inbox").as_user(&ann).param("name", "Mine")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Built-in views cannot have a custom name.");
        app.patch("/navigation_views/inbox").as_user(&ann).param("is_pinned", "1")
            .send().await.error(400, "BAD_REQUEST");

        // Views that do not exist, or are someone else's.
        for (who, fragment) in [(&ann, "recent"), (&bob, "inbox")] {
            let body = app.patch(&path(fragment)).as_user(who).param("is_pinned", "true")
                .send().await.error(404, "BAD_REQUEST");
            assert_eq!(body["msg"], "Navigation view does not exist.");
            let body = app.delete(&path(fragment)).as_user(who).send().await.error(404, "BAD_REQUEST");
            assert_eq!(body["msg"], "Navigation view does not exist.");
        }
        let body = app.delete("/navigation_views/%20").as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "fragment");
        assert_eq!(list(&app, &ann).await.as_array().unwrap().len(), 3);
    }
}

backend_test! {
    async fn each_change_reaches_the_owners_other_clients(app) {
        let (ann, bob) = users(&app).await;
        let q = app.register(&ann, &[("event_types", json!(["navigation_view"]))]).await["queue_id"]
            .as_str().unwrap().to_owned();
        let bob_q = app.register(&bob, &[]).await["queue_id"].as_str().unwrap().to_owned();
        add(&app, &ann, "narrow/is/dm", false, Some("DMs")).await;
        add(&app, &ann, "recent", true, None).await;
        app.patch(&path("narrow/is/dm")).as_user(&ann).param("is_pinned", true).send().await.success();
        app.patch(&path("narrow/is/dm")).as_user(&ann).param("name", "Direct").send().await.success();
        // Changing nothing sends nothing.
        app.patch(&path("narrow/is/dm")).as_user(&ann).send().await.success();
        app.delete(&path("narrow/is/dm")).as_user(&ann).send().await.success();

        let events: Vec<Value> = app.events_of(&ann, &q, &["navigation_view"]).await
            .into_iter()
            .map(|mut e| { e.as_object_mut().unwrap().remove("id"); e })
            .collect();
        assert_eq!(events, vec![
            json!({"type": "navigation_view", "op": "add",
                   "navigation_view": {"fragment": "narrow/is/dm", "is_pinned": false, "name": "DMs"}}),
            json!({"type": "navigation_view", "op": "add",
                   "navigation_view": {"fragment": "recent", "is_pinned": true, "name": null}}),
            json!({"type": "navigation_view", "op": "update", "fragment": "narrow/is/dm",
                   "data": {"is_pinned": true}}),
            json!({"type": "navigation_view", "op": "update", "fragment": "narrow/is/dm",
                   "data": {"name": "Direct"}}),
            json!({"type": "navigation_view", "op": "remove", "fragment": "narrow/is/dm"}),
        ]);
        assert!(app.events_of(&bob, &bob_q, &["navigation_view"]).await.is_empty());
    }
}

backend_test! {
    async fn the_snapshot_has_the_views(app) {
        let (ann, bob) = users(&app).await;
        add(&app, &ann, "inbox", false, None).await;
        add(&app, &ann, "narrow/is/dm", true, Some("DMs")).await;
        let expected = json!([
            {"fragment": "inbox", "is_pinned": false, "name": null},
            {"fragment": "narrow/is/dm", "is_pinned": true, "name": "DMs"},
        ]);
        for kind in ["navigation_views", "navigation_view"] {
            let snapshot = app.register(&ann, &[("fetch_event_types", json!([kind]))]).await;
            assert_eq!(snapshot["navigation_views"], expected);
        }
        let other = app.register(&ann, &[("fetch_event_types", json!(["message"]))]).await;
        assert!(other.get("navigation_views").is_none());
        let snapshot = app.register(&bob, &[("fetch_event_types", json!(["navigation_views"]))]).await;
        assert_eq!(snapshot["navigation_views"], json!([]));
    }
}

//! Topic visibility: `POST /user_topics`, and the automatic follow/unmute policies that sending
//! and being mentioned apply, with their events and snapshot.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

async fn setup(app: &TestApp) -> (Account, Account, i64) {
    app.ann_and_bob_in("dev").await
}

async fn send(app: &TestApp, who: &Account, topic: &str, content: &str) -> Value {
    app.post("/messages")
        .as_user(who)
        .param("type", "stream")
        .param("to", "dev")
        .param("topic", topic)
        .param("content", content)
        .send()
        .await
        .success()
}

fn policies(snapshot: &Value) -> Vec<(String, i64)> {
    snapshot["user_topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["topic_name"].as_str().unwrap().to_owned(),
                t["visibility_policy"].as_i64().unwrap(),
            )
        })
        .collect()
}

backend_test! {
    async fn starting_a_topic_follows_it(app) {
        let (ann, _, dev) = setup(&app).await;
        let q = app.register(&ann, &[]).await["queue_id"].as_str().unwrap().to_owned();
        let first = send(&app, &ann, "plans", "hello").await;
        assert_eq!(first["automatic_new_visibility_policy"], 3);
        let second = send(&app, &ann, "Plans", "again").await;
        assert!(second.get("automatic_new_visibility_policy").is_none(), "{second}");
        let events = app.events_of(&ann, &q, &["user_topic"]).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["stream_id"], dev);
        assert_eq!(events[0]["topic_name"], "plans");
        assert_eq!(events[0]["visibility_policy"], 3);
        assert!(events[0]["last_updated"].is_i64());
        assert_eq!(policies(&app.register(&ann, &[]).await), [("plans".to_owned(), 3)]);
    }
}

backend_test! {
    async fn mentions_follow_and_muted_channels_unmute(app) {
        let (ann, bob, dev) = setup(&app).await;
        send(&app, &ann, "t", "start").await;
        let q = app.register(&bob, &[]).await["queue_id"].as_str().unwrap().to_owned();
        send(&app, &ann, "t", "hi @**Bob**").await;
        let events = app.events_of(&bob, &q, &["user_topic"]).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["visibility_policy"], 3);

        // In a channel Bob muted, sending to an existing topic unmutes it for him.
        app.post("/users/me/subscriptions/properties").as_user(&bob)
            .json_param("subscription_data", &json!([{"stream_id": dev, "property": "is_muted", "value": true}]))
            .send().await.success();
        send(&app, &ann, "old", "exists").await;
        let sent = send(&app, &bob, "old", "me too").await;
        assert_eq!(sent["automatic_new_visibility_policy"], 2);
    }
}

backend_test! {
    async fn setting_policies_by_hand(app) {
        let (ann, _, dev) = setup(&app).await;
        let q = app.register(&ann, &[("event_types", json!(["muted_topics"]))]).await["queue_id"]
            .as_str().unwrap().to_owned();
        let q2 = app.register(&ann, &[("event_types", json!(["user_topic", "muted_topics"]))]).await["queue_id"]
            .as_str().unwrap().to_owned();
        app.post("/user_topics").as_user(&ann).param("stream_id", dev).param("topic", "noise")
            .param("visibility_policy", 1).send().await.success();
        let snapshot = app.register(&ann, &[]).await;
        assert_eq!(policies(&snapshot), [("noise".to_owned(), 1)]);
        assert_eq!(snapshot["muted_topics"][0][0], "dev");
        assert_eq!(snapshot["muted_topics"][0][1], "noise");
        // Legacy clients get the muted list; clients asking for both get only user_topic.
        let legacy = app.events(&ann, &q, -1).await;
        assert_eq!(legacy.len(), 1);
        assert_eq!(legacy[0]["type"], "muted_topics");
        assert_eq!(legacy[0]["muted_topics"][0][1], "noise");
        let modern: Vec<Value> = app.events(&ann, &q2, -1).await;
        assert_eq!(modern.len(), 1);
        assert_eq!(modern[0]["type"], "user_topic");

        app.post("/user_topics").as_user(&ann).param("stream_id", dev).param("topic", "noise")
            .param("visibility_policy", 0).send().await.success();
        assert!(policies(&app.register(&ann, &[]).await).is_empty());

        let body = app.post("/user_topics").as_user(&ann).param("stream_id", dev).param("topic", "x")
            .param("visibility_policy", 7).send().await.error(400, "BAD_REQUEST");
        assert!(body["msg"].as_str().unwrap().contains("visibility_policy"));
        app.post("/user_topics").as_user(&ann).param("stream_id", 9999).param("topic", "x")
            .param("visibility_policy", 1).send().await.error(400, "BAD_REQUEST");
        let secret = app.create_channel(&app.owner, "secret", &[&app.owner], &[("invite_only", json!(true))]).await;
        app.post("/user_topics").as_user(&ann).param("stream_id", secret).param("topic", "x")
            .param("visibility_policy", 1).send().await.error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn the_legacy_muting_endpoint(app) {
        let (ann, _, dev) = setup(&app).await;
        app.patch("/users/me/subscriptions/muted_topics").as_user(&ann).param("stream", "dev")
            .param("topic", "noise").param("op", "add").send().await.success();
        assert_eq!(policies(&app.register(&ann, &[]).await), [("noise".to_owned(), 1)]);
        app.patch("/users/me/subscriptions/muted_topics").as_user(&ann).param("stream_id", dev)
            .param("topic", "noise").param("op", "add").send().await.error(400, "BAD_REQUEST");
        app.patch("/users/me/subscriptions/muted_topics").as_user(&ann).param("stream_id", dev)
            .param("topic", "noise").param("op", "remove").send().await.success();
        assert!(policies(&app.register(&ann, &[]).await).is_empty());
        app.patch("/users/me/subscriptions/muted_topics").as_user(&ann).param("stream_id", dev)
            .param("topic", "noise").param("op", "remove").send().await.error(400, "BAD_REQUEST");
        app.patch("/users/me/subscriptions/muted_topics").as_user(&ann)
            .param("topic", "noise").param("op", "add").send().await.error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn narrows_and_the_first_unread_follow_topic_visibility(app) {
        let (ann, bob, dev) = app.ann_and_bob_in("dev").await;
        let noise = app.create_channel(&ann, "noise", &[&ann, &bob], &[]).await;
        // Bob sends, so everything is unread for Ann; the oldest is in a topic she mutes.
        let dev_b = app.send_to_channel(&bob, "dev", "B", "muted topic").await;
        let noise_x = app.send_to_channel(&bob, "noise", "x", "muted channel").await;
        let noise_y = app.send_to_channel(&bob, "noise", "Y", "unmuted topic in a muted channel").await;
        let dev_a = app.send_to_channel(&bob, "dev", "a", "followed topic").await;
        let dm = app.post("/messages").as_user(&bob).param("type", "direct").json_param("to", &json!([ann.user_id.0]))
            .param("content", "hi").send().await.success()["id"].as_i64().unwrap();
        for (channel, topic, policy) in [(dev, "b", 1), (dev, "A", 3), (noise, "y", 2)] {
            app.post("/user_topics").as_user(&ann).param("stream_id", channel).param("topic", topic)
                .param("visibility_policy", policy).send().await.success();
        }
        app.post("/users/me/subscriptions/properties").as_user(&ann)
            .json_param("subscription_data", &json!([{"stream_id": noise, "property": "is_muted", "value": true}]))
            .send().await.success();
        let ids = |narrow: Value| {
            let app = &app;
            let ann = &ann;
            async move {
                let page = app.get("/messages").as_user(ann).param("anchor", "oldest").param("num_before", 0)
                    .param("num_after", 100).json_param("narrow", &narrow).send().await.success();
                page["messages"].as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap())
                    .filter(|id| [dev_b, noise_x, noise_y, dev_a, dm].contains(id)).collect::<Vec<i64>>()
            }
        };
        assert_eq!(ids(json!([["is", "followed"]])).await, vec![dev_a]);
        assert_eq!(ids(json!([["is", "muted"]])).await, vec![dev_b, noise_x]);
        assert_eq!(ids(json!([["in", "home"]])).await, vec![noise_y, dev_a, dm]);
        assert_eq!(ids(json!([{"operator": "is", "operand": "muted", "negated": true}])).await, vec![noise_y, dev_a, dm]);
        assert_eq!(ids(json!([["channel", "dev"], ["is", "muted"]])).await, vec![dev_b]);
        // Bob mutes nothing: his home view is everything, `is:muted` and `-in:home` nothing.
        for (narrow, expected) in [
            (json!([["in", "home"]]), vec![dev_b, noise_x, noise_y, dev_a, dm]),
            (json!([["is", "muted"]]), vec![]),
            (json!([{"operator": "in", "operand": "home", "negated": true}]), vec![]),
        ] {
            let page = app.get("/messages").as_user(&bob).param("anchor", "oldest").param("num_before", 0)
                .param("num_after", 100).json_param("narrow", &narrow).send().await.success();
            let got: Vec<i64> = page["messages"].as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap())
                .filter(|id| [dev_b, noise_x, noise_y, dev_a, dm].contains(id)).collect();
            assert_eq!(got, expected, "{narrow}");
        }

        // The first unread skips what is muted; inside a muted channel, only muted topics.
        let first = |narrow: Value| {
            let app = &app;
            let ann = &ann;
            async move {
                app.get("/messages").as_user(ann).param("anchor", "first_unread").param("num_before", 0)
                    .param("num_after", 0).json_param("narrow", &narrow).send().await.success()["anchor"].as_i64().unwrap()
            }
        };
        assert_eq!(first(json!([])).await, noise_y);
        assert_eq!(first(json!([["channel", "noise"]])).await, noise_x);
        assert_eq!(first(json!([["channel", "dev"]])).await, dev_a);
    }
}

backend_test! {
    async fn simultaneous_first_messages_in_a_new_topic_all_succeed(app) {
        // Each send sees no policy yet and follows the topic: the policy is written once, and
        // no send fails on the other's row.
        let (ann, _, _) = setup(&app).await;
        let sends = (0..6).map(|i| {
            let (app, ann) = (&app, &ann);
            async move {
                app.post("/messages")
                    .as_user(ann)
                    .param("type", "stream")
                    .param("to", "dev")
                    .param("topic", "race")
                    .param("content", format!("message {i}"))
                    .send()
                    .await
                    .success()
            }
        });
        let answers = futures_util::future::join_all(sends).await;
        assert_eq!(answers.len(), 6);
        let snapshot = app.register(&ann, &[]).await;
        assert_eq!(policies(&snapshot), vec![("race".to_owned(), 3)]);
    }
}

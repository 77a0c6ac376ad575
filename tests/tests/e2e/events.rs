//! Event queues over HTTP: register snapshots, polling, heartbeats, collection, deletion, and
//! the message events that fill queues.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, Backend, EngineConfig, TestApp};
use serde_json::{json, Value};
use std::time::Duration;

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
    app.create_channel(&ann, "dev", &[&ann, &bob], &[]).await;
    (ann, bob, cat)
}

fn queue_id(snapshot: &Value) -> String {
    snapshot["queue_id"].as_str().unwrap().to_owned()
}

async fn queue(app: &TestApp, who: &Account, params: &[(&str, Value)]) -> String {
    queue_id(&app.register(who, params).await)
}

backend_test! {
    async fn register_returns_a_queue_and_the_snapshot(app) {
        let (ann, _, _) = people(&app).await;
        let id = app.send_to_channel(&ann, "dev", "t", "hello").await;
        let s = app.register(&ann, &[]).await;
        assert!(!queue_id(&s).is_empty());
        assert_eq!(s["last_event_id"], -1);
        assert_eq!(s["zulip_feature_level"], s["service_feature_level"]);
        assert!(s["zulip_version"].is_string() && s["zulip_merge_base"].is_string());
        assert_eq!(s["max_message_id"], id);
        assert_eq!(s["max_message_length"], 10000);
        assert_eq!(s["max_topic_length"], 60);
        assert_eq!(s["event_queue_longpoll_timeout_seconds"], 90);
        assert_eq!(s["realm_empty_topic_display_name"], "general chat");
        assert_eq!(s["user_id"], ann.user_id.0);
        assert_eq!(s["full_name"], "Ann");
        let users: Vec<&str> = s["realm_users"].as_array().unwrap().iter()
            .map(|u| u["full_name"].as_str().unwrap()).collect();
        assert!(users.contains(&"Ann") && users.contains(&"Bob"));
        assert!(s["cross_realm_bots"].as_array().unwrap().iter()
            .any(|b| b["email"] == "notification-bot@zulip.com"));
        let subs: Vec<&str> = s["subscriptions"].as_array().unwrap().iter()
            .map(|c| c["name"].as_str().unwrap()).collect();
        assert!(subs.contains(&"dev"), "{subs:?}");
        assert_eq!(s["user_settings"]["receives_typing_notifications"], true);
        // Clients without user_settings_object also get the legacy top-level copies.
        assert_eq!(s["twenty_four_hour_time"], false);
        let groups: Vec<&str> = s["realm_user_groups"].as_array().unwrap().iter()
            .map(|g| g["name"].as_str().unwrap()).collect();
        assert!(groups.contains(&"role:members"));
    }
}

backend_test! {
    async fn the_snapshot_holds_what_was_asked_for(app) {
        let (ann, bob, _) = people(&app).await;
        let s = app.register(&ann, &[("fetch_event_types", json!(["message"]))]).await;
        assert!(s.get("max_message_id").is_some());
        assert!(s.get("realm_users").is_none());
        assert!(s.get("subscriptions").is_none());
        assert!(s.get("zulip_version").is_some(), "versions are always present");
        // With a capability, no legacy settings copies.
        let s = app.register(&bob, &[("client_capabilities", json!({"user_settings_object": true}))]).await;
        assert!(s.get("user_settings").is_some());
        assert!(s.get("twenty_four_hour_time").is_none());
    }
}

backend_test! {
    async fn unread_and_starred_state(app) {
        let (ann, bob, _) = people(&app).await;
        let a = app.send_to_channel(&ann, "dev", "t", "hi @**Bob**").await;
        let b = app.send_to_channel(&ann, "dev", "", "empty topic").await;
        // A wildcard mention is a bit of the message, not of Bob's row.
        let everyone = app.send_to_channel(&ann, "dev", "t", "@**all** standup").await;
        let dm = app.post("/messages").as_user(&ann).param("type", "direct")
            .json_param("to", &json!([bob.user_id.0])).param("content", "psst")
            .send().await.success()["id"].as_i64().unwrap();
        app.post("/messages/flags").as_user(&bob).json_param("messages", &json!([b]))
            .param("op", "add").param("flag", "starred").send().await.success();
        let s = app.register(&bob, &[]).await;
        let unread = &s["unread_msgs"];
        assert_eq!(unread["count"], 4);
        assert_eq!(unread["mentions"], json!([a, everyone]));
        let streams = unread["streams"].as_array().unwrap();
        let topics: Vec<&str> = streams.iter().map(|s| s["topic"].as_str().unwrap()).collect();
        assert!(topics.contains(&"t") && topics.contains(&"general chat"), "{topics:?}");
        assert_eq!(unread["pms"], json!([{"other_user_id": ann.user_id.0, "sender_id": ann.user_id.0, "unread_message_ids": [dm]}]));
        assert_eq!(s["starred_messages"], json!([b]));
        assert_eq!(s["recent_private_conversations"], json!([{"max_message_id": dm, "user_ids": [ann.user_id.0]}]));
        // With empty_topic_name the empty topic is itself.
        let s = app.register(&bob, &[("client_capabilities", json!({"empty_topic_name": true}))]).await;
        let topics: Vec<&str> = s["unread_msgs"]["streams"].as_array().unwrap().iter()
            .map(|s| s["topic"].as_str().unwrap()).collect();
        assert!(topics.contains(&""), "{topics:?}");
    }
}

backend_test! {
    async fn bad_and_foreign_queues(app) {
        let (ann, bob, _) = people(&app).await;
        let body = app.get("/events").as_user(&ann).param("queue_id", "nope")
            .param("last_event_id", -1).send().await.error(400, "BAD_EVENT_QUEUE_ID");
        assert_eq!(body["msg"], "Bad event queue ID: nope");
        let q = queue(&app, &ann, &[]).await;
        app.get("/events").as_user(&bob).param("queue_id", &q).param("dont_block", "true")
            .send().await.error(400, "BAD_EVENT_QUEUE_ID");
        app.delete("/events").as_user(&bob).param("queue_id", &q).send().await
            .error(400, "BAD_EVENT_QUEUE_ID");
        app.delete("/events").as_user(&ann).param("queue_id", &q).send().await.success();
        app.get("/events").as_user(&ann).param("queue_id", &q).param("dont_block", "true")
            .send().await.error(400, "BAD_EVENT_QUEUE_ID");
    }
}

backend_test! {
    async fn message_events_reach_recipients_only(app) {
        let (ann, bob, cat) = people(&app).await;
        let qa = queue(&app, &ann, &[]).await;
        let qb = queue(&app, &bob, &[("apply_markdown", json!(true))]).await;
        let qc = queue(&app, &cat, &[]).await;
        let id = app.post("/messages").as_user(&ann).param("type", "stream").param("to", "dev")
            .param("topic", "t").param("content", "**hi** @**Bob**")
            .param("queue_id", &qa).param("local_id", "12.01").send().await.success()["id"]
            .as_i64().unwrap();
        let a = app.events_of(&ann, &qa, &["message"]).await;
        assert_eq!(a.len(), 1);
        assert_eq!(a[0]["message"]["id"], id);
        assert_eq!(a[0]["local_id"], "12.01");
        assert_eq!(a[0]["message"]["content"], "**hi** @**Bob**");
        assert_eq!(a[0]["message"]["subject"], "t");
        assert_eq!(a[0]["message"]["display_recipient"], "dev");
        let b = app.events_of(&bob, &qb, &["message"]).await;
        assert_eq!(b.len(), 1);
        assert!(b[0].get("local_id").is_none(), "local echo only to the sending queue");
        assert!(b[0]["message"]["content"].as_str().unwrap().contains("<strong>hi</strong>"));
        assert_eq!(b[0]["flags"], json!(["mentioned"]));
        assert!(app.events_of(&cat, &qc, &["message"]).await.is_empty());
        // all_public_streams sees public channels it is not subscribed to.
        let qc2 = queue(&app, &cat, &[("all_public_streams", json!(true))]).await;
        app.send_to_channel(&ann, "dev", "t", "again").await;
        let c = app.events_of(&cat, &qc2, &["message"]).await;
        assert_eq!(c.len(), 1);
        assert_eq!(c[0]["flags"], json!([]));
    }
}

backend_test! {
    async fn private_channels_and_direct_messages_stay_private(app) {
        let (ann, bob, cat) = people(&app).await;
        app.create_channel(&ann, "secret", &[&ann], &[("invite_only", json!(true))]).await;
        let qc = queue(&app, &cat, &[("all_public_streams", json!(true))]).await;
        let qb = queue(&app, &bob, &[]).await;
        app.send_to_channel(&ann, "secret", "t", "hush").await;
        app.post("/messages").as_user(&ann).param("type", "direct")
            .json_param("to", &json!([bob.user_id.0])).param("content", "dm").send().await.success();
        assert!(app.events_of(&cat, &qc, &["message"]).await.is_empty());
        let b = app.events_of(&bob, &qb, &["message"]).await;
        assert_eq!(b.len(), 1);
        assert_eq!(b[0]["message"]["type"], "private");
    }
}

backend_test! {
    async fn event_types_and_narrow_filter_queues(app) {
        let (ann, bob, _) = people(&app).await;
        let only_reactions = queue(&app, &bob, &[("event_types", json!(["reaction"]))]).await;
        let narrowed = queue(&app, &bob, &[("narrow", json!([["is", "dm"]]))]).await;
        let id = app.send_to_channel(&ann, "dev", "t", "x").await;
        app.post("/messages").as_user(&ann).param("type", "direct")
            .json_param("to", &json!([bob.user_id.0])).param("content", "dm").send().await.success();
        app.post(&format!("/messages/{id}/reactions")).as_user(&ann)
            .param("emoji_name", "smile").send().await.success();
        let types: Vec<String> = app.events(&bob, &only_reactions, -1).await.iter()
            .map(|e| e["type"].as_str().unwrap().to_owned()).collect();
        assert_eq!(types, ["reaction"]);
        let dms = app.events_of(&bob, &narrowed, &["message"]).await;
        assert_eq!(dms.len(), 1);
        assert_eq!(dms[0]["message"]["type"], "private");
    }
}

backend_test! {
    async fn edits_moves_reactions_flags_and_deletions(app) {
        let (ann, bob, _) = people(&app).await;
        let id = app.send_to_channel(&ann, "dev", "t", "first").await;
        let bulk = queue(&app, &bob, &[("client_capabilities", json!({"bulk_message_deletion": true}))]).await;
        let legacy = queue(&app, &bob, &[]).await;
        app.patch(&format!("/messages/{id}")).as_user(&ann).param("content", "edited")
            .send().await.success();
        app.patch(&format!("/messages/{id}")).as_user(&ann).param("topic", "moved")
            .param("propagate_mode", "change_all").param("send_notification_to_old_thread", "false")
            .param("send_notification_to_new_thread", "false").send().await.success();
        app.post(&format!("/messages/{id}/reactions")).as_user(&ann)
            .param("emoji_name", "smile").send().await.success();
        app.delete(&format!("/messages/{id}/reactions")).as_user(&ann)
            .param("emoji_name", "smile").send().await.success();
        app.post("/messages/flags").as_user(&bob).json_param("messages", &json!([id]))
            .param("op", "add").param("flag", "read").send().await.success();
        let second = app.send_to_channel(&ann, "dev", "moved", "second").await;
        app.post("/messages/flags").as_user(&bob).json_param("messages", &json!([id]))
            .param("op", "remove").param("flag", "read").send().await.success();
        app.delete(&format!("/messages/{id}")).as_user(&ann).send().await.success();
        app.delete(&format!("/messages/{second}")).as_user(&ann).send().await.success();

        let events = app.events(&bob, &bulk, -1).await;
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["update_message", "update_message", "reaction", "reaction",
            "update_message_flags", "message", "update_message_flags", "delete_message", "delete_message"]);
        assert_eq!(events[0]["orig_content"], "first");
        assert_eq!(events[0]["content"], "edited");
        assert_eq!(events[0]["rendered_content"], "<p>edited</p>");
        assert_eq!(events[0]["flags"], json!([]));
        assert_eq!(events[1]["orig_subject"], "t");
        assert_eq!(events[1]["subject"], "moved");
        assert_eq!(events[1]["propagate_mode"], "change_all");
        assert_eq!(events[1]["message_ids"], json!([id]));
        assert_eq!(events[2]["op"], "add");
        assert_eq!(events[2]["emoji_name"], "smile");
        assert_eq!(events[2]["user_id"], ann.user_id.0);
        assert_eq!(events[3]["op"], "remove");
        assert_eq!(events[4]["op"], "add");
        assert_eq!(events[4]["messages"], json!([id]));
        assert_eq!(events[6]["op"], "remove");
        assert_eq!(events[6]["message_details"][id.to_string()]["topic"], "moved");
        assert_eq!(events[7]["message_ids"], json!([id]));
        assert_eq!(events[7]["topic"], "moved");
        // Without bulk_message_deletion: one event per message, with message_id.
        let legacy_deletes: Vec<Value> = app.events_of(&bob, &legacy, &["delete_message"]).await;
        assert_eq!(legacy_deletes.len(), 2);
        assert_eq!(legacy_deletes[0]["message_id"], id);
        assert!(legacy_deletes[0].get("message_ids").is_none());
    }
}

backend_test! {
    async fn get_events_without_a_queue_registers_one(app) {
        let (ann, _, _) = people(&app).await;
        let body = app.get("/events").as_user(&ann).param("dont_block", "true")
            .json_param("event_types", &json!(["message"])).send().await.success();
        let q = body["queue_id"].as_str().unwrap().to_owned();
        assert_eq!(body["events"], json!([]));
        app.send_to_channel(&ann, "dev", "t", "x").await;
        assert_eq!(app.events_of(&ann, &q, &["message"]).await.len(), 1);
        // A blocking poll without a queue is refused at once, as the reference does, instead
        // of registering a queue nobody knows about and waiting on it.
        for dont_block in [None, Some("false")] {
            let mut request = app.get("/events").as_user(&ann);
            if let Some(value) = dont_block {
                request = request.param("dont_block", value);
            }
            let body = tokio::time::timeout(Duration::from_secs(5), request.send())
                .await
                .expect("answered at once")
                .error(400, "BAD_REQUEST");
            assert_eq!(body["msg"], "Missing 'queue_id' argument");
        }
    }
}

backend_test! {
    async fn acknowledging_prunes_and_ids_increase(app) {
        let (ann, bob, _) = people(&app).await;
        let q = queue(&app, &bob, &[]).await;
        for n in 0..3 {
            app.send_to_channel(&ann, "dev", "t", &format!("m{n}")).await;
        }
        let events = app.events(&bob, &q, -1).await;
        let ids: Vec<i64> = events.iter().map(|e| e["id"].as_i64().unwrap()).collect();
        assert_eq!(ids, [0, 1, 2]);
        let rest = app.events(&bob, &q, 1).await;
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0]["id"], 2);
    }
}

/// Heartbeats and collection need a short-lived engine, so they run outside `backend_test!`.
#[actix_web::test]
async fn idle_polls_get_heartbeats_and_idle_queues_are_collected() {
    for backend in Backend::available() {
        let app = TestApp::start_with_engine(
            backend,
            EngineConfig {
                heartbeat: Duration::from_millis(200),
                queue_timeout: Duration::from_millis(300),
                ..EngineConfig::default()
            },
        )
        .await;
        let owner = app.owner.clone();
        let q = queue(&app, &owner, &[]).await;
        let body = app
            .get("/events")
            .as_user(&owner)
            .param("queue_id", &q)
            .param("last_event_id", -1)
            .send()
            .await
            .success();
        assert_eq!(body["events"][0]["type"], "heartbeat");
        assert_eq!(body["queue_id"], q.as_str());
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(app.ctx.events.engine().collect_garbage(), 1);
        app.get("/events")
            .as_user(&owner)
            .param("queue_id", &q)
            .param("dont_block", "true")
            .send()
            .await
            .error(400, "BAD_EVENT_QUEUE_ID");
    }
}

backend_test! {
    async fn notification_settings_are_null_only_for_clients_that_handle_it(app) {
        let (ann, _, _) = people(&app).await;
        let modern = [("client_capabilities", json!({"notification_settings_null": true}))];
        let find = |s: &Value| -> Value {
            s["subscriptions"].as_array().unwrap().iter()
                .find(|c| c["name"] == "dev").cloned().unwrap()
        };
        let new_style = app.register(&ann, &modern).await;
        let old_style = app.register(&ann, &[]).await;
        assert_eq!(find(&new_style)["desktop_notifications"], Value::Null);
        // Inherited from enable_stream_desktop_notifications (off by default).
        assert_eq!(find(&old_style)["desktop_notifications"], false);
        assert_eq!(find(&old_style)["wildcard_mentions_notify"], true);
        let dev = find(&new_style)["stream_id"].as_i64().unwrap();
        let change = |value: Value| json!([{"stream_id": dev, "property": "push_notifications", "value": value}]);
        app.post("/users/me/subscriptions/properties").as_user(&ann)
            .json_param("subscription_data", &change(json!(true))).send().await.success();
        app.post("/users/me/subscriptions/properties").as_user(&ann)
            .json_param("subscription_data", &change(Value::Null)).send().await.success();
        let q_new = queue_id(&new_style);
        let q_old = queue_id(&old_style);
        let values = |events: Vec<Value>| -> Vec<Value> {
            events.iter().filter(|e| e["op"] == "update").map(|e| e["value"].clone()).collect()
        };
        // The reset is announced with the inherited value to every client: the mobile app, which
        // declares notification_settings_null, decodes update values as booleans.
        assert_eq!(values(app.events_of(&ann, &q_new, &["subscription"]).await), [json!(true), json!(false)]);
        assert_eq!(values(app.events_of(&ann, &q_old, &["subscription"]).await), [json!(true), json!(false)]);
    }
}

backend_test! {
    async fn anonymous_register_needs_public_access(app) {
        let body = app.post("/register").send().await.error(401, "UNAUTHORIZED");
        assert!(body["msg"].as_str().unwrap().contains("Not logged in"));
        app.ctx.db.run(|conn| parley_storage::realms::set_spectator_access(conn, true)).await.unwrap();
        app.ctx.events.realm_cache().invalidate();
        app.create_channel(&app.owner, "open", &[&app.owner], &[("is_web_public", json!(true))]).await;
        app.create_channel(&app.owner, "closed", &[&app.owner], &[]).await;
        let s = app.post("/register").send().await.success();
        assert_eq!(s["queue_id"], Value::Null);
        assert!(s["realm_name"].is_string());
        let names: Vec<&str> = s["streams"].as_array().unwrap().iter()
            .map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["open"]);
        let body = app.post("/register").param("client_gravatar", "true").send().await
            .error(400, "BAD_REQUEST");
        assert!(body["msg"].as_str().unwrap().contains("client_gravatar"));
        let body = app.post("/register").param("include_subscribers", "true").send().await
            .error(400, "BAD_REQUEST");
        assert!(body["msg"].as_str().unwrap().contains("include_subscribers"));
        // Credentials that are sent must still be right.
        app.post("/register").basic_auth("nobody@parley.test", "wrong").send().await
            .error(401, "INVALID_API_KEY");
    }
}

backend_test! {
    async fn recent_conversations_newest_first_with_their_newest_message(app) {
        let (ann, bob, cat) = people(&app).await;
        let dm = |from: &Account, to: Vec<i64>, text: &'static str| {
            let app = &app;
            let from = from.clone();
            async move {
                app.post("/messages").as_user(&from).param("type", "direct")
                    .json_param("to", &json!(to)).param("content", text)
                    .send().await.success()["id"].as_i64().unwrap()
            }
        };
        let (a, b, c) = (ann.user_id.0, bob.user_id.0, cat.user_id.0);
        let _old_pair = dm(&ann, vec![b], "first").await;
        let group = dm(&cat, vec![a, b], "to both").await;
        app.send_to_channel(&ann, "dev", "t", "a channel message between").await;
        let pair = dm(&bob, vec![a], "back to ann").await;
        let to_self = dm(&ann, vec![a], "a note").await;
        app.send_to_channel(&bob, "dev", "t", "the newest message is in a channel").await;
        let s = app.register(&ann, &[("fetch_event_types", json!(["recent_private_conversations"]))]).await;
        assert_eq!(s["recent_private_conversations"], json!([
            {"max_message_id": to_self, "user_ids": []},
            {"max_message_id": pair, "user_ids": [b]},
            {"max_message_id": group, "user_ids": [b, c]},
        ]));
        // Cat was in the group conversation only.
        let s = app.register(&cat, &[("fetch_event_types", json!(["recent_private_conversations"]))]).await;
        assert_eq!(s["recent_private_conversations"], json!([{"max_message_id": group, "user_ids": [a, b]}]));
    }
}

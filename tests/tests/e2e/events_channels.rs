//! Events about channels, subscriptions and people: what each change sends, to whom, in which
//! order, and that a register snapshot plus the events since equals a fresh snapshot.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// A registered queue, read from where the last read stopped.
struct Queue {
    id: String,
    last: i64,
    snapshot: Value,
}

/// Registers a queue. Clients here handle null notification settings (as the subscription
/// endpoints return them) unless the capabilities say otherwise, so that subscription objects in
/// events compare equal to `GET /users/me/subscriptions`.
async fn register(app: &TestApp, who: &Account, types: &[&str], capabilities: Value) -> Queue {
    let mut capabilities = capabilities;
    if let Some(map) = capabilities.as_object_mut() {
        map.entry("notification_settings_null")
            .or_insert(json!(true));
    }
    let body = app
        .post("/register")
        .as_user(who)
        .json_param("event_types", &json!(types))
        .json_param("client_capabilities", &capabilities)
        .param("include_subscribers", "true")
        .send()
        .await
        .success();
    Queue {
        id: body["queue_id"].as_str().unwrap().to_owned(),
        last: body["last_event_id"].as_i64().unwrap(),
        snapshot: body,
    }
}

/// The events queued since the last read (heartbeats left out).
async fn events(app: &TestApp, who: &Account, queue: &mut Queue) -> Vec<Value> {
    let body = app
        .get("/events")
        .as_user(who)
        .param("queue_id", &queue.id)
        .param("last_event_id", queue.last)
        .param("dont_block", "true")
        .send()
        .await
        .success();
    let list = body["events"].as_array().unwrap().clone();
    if let Some(last) = list.last() {
        queue.last = last["id"].as_i64().unwrap();
    }
    list.into_iter()
        .filter(|e| e["type"] != "heartbeat")
        .collect()
}

/// `type`/`op` of each event, for order assertions.
fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e["op"].as_str() {
            Some(op) => format!("{}:{op}", e["type"].as_str().unwrap()),
            None => e["type"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// An event without its queue-specific ID.
fn strip(event: &Value) -> Value {
    let mut event = event.clone();
    event.as_object_mut().unwrap().remove("id");
    event
}

async fn subscription_of(app: &TestApp, who: &Account, channel: i64) -> Value {
    let subs = app
        .get("/users/me/subscriptions")
        .as_user(who)
        .param("include_subscribers", "true")
        .send()
        .await
        .success();
    subs["subscriptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stream_id"] == channel)
        .cloned()
        .expect("subscribed")
}

const CHANNEL_EVENTS: &[&str] = &["subscription", "stream", "default_streams"];

backend_test! {
    async fn subscribing_sends_add_to_the_subscriber_and_peer_add_to_the_others(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let guest = app.create_user("guest@parley.test", "Gus", Role::Guest).await;
        let id = app.create_channel(&app.owner, "design", &[&ann], &[]).await;
        let mut qa = register(&app, &ann, CHANNEL_EVENTS, json!({})).await;
        let mut qb = register(&app, &bob, CHANNEL_EVENTS, json!({})).await;
        let mut qg = register(&app, &guest, CHANNEL_EVENTS, json!({})).await;
        let mut qo = register(&app, &app.owner, CHANNEL_EVENTS, json!({})).await;

        app.post("/users/me/subscriptions").as_user(&bob)
            .json_param("subscriptions", &json!([{"name": "design"}])).send().await.success();

        let got = events(&app, &bob, &mut qb).await;
        assert_eq!(kinds(&got), ["subscription:add"], "{got:?}");
        let expected = subscription_of(&app, &bob, id).await;
        assert_eq!(got[0]["subscriptions"], json!([expected]));
        assert_eq!(got[0]["subscriptions"][0]["subscribers"], json!([ann.user_id.0, bob.user_id.0]));
        let peer = json!({"type": "subscription", "op": "peer_add", "stream_ids": [id], "user_ids": [bob.user_id.0]});
        for (who, queue) in [(&ann, &mut qa), (&app.owner, &mut qo)] {
            let got = events(&app, who, queue).await;
            assert_eq!(got.iter().map(strip).collect::<Vec<_>>(), vec![peer.clone()]);
        }
        assert_eq!(events(&app, &guest, &mut qg).await, Vec::<Value>::new(), "guests cannot see the channel");

        // Subscribing again changes nothing and says nothing.
        app.post("/users/me/subscriptions").as_user(&bob)
            .json_param("subscriptions", &json!([{"name": "design"}])).send().await.success();
        assert!(events(&app, &bob, &mut qb).await.is_empty());
        assert!(events(&app, &ann, &mut qa).await.is_empty());
    }
}

backend_test! {
    async fn a_private_channel_is_announced_only_to_those_who_may_see_it(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let guest = app.create_user("guest@parley.test", "Gus", Role::Guest).await;
        let mut qa = register(&app, &ann, CHANNEL_EVENTS, json!({})).await;
        let mut qb = register(&app, &bob, CHANNEL_EVENTS, json!({})).await;
        let mut qg = register(&app, &guest, CHANNEL_EVENTS, json!({})).await;
        let mut qo = register(&app, &app.owner, CHANNEL_EVENTS, json!({})).await;

        let id = app.create_channel(&ann, "secret", &[&ann, &guest], &[("invite_only", json!(true))]).await;

        // Subscribers: the channel first, then their subscription.
        for (who, queue) in [(&ann, &mut qa), (&guest, &mut qg)] {
            let got = events(&app, who, queue).await;
            assert_eq!(kinds(&got), ["stream:create", "subscription:add"], "{got:?}");
            assert_eq!(got[0]["streams"][0]["stream_id"], id);
            assert_eq!(got[0]["streams"][0]["invite_only"], true);
            assert!(got[0]["streams"][0].get("subscribers").is_none());
            let expected = subscription_of(&app, who, id).await;
            assert_eq!(got[1]["subscriptions"], json!([expected]));
        }
        // Administrators see that it exists, and who joined it.
        let got = events(&app, &app.owner, &mut qo).await;
        assert_eq!(kinds(&got), ["stream:create", "subscription:peer_add"], "{got:?}");
        assert_eq!(got[0]["streams"][0]["name"], "secret");
        let mut joined = vec![ann.user_id.0, guest.user_id.0];
        joined.sort();
        assert_eq!(strip(&got[1]), json!({"type": "subscription", "op": "peer_add", "stream_ids": [id], "user_ids": joined}));
        // Other members learn nothing.
        assert!(events(&app, &bob, &mut qb).await.is_empty());

        // A public channel created with subscribers: every member (not the guest) learns of it
        // before its subscribers.
        let public = app.create_channel(&ann, "open", &[&ann], &[]).await;
        let got = events(&app, &bob, &mut qb).await;
        assert_eq!(kinds(&got), ["stream:create", "subscription:peer_add"], "{got:?}");
        assert_eq!(got[0]["streams"][0]["subscriber_count"], 0);
        assert_eq!(got[1]["user_ids"], json!([ann.user_id.0]));
        let got = events(&app, &ann, &mut qa).await;
        assert_eq!(kinds(&got), ["stream:create", "subscription:add"], "{got:?}");
        assert_eq!(got[1]["subscriptions"][0]["stream_id"], public);
        assert!(events(&app, &guest, &mut qg).await.is_empty());

        // Subscribing a guest to a public channel: the guest gets the channel first.
        app.post("/users/me/subscriptions").as_user(&app.owner)
            .json_param("subscriptions", &json!([{"name": "open"}]))
            .json_param("principals", &json!([guest.user_id.0])).send().await.success();
        let got = events(&app, &guest, &mut qg).await;
        assert_eq!(kinds(&got), ["stream:create", "subscription:add"], "{got:?}");
        assert_eq!(got[0]["streams"][0]["subscriber_count"], 2);
    }
}

backend_test! {
    async fn subscription_property_changes_reach_only_the_user(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let id = app.create_channel(&ann, "design", &[&ann, &bob], &[]).await;
        let mut qa = register(&app, &ann, CHANNEL_EVENTS, json!({})).await;
        let mut qb = register(&app, &bob, CHANNEL_EVENTS, json!({})).await;
        app.post("/users/me/subscriptions/properties").as_user(&ann)
            .json_param("subscription_data", &json!([
                {"stream_id": id, "property": "color", "value": "#AABBCC"},
                {"stream_id": id, "property": "is_muted", "value": true},
                {"stream_id": id, "property": "pin_to_top", "value": true},
                {"stream_id": id, "property": "desktop_notifications", "value": false},
                {"stream_id": id, "property": "push_notifications", "value": null},
                {"stream_id": id, "property": "in_home_view", "value": true},
            ])).send().await.success();
        let got: Vec<Value> = events(&app, &ann, &mut qa).await.iter().map(strip).collect();
        let update = |property: &str, value: Value| json!({
            "type": "subscription", "op": "update", "stream_id": id, "property": property, "value": value,
        });
        assert_eq!(got, vec![
            update("color", json!("#aabbcc")),
            update("in_home_view", json!(false)),
            update("is_muted", json!(true)),
            update("pin_to_top", json!(true)),
            update("desktop_notifications", json!(false)),
            // Reset to inherit: announced with the inherited value (push is off by default).
            update("push_notifications", json!(false)),
            update("in_home_view", json!(true)),
            update("is_muted", json!(false)),
        ]);
        assert!(events(&app, &bob, &mut qb).await.is_empty());
        // A refused change sends nothing.
        app.post("/users/me/subscriptions/properties").as_user(&ann)
            .json_param("subscription_data", &json!([
                {"stream_id": id, "property": "pin_to_top", "value": false},
                {"stream_id": id, "property": "nonsense", "value": 1},
            ])).send().await.error(400, "BAD_REQUEST");
        assert!(events(&app, &ann, &mut qa).await.is_empty());
    }
}

backend_test! {
    async fn channel_setting_changes_send_stream_updates(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let guest = app.create_user("guest@parley.test", "Gus", Role::Guest).await;
        let id = app.create_channel(&app.owner, "design", &[&ann], &[]).await;
        let mut qa = register(&app, &ann, CHANNEL_EVENTS, json!({})).await;
        let mut qb = register(&app, &bob, CHANNEL_EVENTS, json!({})).await;
        let mut qg = register(&app, &guest, CHANNEL_EVENTS, json!({})).await;

        app.patch(&format!("/streams/{id}")).as_user(&app.owner)
            .param("new_name", "Design team").param("description", "All things **design**")
            .send().await.success();
        let expected = vec![
            json!({"type": "stream", "op": "update", "stream_id": id, "name": "design",
                   "property": "name", "value": "Design team"}),
            json!({"type": "stream", "op": "update", "stream_id": id, "name": "Design team",
                   "property": "description", "value": "All things **design**",
                   "rendered_description": "<p>All things <strong>design</strong></p>"}),
        ];
        for (who, queue) in [(&ann, &mut qa), (&bob, &mut qb)] {
            let got: Vec<Value> = events(&app, who, queue).await.iter().map(strip).collect();
            assert_eq!(got, expected);
        }
        assert!(events(&app, &guest, &mut qg).await.is_empty());

        // Private: subscribers get the update, members who may no longer see it a delete.
        app.patch(&format!("/streams/{id}")).as_user(&app.owner)
            .param("is_private", "true").send().await.success();
        let stream = app.get(&format!("/streams/{id}")).as_user(&ann).send().await.success()["stream"].clone();
        let got: Vec<Value> = events(&app, &ann, &mut qa).await.iter().map(strip).collect();
        assert_eq!(got, vec![json!({"type": "stream", "op": "update", "stream_id": id, "name": "Design team",
            "property": "invite_only", "value": true,
            "history_public_to_subscribers": stream["history_public_to_subscribers"],
            "is_web_public": false})]);
        let got = events(&app, &bob, &mut qb).await;
        assert_eq!(kinds(&got), ["stream:delete"], "{got:?}");
        assert_eq!(got[0]["stream_ids"], json!([id]));
        assert_eq!(got[0]["streams"][0]["stream_id"], id);

        // Public again: members get the channel and its subscribers.
        app.patch(&format!("/streams/{id}")).as_user(&app.owner)
            .param("is_private", "false").send().await.success();
        let got = events(&app, &bob, &mut qb).await;
        assert_eq!(kinds(&got), ["stream:create", "subscription:peer_add"], "{got:?}");
        assert_eq!(got[0]["streams"][0]["invite_only"], false);
        assert_eq!(got[1]["user_ids"], json!([ann.user_id.0]));
        assert_eq!(kinds(&events(&app, &ann, &mut qa).await), ["stream:update"]);

        // Group settings carry the setting value.
        let setting = json!({"direct_members": [ann.user_id.0], "direct_subgroups": []});
        app.patch(&format!("/streams/{id}")).as_user(&app.owner)
            .json_param("can_send_message_group", &json!({"new": setting})).send().await.success();
        let got: Vec<Value> = events(&app, &bob, &mut qb).await.iter().map(strip).collect();
        assert_eq!(got, vec![json!({"type": "stream", "op": "update", "stream_id": id, "name": "Design team",
            "property": "can_send_message_group", "value": setting})]);
        app.patch(&format!("/streams/{id}")).as_user(&app.owner)
            .param("topics_policy", "disable_empty_topic").send().await.success();
        let got = events(&app, &bob, &mut qb).await;
        assert_eq!((got[0]["property"].clone(), got[0]["value"].clone()), (json!("topics_policy"), json!("disable_empty_topic")));

        assert_eq!(kinds(&events(&app, &ann, &mut qa).await), ["stream:update", "stream:update"]);

        // Default channels: the list, to every member but not to guests.
        app.post("/default_streams").as_user(&app.owner).param("stream_id", id).send().await.success();
        let got = events(&app, &ann, &mut qa).await;
        assert_eq!(kinds(&got), ["default_streams"]);
        // Channel IDs, as the reference sends them since feature level 330.
        let ids = got[0]["default_streams"].as_array().unwrap();
        assert_eq!(ids.len(), 2, "{got:?}");
        assert!(ids.contains(&json!(id)), "{got:?}");
        assert!(events(&app, &guest, &mut qg).await.is_empty());
        app.delete("/default_streams").as_user(&app.owner).param("stream_id", id).send().await.success();
        let got = events(&app, &bob, &mut qb).await;
        assert_eq!(kinds(&got), ["default_streams", "default_streams"]);
        assert_eq!(got[1]["default_streams"].as_array().unwrap().len(), 1);
    }
}

backend_test! {
    async fn archiving_depends_on_the_archived_channels_capability(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let id = app.create_channel(&app.owner, "old", &[&ann], &[]).await;
        let mut modern = register(&app, &ann, CHANNEL_EVENTS, json!({"archived_channels": true})).await;
        let mut legacy = register(&app, &ann, CHANNEL_EVENTS, json!({})).await;
        app.delete(&format!("/streams/{id}")).as_user(&app.owner).send().await.success();
        let got: Vec<Value> = events(&app, &ann, &mut modern).await.iter().map(strip).collect();
        assert_eq!(got, vec![json!({"type": "stream", "op": "update", "stream_id": id, "name": "old",
            "property": "is_archived", "value": true})]);
        let got = events(&app, &ann, &mut legacy).await;
        assert_eq!(kinds(&got), ["stream:delete"], "{got:?}");
        assert_eq!(got[0]["stream_ids"], json!([id]));
        assert_eq!(got[0]["streams"], json!([{"stream_id": id}]));
    }
}

backend_test! {
    async fn unsubscribing_sends_remove_and_peer_remove(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let cat = app.create_user("cat@parley.test", "Cat", Role::Member).await;
        let open = app.create_channel(&ann, "open", &[&ann, &bob], &[]).await;
        let secret = app.create_channel(&ann, "secret", &[&ann, &bob], &[("invite_only", json!(true))]).await;
        let mut qa = register(&app, &ann, CHANNEL_EVENTS, json!({})).await;
        let mut qb = register(&app, &bob, CHANNEL_EVENTS, json!({})).await;
        let mut qc = register(&app, &cat, CHANNEL_EVENTS, json!({})).await;
        let mut qo = register(&app, &app.owner, CHANNEL_EVENTS, json!({})).await;

        app.delete("/users/me/subscriptions").as_user(&bob)
            .json_param("subscriptions", &json!(["open", "secret"])).send().await.success();
        let got: Vec<Value> = events(&app, &bob, &mut qb).await.iter().map(strip).collect();
        assert_eq!(kinds(&got), ["subscription:remove", "stream:delete"], "{got:?}");
        assert_eq!(got[0]["subscriptions"], json!([{"name": "open", "stream_id": open}, {"name": "secret", "stream_id": secret}]));
        assert_eq!(got[1]["stream_ids"], json!([secret]), "bob may no longer see the private channel");
        let peer = |channel: i64| json!({"type": "subscription", "op": "peer_remove", "stream_ids": [channel], "user_ids": [bob.user_id.0]});
        let got: Vec<Value> = events(&app, &ann, &mut qa).await.iter().map(strip).collect();
        assert_eq!(got, vec![peer(open), peer(secret)]);
        let got: Vec<Value> = events(&app, &app.owner, &mut qo).await.iter().map(strip).collect();
        assert_eq!(got, vec![peer(open), peer(secret)]);
        let got: Vec<Value> = events(&app, &cat, &mut qc).await.iter().map(strip).collect();
        assert_eq!(got, vec![peer(open)], "cat cannot see the private channel");
    }
}

backend_test! {
    async fn new_users_are_announced_to_everyone(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let guest = app.create_user("guest@parley.test", "Gus", Role::Guest).await;
        let mut qa = register(&app, &ann, &["realm_user", "subscription"], json!({})).await;
        let mut qg = register(&app, &guest, &["realm_user", "subscription"], json!({})).await;
        let body = app.post("/users").as_user(&app.owner)
            .param("email", "new@parley.test").param("password", "a-long-password").param("full_name", "Newt")
            .send().await.success();
        let new_id = body["user_id"].as_i64().unwrap();
        let general = app.get("/get_stream_id").as_user(&ann).param("stream", "general").send().await.success()["stream_id"].clone();

        let got = events(&app, &ann, &mut qa).await;
        assert_eq!(kinds(&got), ["realm_user:add", "subscription:peer_add"], "{got:?}");
        let person = app.get(&format!("/users/{new_id}")).as_user(&ann)
            .param("client_gravatar", "false").param("include_custom_profile_fields", "true")
            .send().await.success()["user"].clone();
        assert_eq!(got[0]["person"], person);
        assert_eq!(got[0]["person"]["full_name"], "Newt");
        assert_eq!(got[1]["stream_ids"], json!([general]));
        assert_eq!(got[1]["user_ids"], json!([new_id]));
        // Guests get the person too (and see general's subscribers, being subscribed).
        let got = events(&app, &guest, &mut qg).await;
        assert_eq!(kinds(&got), ["realm_user:add", "subscription:peer_add"], "{got:?}");
        assert_eq!(got[0]["person"]["user_id"], new_id);
    }
}

backend_test! {
    async fn custom_profile_field_events(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let mut qb = register(&app, &bob, &["realm_user", "custom_profile_fields"], json!({})).await;
        let bio = app.post("/realm/profile_fields").as_user(&app.owner)
            .param("name", "Biography").param("field_type", 2).send().await.success()["id"].as_i64().unwrap();
        let phone = app.post("/realm/profile_fields").as_user(&app.owner)
            .param("name", "Phone").param("field_type", 1).send().await.success()["id"].as_i64().unwrap();
        let got = events(&app, &bob, &mut qb).await;
        assert_eq!(kinds(&got), ["custom_profile_fields", "custom_profile_fields"]);
        let listed = app.get("/realm/profile_fields").as_user(&bob).send().await.success()["custom_fields"].clone();
        assert_eq!(got[1]["fields"], listed);
        assert_eq!(got[0]["fields"].as_array().unwrap().len(), 1);

        app.patch("/users/me/profile_data").as_user(&ann)
            .json_param("data", &json!([{"id": bio, "value": "I like **bold**"}, {"id": phone, "value": "555"}]))
            .send().await.success();
        let got: Vec<Value> = events(&app, &bob, &mut qb).await.iter().map(strip).collect();
        assert_eq!(got, vec![
            json!({"type": "realm_user", "op": "update", "person": {"user_id": ann.user_id.0,
                "custom_profile_field": {"id": bio, "value": "I like **bold**",
                                         "rendered_value": "<p>I like <strong>bold</strong></p>"}}}),
            json!({"type": "realm_user", "op": "update", "person": {"user_id": ann.user_id.0,
                "custom_profile_field": {"id": phone, "value": "555", "rendered_value": "<p>555</p>"}}}),
        ]);
        // The same value again changes nothing.
        app.patch("/users/me/profile_data").as_user(&ann)
            .json_param("data", &json!([{"id": phone, "value": "555"}])).send().await.success();
        assert!(events(&app, &bob, &mut qb).await.is_empty());
    }
}

// ---- The oracle: snapshot + events == fresh snapshot ----

const LISTS: [&str; 3] = ["subscriptions", "unsubscribed", "never_subscribed"];

fn list_mut<'a>(state: &'a mut Map<String, Value>, key: &str) -> &'a mut Vec<Value> {
    state.get_mut(key).unwrap().as_array_mut().unwrap()
}

fn take(list: &mut Vec<Value>, id: &Value) -> Option<Value> {
    let at = list.iter().position(|s| &s["stream_id"] == id)?;
    Some(list.remove(at))
}

fn set_subscribers(sub: &mut Value, subscribers: BTreeSet<i64>) {
    sub["subscriber_count"] = json!(subscribers.len());
    sub["subscribers"] = json!(subscribers.into_iter().collect::<Vec<_>>());
}

fn subscribers_of(sub: &Value) -> BTreeSet<i64> {
    sub["subscribers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect()
}

/// Applies one event to the channel parts of a snapshot, as a client does.
fn apply(state: &mut Map<String, Value>, event: &Value, me: i64) {
    let op = event["op"].as_str().unwrap_or("");
    match (event["type"].as_str().unwrap(), op) {
        ("subscription", "add") => {
            for sub in event["subscriptions"].as_array().unwrap() {
                for key in ["unsubscribed", "never_subscribed"] {
                    take(list_mut(state, key), &sub["stream_id"]);
                }
                let subs = list_mut(state, "subscriptions");
                take(subs, &sub["stream_id"]);
                subs.push(sub.clone());
            }
        }
        ("subscription", "remove") => {
            for gone in event["subscriptions"].as_array().unwrap() {
                if let Some(mut sub) = take(list_mut(state, "subscriptions"), &gone["stream_id"]) {
                    let mut subscribers = subscribers_of(&sub);
                    subscribers.remove(&me);
                    set_subscribers(&mut sub, subscribers);
                    list_mut(state, "unsubscribed").push(sub);
                }
            }
        }
        ("subscription", "update") => {
            for sub in list_mut(state, "subscriptions") {
                if sub["stream_id"] == event["stream_id"] {
                    sub[event["property"].as_str().unwrap()] = event["value"].clone();
                }
            }
        }
        ("subscription", "peer_add" | "peer_remove") => {
            let users: Vec<i64> = event["user_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap())
                .collect();
            for key in LISTS {
                for sub in list_mut(state, key) {
                    if event["stream_ids"]
                        .as_array()
                        .unwrap()
                        .contains(&sub["stream_id"])
                    {
                        let mut subscribers = subscribers_of(sub);
                        for user in &users {
                            if op == "peer_add" {
                                subscribers.insert(*user);
                            } else {
                                subscribers.remove(user);
                            }
                        }
                        set_subscribers(sub, subscribers);
                    }
                }
            }
        }
        ("stream", "create") => {
            for stream in event["streams"].as_array().unwrap() {
                let streams = list_mut(state, "streams");
                take(streams, &stream["stream_id"]);
                streams.push(stream.clone());
                let known = ["subscriptions", "unsubscribed"].iter().any(|key| {
                    state[*key]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|s| s["stream_id"] == stream["stream_id"])
                });
                if !known {
                    let mut entry = stream.clone();
                    entry["subscribers"] = json!([]);
                    list_mut(state, "never_subscribed").push(entry);
                }
            }
        }
        ("stream", "delete") => {
            for id in event["stream_ids"].as_array().unwrap() {
                for key in LISTS.iter().chain(&["streams"]) {
                    take(list_mut(state, key), id);
                }
            }
        }
        ("stream", "update") => {
            for key in LISTS.iter().chain(&["streams"]) {
                for sub in list_mut(state, key) {
                    if sub["stream_id"] == event["stream_id"] {
                        sub[event["property"].as_str().unwrap()] = event["value"].clone();
                        for extra in [
                            "rendered_description",
                            "history_public_to_subscribers",
                            "is_web_public",
                        ] {
                            if let Some(value) = event.get(extra) {
                                sub[extra] = value.clone();
                            }
                        }
                    }
                }
            }
        }
        other => panic!("unexpected event {other:?}: {event}"),
    }
}

/// The channel parts of a snapshot, each list in name order; `streams` without
/// `subscriber_count` (peer events do not maintain it there).
fn channel_state(snapshot: &Value) -> Value {
    let mut out = Map::new();
    for key in LISTS.iter().chain(&["streams"]) {
        let mut list = snapshot[*key].as_array().unwrap().clone();
        list.sort_by_key(|s| s["name"].as_str().unwrap().to_lowercase());
        if *key == "streams" {
            for stream in &mut list {
                stream.as_object_mut().unwrap().remove("subscriber_count");
            }
        }
        out.insert((*key).to_owned(), Value::Array(list));
    }
    Value::Object(out)
}

async fn check_oracle(app: &TestApp, who: &Account, queue: &mut Queue, capabilities: Value) {
    let mut state = queue.snapshot.as_object().unwrap().clone();
    for event in events(app, who, queue).await {
        apply(&mut state, &event, who.user_id.0);
    }
    let fresh = register(app, who, &["subscription", "stream"], capabilities).await;
    assert_eq!(
        channel_state(&Value::Object(state)),
        channel_state(&fresh.snapshot),
        "state of user {} diverged",
        who.email
    );
}

backend_test! {
    async fn snapshot_plus_events_equals_a_fresh_snapshot(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let cat = app.create_user("cat@parley.test", "Cat", Role::Member).await;
        let guest = app.create_user("guest@parley.test", "Gus", Role::Guest).await;
        let types = ["subscription", "stream"];
        let observers: Vec<(&Account, Value)> = vec![
            (&ann, json!({})),
            (&ann, json!({"archived_channels": true})),
            (&bob, json!({})),
            (&cat, json!({})),
            (&guest, json!({})),
            (&app.owner, json!({})),
            (&app.owner, json!({"archived_channels": true})),
        ];
        let mut queues = Vec::new();
        for (who, capabilities) in &observers {
            queues.push(register(&app, who, &types, capabilities.clone()).await);
        }

        let design = app.create_channel(&app.owner, "design", &[&ann], &[]).await;
        let secret = app.create_channel(&ann, "secret", &[&ann, &bob], &[("invite_only", json!(true))]).await;
        app.post("/users/me/subscriptions").as_user(&bob)
            .json_param("subscriptions", &json!([{"name": "design"}])).send().await.success();
        app.post("/users/me/subscriptions").as_user(&app.owner)
            .json_param("subscriptions", &json!([{"name": "fresh", "description": "new *here*"}]))
            .json_param("principals", &json!([guest.user_id.0, ann.user_id.0])).send().await.success();
        let fresh = app.get("/get_stream_id").as_user(&ann).param("stream", "fresh").send().await.success()["stream_id"].as_i64().unwrap();
        app.post("/users/me/subscriptions/properties").as_user(&ann)
            .json_param("subscription_data", &json!([
                {"stream_id": design, "property": "color", "value": "#123456"},
                {"stream_id": design, "property": "is_muted", "value": true},
                {"stream_id": fresh, "property": "pin_to_top", "value": true},
                {"stream_id": fresh, "property": "email_notifications", "value": false},
            ])).send().await.success();
        app.patch(&format!("/streams/{design}")).as_user(&app.owner)
            .param("new_name", "Design 2").param("description", "*new*").send().await.success();
        app.patch(&format!("/streams/{secret}")).as_user(&app.owner)
            .param("is_private", "false").send().await.success();
        app.patch(&format!("/streams/{fresh}")).as_user(&app.owner)
            .param("is_private", "true").param("history_public_to_subscribers", "true").send().await.success();
        app.patch(&format!("/streams/{fresh}")).as_user(&app.owner)
            .json_param("can_send_message_group", &json!({"new": {"direct_members": [ann.user_id.0], "direct_subgroups": []}}))
            .send().await.success();
        app.delete("/users/me/subscriptions").as_user(&bob)
            .json_param("subscriptions", &json!(["secret"])).send().await.success();
        app.delete("/users/me/subscriptions").as_user(&ann)
            .json_param("subscriptions", &json!(["general"])).send().await.success();
        app.delete("/users/me/subscriptions").as_user(&app.owner)
            .json_param("subscriptions", &json!(["fresh"]))
            .json_param("principals", &json!([guest.user_id.0])).send().await.success();
        app.post("/users/me/subscriptions").as_user(&ann)
            .json_param("subscriptions", &json!([{"name": "general"}])).send().await.success();
        app.delete(&format!("/streams/{design}")).as_user(&app.owner).send().await.success();

        for ((who, capabilities), queue) in observers.iter().zip(queues.iter_mut()) {
            check_oracle(&app, who, queue, capabilities.clone()).await;
        }
    }
}

//! The oracle: for a random sequence of actions by several users, a register snapshot taken at
//! the start with the events that followed applied to it equals a fresh snapshot at the end.
//! It catches every forgotten or doubled event for the state it compares: messages received,
//! unread messages by conversation, mentions, starred messages, subscriptions and subscribers,
//! personal settings, topic visibility policies and drafts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, Lcg, TestApp};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The part of a snapshot the oracle compares, in a form events can be applied to.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct State {
    max_message_id: i64,
    /// (channel, lower-cased topic, id) of unread channel messages.
    unread_channel: BTreeSet<(i64, String, i64)>,
    /// (other user, id) of unread one-on-one messages.
    unread_dm: BTreeSet<(i64, i64)>,
    mentions: BTreeSet<i64>,
    starred: BTreeSet<i64>,
    /// Subscribed channel -> subscribers.
    subscriptions: BTreeMap<i64, BTreeSet<i64>>,
    /// Personal settings.
    settings: BTreeMap<String, Value>,
    /// (channel, lower-cased topic) -> visibility policy.
    user_topics: BTreeMap<(i64, String), i64>,
    /// Draft ID -> content.
    drafts: BTreeMap<i64, String>,
}

fn ids(value: &Value) -> Vec<i64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect()
}

impl State {
    pub(crate) fn from_snapshot(s: &Value) -> State {
        let mut state = State {
            max_message_id: s["max_message_id"].as_i64().unwrap(),
            ..State::default()
        };
        let unread = &s["unread_msgs"];
        for entry in unread["streams"].as_array().unwrap() {
            for id in ids(&entry["unread_message_ids"]) {
                state.unread_channel.insert((
                    entry["stream_id"].as_i64().unwrap(),
                    entry["topic"].as_str().unwrap().to_lowercase(),
                    id,
                ));
            }
        }
        for entry in unread["pms"].as_array().unwrap() {
            for id in ids(&entry["unread_message_ids"]) {
                state
                    .unread_dm
                    .insert((entry["other_user_id"].as_i64().unwrap(), id));
            }
        }
        state.mentions = ids(&unread["mentions"]).into_iter().collect();
        state.starred = ids(&s["starred_messages"]).into_iter().collect();
        for sub in s["subscriptions"].as_array().unwrap() {
            state.subscriptions.insert(
                sub["stream_id"].as_i64().unwrap(),
                ids(&sub["subscribers"]).into_iter().collect(),
            );
        }
        for (key, value) in s["user_settings"].as_object().unwrap() {
            state.settings.insert(key.clone(), value.clone());
        }
        for t in s["user_topics"].as_array().unwrap() {
            state.user_topics.insert(
                (
                    t["stream_id"].as_i64().unwrap(),
                    t["topic_name"].as_str().unwrap().to_lowercase(),
                ),
                t["visibility_policy"].as_i64().unwrap(),
            );
        }
        for d in s["drafts"].as_array().unwrap() {
            state.drafts.insert(
                d["id"].as_i64().unwrap(),
                d["content"].as_str().unwrap().to_owned(),
            );
        }
        state
    }

    fn forget(&mut self, id: i64) {
        self.unread_channel.retain(|(_, _, m)| *m != id);
        self.unread_dm.retain(|(_, m)| *m != id);
        self.mentions.remove(&id);
        self.starred.remove(&id);
    }

    /// What the reference's `apply_events` does for these event types.
    pub(crate) fn apply(&mut self, me: i64, event: &Value) {
        let flags = |e: &Value| -> Vec<String> {
            e["flags"]
                .as_array()
                .map(|f| f.iter().map(|x| x.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default()
        };
        match event["type"].as_str().unwrap() {
            "message" => {
                let m = &event["message"];
                let id = m["id"].as_i64().unwrap();
                self.max_message_id = self.max_message_id.max(id);
                let f = flags(event);
                if !f.iter().any(|x| x == "read") {
                    if m["type"] == "stream" {
                        self.unread_channel.insert((
                            m["stream_id"].as_i64().unwrap(),
                            m["subject"].as_str().unwrap().to_lowercase(),
                            id,
                        ));
                    } else {
                        let others: Vec<i64> = m["display_recipient"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|u| u["id"].as_i64().unwrap())
                            .filter(|u| *u != me)
                            .collect();
                        self.unread_dm
                            .insert((others.first().copied().unwrap_or(me), id));
                    }
                    if f.iter()
                        .any(|x| x == "mentioned" || x == "wildcard_mentioned")
                    {
                        self.mentions.insert(id);
                    }
                }
                if f.iter().any(|x| x == "starred") {
                    self.starred.insert(id);
                }
            }
            "update_message_flags" => {
                let messages = ids(&event["messages"]);
                let add = event["op"] == "add";
                match event["flag"].as_str().unwrap() {
                    "read" if add => {
                        for id in messages {
                            self.unread_channel.retain(|(_, _, m)| *m != id);
                            self.unread_dm.retain(|(_, m)| *m != id);
                            self.mentions.remove(&id);
                        }
                    }
                    "read" => {
                        for id in messages {
                            let d = &event["message_details"][id.to_string()];
                            if d["type"] == "stream" {
                                self.unread_channel.insert((
                                    d["stream_id"].as_i64().unwrap(),
                                    d["topic"].as_str().unwrap().to_lowercase(),
                                    id,
                                ));
                            } else {
                                let other = ids(&d["user_ids"]).first().copied().unwrap_or(me);
                                self.unread_dm.insert((other, id));
                            }
                            if d["mentioned"] == true {
                                self.mentions.insert(id);
                            }
                        }
                    }
                    "starred" if add => self.starred.extend(messages),
                    "starred" => {
                        for id in messages {
                            self.starred.remove(&id);
                        }
                    }
                    _ => {}
                }
            }
            "delete_message" => {
                let list = match event.get("message_ids") {
                    Some(list) => ids(list),
                    None => vec![event["message_id"].as_i64().unwrap()],
                };
                for id in list {
                    self.forget(id);
                }
            }
            "update_message" => {
                if let Some(subject) = event.get("subject").and_then(Value::as_str) {
                    let channel = event
                        .get("new_stream_id")
                        .or(event.get("stream_id"))
                        .and_then(Value::as_i64)
                        .unwrap();
                    for id in ids(&event["message_ids"]) {
                        let found = self
                            .unread_channel
                            .iter()
                            .find(|(_, _, m)| *m == id)
                            .cloned();
                        if let Some(old) = found {
                            self.unread_channel.remove(&old);
                            self.unread_channel
                                .insert((channel, subject.to_lowercase(), id));
                        }
                    }
                }
            }
            "user_settings" => {
                self.settings.insert(
                    event["property"].as_str().unwrap().to_owned(),
                    event["value"].clone(),
                );
            }
            "user_topic" => {
                let key = (
                    event["stream_id"].as_i64().unwrap(),
                    event["topic_name"].as_str().unwrap().to_lowercase(),
                );
                match event["visibility_policy"].as_i64().unwrap() {
                    0 => {
                        self.user_topics.remove(&key);
                    }
                    policy => {
                        self.user_topics.insert(key, policy);
                    }
                }
            }
            "drafts" => match event["op"].as_str().unwrap() {
                "add" => {
                    for d in event["drafts"].as_array().unwrap() {
                        self.drafts.insert(
                            d["id"].as_i64().unwrap(),
                            d["content"].as_str().unwrap().to_owned(),
                        );
                    }
                }
                "update" => {
                    let d = &event["draft"];
                    self.drafts.insert(
                        d["id"].as_i64().unwrap(),
                        d["content"].as_str().unwrap().to_owned(),
                    );
                }
                "remove" => {
                    self.drafts.remove(&event["draft_id"].as_i64().unwrap());
                }
                _ => {}
            },
            "subscription" => match event["op"].as_str().unwrap() {
                "add" => {
                    for sub in event["subscriptions"].as_array().unwrap() {
                        self.subscriptions.insert(
                            sub["stream_id"].as_i64().unwrap(),
                            ids(&sub["subscribers"]).into_iter().collect(),
                        );
                    }
                }
                "remove" => {
                    for sub in event["subscriptions"].as_array().unwrap() {
                        self.subscriptions
                            .remove(&sub["stream_id"].as_i64().unwrap());
                    }
                }
                "peer_add" | "peer_remove" => {
                    let add = event["op"] == "peer_add";
                    for channel in ids(&event["stream_ids"]) {
                        if let Some(subs) = self.subscriptions.get_mut(&channel) {
                            for user in ids(&event["user_ids"]) {
                                if add {
                                    subs.insert(user);
                                } else {
                                    subs.remove(&user);
                                }
                            }
                        }
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
}

pub(crate) const CHANNELS: [&str; 3] = ["alpha", "beta", "gamma"];
const TOPICS: [&str; 3] = ["one", "Two", ""];

pub(crate) async fn random_action(
    app: &TestApp,
    rng: &mut Lcg,
    people: &[Account],
    sent: &mut Vec<i64>,
) {
    let actor = &people[rng.next(people.len())];
    let watcher = &people[0];
    match rng.next(11) {
        0..=3 => {
            let channel = CHANNELS[rng.next(CHANNELS.len())];
            let topic = TOPICS[rng.next(TOPICS.len())];
            let content = if rng.next(3) == 0 {
                "hey @**Watcher**".to_owned()
            } else {
                format!("message {}", sent.len())
            };
            let response = app
                .post("/messages")
                .as_user(actor)
                .param("type", "stream")
                .param("to", channel)
                .param("topic", topic)
                .param("content", &content)
                .send()
                .await;
            if response.status == 200 {
                sent.push(response.json["id"].as_i64().unwrap());
            }
        }
        4 => {
            let to = &people[rng.next(people.len())];
            let id = app
                .post("/messages")
                .as_user(actor)
                .param("type", "direct")
                .json_param("to", &json!([to.user_id.0]))
                .param("content", "psst")
                .send()
                .await
                .success()["id"]
                .as_i64()
                .unwrap();
            sent.push(id);
        }
        5 | 6 if !sent.is_empty() => {
            let id = sent[rng.next(sent.len())];
            let (op, flag) = [
                ("add", "read"),
                ("remove", "read"),
                ("add", "starred"),
                ("remove", "starred"),
            ][rng.next(4)];
            app.post("/messages/flags")
                .as_user(watcher)
                .json_param("messages", &json!([id]))
                .param("op", op)
                .param("flag", flag)
                .send()
                .await;
        }
        7 if sent.len() > 1 => {
            // Never the newest: a deletion does not lower max_message_id in the reference's
            // apply_events either.
            let index = rng.next(sent.len() - 1);
            let id = sent.remove(index);
            app.delete(&format!("/messages/{id}"))
                .as_user(&app.owner)
                .send()
                .await;
        }
        8 if !sent.is_empty() => {
            let id = sent[rng.next(sent.len())];
            app.patch(&format!("/messages/{id}"))
                .as_user(&app.owner)
                .param("topic", TOPICS[rng.next(TOPICS.len())])
                .param(
                    "propagate_mode",
                    ["change_one", "change_all", "change_later"][rng.next(3)],
                )
                .param("send_notification_to_old_thread", "false")
                .param("send_notification_to_new_thread", "false")
                .send()
                .await;
        }
        9 => {
            match rng.next(4) {
                0 => {
                    let value = ["true", "false"][rng.next(2)];
                    let emojiset = ["google", "twitter", "text"][rng.next(3)];
                    app.patch("/settings")
                        .as_user(watcher)
                        .param("twenty_four_hour_time", value)
                        .param("emojiset", emojiset)
                        .send()
                        .await
                        .success();
                }
                1 => {
                    let channel = app
                        .get("/get_stream_id")
                        .as_user(watcher)
                        .param("stream", CHANNELS[rng.next(CHANNELS.len())])
                        .send()
                        .await
                        .json["stream_id"]
                        .as_i64()
                        .unwrap_or(1);
                    app.post("/user_topics")
                        .as_user(watcher)
                        .param("stream_id", channel)
                        .param("topic", TOPICS[rng.next(TOPICS.len())])
                        .param("visibility_policy", rng.next(4))
                        .send()
                        .await;
                }
                2 => {
                    app.post("/drafts")
                    .as_user(watcher)
                    .json_param("drafts", &json!([{"type": "", "to": [], "topic": "", "content": format!("draft {}", rng.next(100))}]))
                    .send()
                    .await
                    .success();
                }
                _ => {
                    let drafts =
                        app.get("/drafts").as_user(watcher).send().await.json["drafts"].clone();
                    if let Some(list) = drafts.as_array().filter(|l| !l.is_empty()) {
                        let id = list[rng.next(list.len())]["id"].as_i64().unwrap();
                        if rng.next(2) == 0 {
                            app.delete(&format!("/drafts/{id}"))
                                .as_user(watcher)
                                .send()
                                .await
                                .success();
                        } else {
                            app.patch(&format!("/drafts/{id}")).as_user(watcher)
                            .json_param("draft", &json!({"type": "", "to": [], "topic": "", "content": "edited"}))
                            .send().await.success();
                        }
                    }
                }
            }
        }
        _ => {
            let channel = CHANNELS[rng.next(CHANNELS.len())];
            let who = &people[rng.next(people.len())];
            if rng.next(2) == 0 {
                app.post("/users/me/subscriptions")
                    .as_user(&app.owner)
                    .json_param("subscriptions", &json!([{"name": channel}]))
                    .json_param("principals", &json!([who.user_id.0]))
                    .send()
                    .await;
            } else {
                app.delete("/users/me/subscriptions")
                    .as_user(&app.owner)
                    .json_param("subscriptions", &json!([channel]))
                    .json_param("principals", &json!([who.user_id.0]))
                    .send()
                    .await;
            }
        }
    }
}

backend_test! {
    async fn snapshot_plus_events_equals_a_fresh_snapshot(app) {
        let watcher = app.create_user("watcher@parley.test", "Watcher", Role::Member).await;
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let people = vec![watcher.clone(), ann, bob];
        for name in CHANNELS {
            app.create_channel(&app.owner, name, &[&people[0], &people[1], &people[2]], &[]).await;
        }
        let params = [
            ("include_subscribers", json!(true)),
            ("client_capabilities", json!({"user_settings_object": true, "empty_topic_name": true})),
        ];
        for seed in [1u64, 7, 42, 1234, 99] {
            let mut rng = Lcg(seed);
            let snapshot = app.register(&watcher, &params).await;
            let queue = snapshot["queue_id"].as_str().unwrap().to_owned();
            let mut state = State::from_snapshot(&snapshot);
            let mut sent = Vec::new();
            for _ in 0..60 {
                random_action(&app, &mut rng, &people, &mut sent).await;
            }
            for event in app.events(&watcher, &queue, -1).await {
                state.apply(watcher.user_id.0, &event);
            }
            let fresh = State::from_snapshot(&app.register(&watcher, &params).await);
            assert_eq!(state, fresh, "seed {seed}");
        }
    }
}

//! The oracle for the organization's shared state: for a random sequence of administrators'
//! changes — user groups and their members and subgroups, linkifiers and their order, code
//! playgrounds, custom emoji, organization settings — a register snapshot taken at the start with
//! the events that followed applied to it equals a fresh snapshot at the end. Actions that the
//! server refuses (a cycle of subgroups, a group still in use) must send nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{busy_backend_test, Account, Lcg, TestApp};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The realm settings the actions below change.
const SETTINGS: [&str; 4] = [
    "realm_name",
    "realm_message_content_edit_limit_seconds",
    "realm_topics_policy",
    "realm_can_create_groups",
];

/// The compared state, in a form events can be applied to.
#[derive(Debug, Default, PartialEq)]
struct State {
    /// Group ID -> the group as `realm_user_groups` lists it.
    groups: BTreeMap<i64, Value>,
    linkifiers: Value,
    playgrounds: Value,
    emoji: Value,
    settings: BTreeMap<String, Value>,
}

fn sorted_ids(value: &Value) -> Value {
    let mut ids: Vec<i64> = value
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default();
    ids.sort_unstable();
    ids.dedup();
    json!(ids)
}

fn normalized(mut group: Value) -> Value {
    for key in ["members", "direct_subgroup_ids"] {
        group[key] = sorted_ids(&group[key]);
    }
    group
}

impl State {
    fn from_snapshot(s: &Value) -> State {
        State {
            groups: s["realm_user_groups"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| (g["id"].as_i64().unwrap(), normalized(g.clone())))
                .collect(),
            linkifiers: s["realm_linkifiers"].clone(),
            playgrounds: s["realm_playgrounds"].clone(),
            emoji: s["realm_emoji"].clone(),
            settings: SETTINGS
                .iter()
                .map(|k| (k.to_string(), s[*k].clone()))
                .collect(),
        }
    }

    fn change_ids(&mut self, group: i64, key: &str, ids: &Value, add: bool) {
        let entry = self
            .groups
            .get_mut(&group)
            .expect("event for a known group");
        let mut list: Vec<i64> = serde_json::from_value(entry[key].clone()).unwrap();
        for id in ids.as_array().unwrap().iter().filter_map(Value::as_i64) {
            if add {
                list.push(id);
            } else {
                list.retain(|x| *x != id);
            }
        }
        entry[key] = sorted_ids(&json!(list));
    }

    fn set_setting(&mut self, name: &str, value: &Value) {
        let key = format!("realm_{name}");
        if let Some(slot) = self.settings.get_mut(&key) {
            *slot = value.clone();
        }
    }

    fn apply(&mut self, event: &Value) {
        match (event["type"].as_str().unwrap(), event["op"].as_str()) {
            ("user_group", Some("add")) => {
                let group = normalized(event["group"].clone());
                self.groups.insert(group["id"].as_i64().unwrap(), group);
            }
            ("user_group", Some("remove")) => {
                self.groups.remove(&event["group_id"].as_i64().unwrap());
            }
            ("user_group", Some("update")) => {
                let entry = self
                    .groups
                    .get_mut(&event["group_id"].as_i64().unwrap())
                    .unwrap();
                for (k, v) in event["data"].as_object().unwrap() {
                    entry[k] = v.clone();
                }
            }
            ("user_group", Some(op)) => {
                let group = event["group_id"].as_i64().unwrap();
                match op {
                    "add_members" => self.change_ids(group, "members", &event["user_ids"], true),
                    "remove_members" => {
                        self.change_ids(group, "members", &event["user_ids"], false)
                    }
                    "add_subgroups" => self.change_ids(
                        group,
                        "direct_subgroup_ids",
                        &event["direct_subgroup_ids"],
                        true,
                    ),
                    "remove_subgroups" => self.change_ids(
                        group,
                        "direct_subgroup_ids",
                        &event["direct_subgroup_ids"],
                        false,
                    ),
                    other => panic!("unexpected user_group op {other}"),
                }
            }
            ("realm_linkifiers", _) => self.linkifiers = event["realm_linkifiers"].clone(),
            ("realm_playgrounds", _) => self.playgrounds = event["realm_playgrounds"].clone(),
            ("realm_emoji", _) => self.emoji = event["realm_emoji"].clone(),
            ("realm", Some("update")) => {
                self.set_setting(event["property"].as_str().unwrap(), &event["value"])
            }
            ("realm", Some("update_dict")) => {
                let data: &Map<String, Value> = event["data"].as_object().unwrap();
                for (k, v) in data {
                    self.set_setting(k, v);
                }
            }
            _ => {}
        }
    }
}

fn pick<'a>(rng: &mut Lcg, ids: &'a [i64]) -> Option<&'a i64> {
    (!ids.is_empty()).then(|| &ids[rng.next(ids.len())])
}

async fn group_ids(app: &TestApp) -> Vec<i64> {
    let list = app
        .get("/user_groups")
        .as_user(&app.owner)
        .send()
        .await
        .success();
    list["user_groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["is_system_group"] == false)
        .map(|g| g["id"].as_i64().unwrap())
        .collect()
}

async fn ids_at(app: &TestApp, path: &str, key: &str, id_key: &str) -> Vec<i64> {
    let list = app.get(path).as_user(&app.owner).send().await.success();
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l[id_key].as_i64().unwrap())
        .collect()
}

/// One random change by the owner; refused ones are part of the test too.
async fn random_action(app: &TestApp, rng: &mut Lcg, people: &[Account], step: usize) {
    let person = people[rng.next(people.len())].user_id.0;
    let groups = group_ids(app).await;
    let owner = &app.owner;
    match rng.next(12) {
        0 | 1 => {
            app.post("/user_groups/create")
                .as_user(owner)
                .param("name", format!("group {step}"))
                .param("description", "made by the oracle")
                .json_param("members", &json!([person]))
                .send()
                .await;
        }
        2 | 3 => {
            if let Some(g) = pick(rng, &groups) {
                let op = if rng.next(2) == 0 { "add" } else { "delete" };
                app.post(&format!("/user_groups/{g}/members"))
                    .as_user(owner)
                    .json_param(op, &json!([person]))
                    .send()
                    .await;
            }
        }
        4 => {
            if let (Some(g), Some(s)) = (pick(rng, &groups), pick(rng, &groups)) {
                let op = if rng.next(3) == 0 {
                    "delete_subgroups"
                } else {
                    "add_subgroups"
                };
                app.post(&format!("/user_groups/{g}/members"))
                    .as_user(owner)
                    .json_param(op, &json!([s]))
                    .send()
                    .await;
            }
        }
        5 => {
            if let Some(g) = pick(rng, &groups) {
                if rng.next(3) == 0 {
                    app.post(&format!("/user_groups/{g}/deactivate"))
                        .as_user(owner)
                        .send()
                        .await;
                } else {
                    app.patch(&format!("/user_groups/{g}"))
                        .as_user(owner)
                        .param("name", format!("renamed {step}"))
                        .send()
                        .await;
                }
            }
        }
        6 => {
            app.post("/realm/filters")
                .as_user(owner)
                .param("pattern", format!("T{step}-(?P<id>[0-9]+)"))
                .param("url_template", format!("https://t{step}.example/{{id}}"))
                .send()
                .await;
        }
        7 => {
            let mut ids = ids_at(app, "/realm/linkifiers", "linkifiers", "id").await;
            if rng.next(2) == 0 {
                if let Some(id) = pick(rng, &ids) {
                    app.delete(&format!("/realm/filters/{id}"))
                        .as_user(owner)
                        .send()
                        .await;
                }
            } else {
                ids.reverse();
                app.patch("/realm/linkifiers")
                    .as_user(owner)
                    .json_param("ordered_linkifier_ids", &json!(ids))
                    .send()
                    .await;
            }
        }
        8 => {
            if rng.next(2) == 0 {
                app.post("/realm/playgrounds")
                    .as_user(owner)
                    .param("name", format!("Playground {step}"))
                    .param("pygments_language", "Python")
                    .param("url_template", "https://play.example/?code={code}")
                    .send()
                    .await;
            } else {
                let state = app
                    .register(
                        owner,
                        &[("fetch_event_types", json!(["realm_playgrounds"]))],
                    )
                    .await;
                let ids: Vec<i64> = state["realm_playgrounds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p["id"].as_i64().unwrap())
                    .collect();
                if let Some(id) = pick(rng, &ids) {
                    app.delete(&format!("/realm/playgrounds/{id}"))
                        .as_user(owner)
                        .send()
                        .await;
                }
            }
        }
        9 => {
            let name = format!("oracle_{}", rng.next(3));
            if rng.next(2) == 0 {
                app.post(&format!("/realm/emoji/{name}"))
                    .as_user(owner)
                    .files(&[("e.png", "image/png", &parley_tests::images::png(8, 8))])
                    .send()
                    .await;
            } else {
                app.delete(&format!("/realm/emoji/{name}"))
                    .as_user(owner)
                    .send()
                    .await;
            }
        }
        10 => {
            let request = app.patch("/realm").as_user(owner);
            let request = match rng.next(3) {
                0 => request.param("name", format!("Org {step}")),
                1 => request.json_param(
                    "message_content_edit_limit_seconds",
                    &json!(60 * (1 + rng.next(5))),
                ),
                _ => request.param(
                    "topics_policy",
                    ["allow_empty_topic", "disable_empty_topic"][rng.next(2)],
                ),
            };
            request.send().await;
        }
        _ => {
            if let Some(g) = pick(rng, &groups) {
                let state = app
                    .register(owner, &[("fetch_event_types", json!(["realm"]))])
                    .await;
                app.patch("/realm")
                    .as_user(owner)
                    .json_param(
                        "can_create_groups",
                        &json!({"new": g, "old": state["realm_can_create_groups"]}),
                    )
                    .send()
                    .await;
            }
        }
    }
}

busy_backend_test! {
    async fn organization_snapshot_plus_events_equals_a_fresh_snapshot(app) {
        let watcher = app.create_user("watcher@parley.test", "Watcher", Role::Member).await;
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Moderator).await;
        let people = vec![watcher.clone(), ann, bob];
        for (round, capabilities) in [
            json!({"include_deactivated_groups": true, "linkifier_url_template": true}),
            json!({}),
        ].into_iter().enumerate() {
            let params = [("client_capabilities", capabilities.clone())];
            for seed in [3u64, 11, 2024] {
                let mut rng = Lcg(seed);
                let snapshot = app.register(&watcher, &params).await;
                let queue = snapshot["queue_id"].as_str().unwrap().to_owned();
                let mut state = State::from_snapshot(&snapshot);
                for step in 0..40 {
                    let unique = round * 100_000 + seed as usize * 100 + step;
                    random_action(&app, &mut rng, &people, unique).await;
                }
                let initial = State::from_snapshot(&snapshot);
                let events = app.events(&watcher, &queue, -1).await;
                for event in &events {
                    state.apply(event);
                }
                let fresh = State::from_snapshot(&app.register(&watcher, &params).await);
                // The sequence really changed things, through many events.
                assert!(events.len() >= 15, "seed {seed}: only {} events", events.len());
                assert_ne!(initial, fresh, "seed {seed}: nothing changed");
                assert_eq!(state, fresh, "seed {seed}, capabilities {capabilities}");
            }
        }
    }
}

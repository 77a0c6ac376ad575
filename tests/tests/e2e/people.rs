//! People administration: `PATCH /users/{id}` (name, role, profile data), deactivation
//! (`DELETE /users/{id}`, `DELETE /users/me`), reactivation, and the `realm_user` / `user_group`
//! events they send, to the users who can access the changed user.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

async fn system_group(app: &TestApp, name: &'static str) -> i64 {
    app.ctx
        .db
        .run(parley_storage::groups::rows)
        .await
        .unwrap()
        .into_iter()
        .find(|g| g.name == name)
        .unwrap()
        .id
}

async fn set_permission(app: &TestApp, name: &'static str, value: String) {
    app.ctx
        .db
        .run(move |c| parley_storage::realms::set_permission(c, name, &value))
        .await
        .unwrap();
    // Written behind the server's back (no event): the organization cache is told directly.
    app.ctx.events.realm_cache().invalidate();
}

async fn queue(app: &TestApp, who: &Account, types: Value) -> String {
    let body = app.register(who, &[("event_types", types)]).await;
    body["queue_id"].as_str().unwrap().to_owned()
}

fn updates_of(events: &[Value], user_id: i64) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "realm_user" && e["op"] == "update")
        .filter(|e| e["person"]["user_id"] == user_id)
        .map(|e| e["person"].clone())
        .collect()
}

backend_test! {
    async fn admin_changes_full_name_with_event(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let q = queue(&app, &ann, json!(["realm_user"])).await;
        app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner)
            .param("full_name", "Ann Bee").send().await.success();
        let events = app.events_of(&ann, &q, &["realm_user"]).await;
        assert_eq!(updates_of(&events, ann.user_id.0), vec![json!({"user_id": ann.user_id.0, "full_name": "Ann Bee"})]);
        let user = app.get(&format!("/users/{}", ann.user_id.0)).as_user(&ann).send().await.success();
        assert_eq!(user["user"]["full_name"], "Ann Bee");
        // Bad names are refused naming the parameter; blank ones are ignored as the reference does.
        let body = app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner)
            .param("full_name", "a*b").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "full_name");
        app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner)
            .param("full_name", "  ").send().await.success();
        // Members cannot; unknown users are "No such user".
        let body = app.patch(&format!("/users/{}", app.owner.user_id.0)).as_user(&ann)
            .param("full_name", "X").send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization administrator");
        let body = app.patch("/users/9999").as_user(&app.owner)
            .param("full_name", "X").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "No such user");
    }
}

backend_test! {
    async fn role_change_sends_role_and_system_group_events(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let watcher = app.create_user("w@parley.test", "W", Role::Member).await;
        let q = queue(&app, &watcher, json!(["realm_user", "user_group"])).await;
        app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner)
            .json_param("role", &json!(300)).send().await.success();
        let events = app.events_of(&watcher, &q, &["realm_user", "user_group"]).await;
        assert_eq!(updates_of(&events, ann.user_id.0), vec![json!({"user_id": ann.user_id.0, "role": 300})]);
        let full = system_group(&app, "role:fullmembers").await;
        let moderators = system_group(&app, "role:moderators").await;
        let groups: Vec<(String, i64, Value)> = events.iter().filter(|e| e["type"] == "user_group")
            .map(|e| (e["op"].as_str().unwrap().to_owned(), e["group_id"].as_i64().unwrap(), e["user_ids"].clone()))
            .collect();
        assert_eq!(groups, vec![
            ("remove_members".to_owned(), full, json!([ann.user_id.0])),
            ("add_members".to_owned(), moderators, json!([ann.user_id.0])),
        ]);
        // The snapshot agrees with the events.
        let body = app.register(&watcher, &[("fetch_event_types", json!(["realm_user_groups"]))]).await;
        let group = body["realm_user_groups"].as_array().unwrap().iter()
            .find(|g| g["id"] == moderators).unwrap().clone();
        assert!(group["members"].as_array().unwrap().contains(&json!(ann.user_id.0)));
        // Invalid roles name the parameter.
        let body = app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner)
            .json_param("role", &json!(500)).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "role");
    }
}

backend_test! {
    async fn owner_role_rules(app) {
        let admin = app.create_user("admin@parley.test", "Ad", Role::Administrator).await;
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        // Administrators can neither make nor unmake owners.
        let body = app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&admin)
            .json_param("role", &json!(100)).send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization owner");
        app.patch(&format!("/users/{}", app.owner.user_id.0)).as_user(&admin)
            .json_param("role", &json!(400)).send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
        // They can change other roles.
        app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&admin)
            .json_param("role", &json!(600)).send().await.success();
        // The only owner keeps the role.
        let body = app.patch(&format!("/users/{}", app.owner.user_id.0)).as_user(&app.owner)
            .json_param("role", &json!(200)).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "The owner permission cannot be removed from the only organization owner.");
        // With a second owner, the first may step down.
        app.patch(&format!("/users/{}", admin.user_id.0)).as_user(&app.owner)
            .json_param("role", &json!(100)).send().await.success();
        app.patch(&format!("/users/{}", app.owner.user_id.0)).as_user(&app.owner)
            .json_param("role", &json!(200)).send().await.success();
        let me = app.get(&format!("/users/{}", app.owner.user_id.0)).as_user(&ann).send().await.success();
        assert_eq!(me["user"]["role"], 200);
    }
}

backend_test! {
    async fn deactivation_and_reactivation(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let watcher = app.create_user("w@parley.test", "W", Role::Member).await;
        app.create_channel(&app.owner, "lounge", &[&ann, &watcher], &[]).await;
        let group = app.post("/user_groups/create").as_user(&app.owner)
            .param("name", "team").param("description", "t")
            .json_param("members", &json!([ann.user_id.0])).send().await;
        let q = queue(&app, &watcher, json!(["realm_user", "user_group"])).await;
        // Members cannot deactivate others.
        app.delete(&format!("/users/{}", ann.user_id.0)).as_user(&watcher).send().await
            .error(400, "UNAUTHORIZED_PRINCIPAL");
        app.delete(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner).send().await.success();
        let events = app.events_of(&watcher, &q, &["realm_user"]).await;
        assert_eq!(updates_of(&events, ann.user_id.0), vec![json!({"user_id": ann.user_id.0, "is_active": false})]);
        // The deactivated account cannot authenticate.
        let body = app.get("/users/me").as_user(&ann).send().await.error(401, "USER_DEACTIVATED");
        assert!(body["msg"].is_string());
        // It is listed among the non-active users, and GET /users shows is_active false.
        let snap = app.register(&watcher, &[("fetch_event_types", json!(["realm_user"]))]).await;
        assert!(snap["realm_non_active_users"].as_array().unwrap().iter().any(|u| u["user_id"] == ann.user_id.0));
        assert!(!snap["realm_users"].as_array().unwrap().iter().any(|u| u["user_id"] == ann.user_id.0));
        let user = app.get(&format!("/users/{}", ann.user_id.0)).as_user(&watcher).send().await.success();
        assert_eq!(user["user"]["is_active"], false);
        // Deactivating twice is refused.
        let body = app.delete(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner).send().await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "User is deactivated");
        // Reactivation: is_active true and the group memberships come back.
        let q = queue(&app, &watcher, json!(["realm_user", "user_group"])).await;
        app.post(&format!("/users/{}/reactivate", ann.user_id.0)).as_user(&app.owner).send().await.success();
        let events = app.events_of(&watcher, &q, &["realm_user", "user_group"]).await;
        assert_eq!(updates_of(&events, ann.user_id.0), vec![json!({"user_id": ann.user_id.0, "is_active": true})]);
        let added: Vec<i64> = events.iter().filter(|e| e["type"] == "user_group" && e["op"] == "add_members")
            .filter(|e| e["user_ids"] == json!([ann.user_id.0]))
            .map(|e| e["group_id"].as_i64().unwrap()).collect();
        assert!(added.contains(&system_group(&app, "role:fullmembers").await), "{events:?}");
        if group.status == 200 {
            let gid = group.json["group_id"].as_i64().unwrap();
            assert!(added.contains(&gid), "{events:?}");
        }
        app.get("/users/me").as_user(&ann).send().await.success();
        let body = app.post(&format!("/users/{}/reactivate", ann.user_id.0)).as_user(&app.owner).send().await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "User is already active");
        app.post(&format!("/users/{}/reactivate", ann.user_id.0)).as_user(&watcher).send().await
            .error(400, "UNAUTHORIZED_PRINCIPAL");
    }
}

backend_test! {
    async fn deactivated_users_receive_no_channel_messages(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        app.create_channel(&app.owner, "lounge", &[&ann], &[]).await;
        app.delete(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner).send().await.success();
        let id = app.send_to_channel(&app.owner, "lounge", "t", "hello").await;
        app.post(&format!("/users/{}/reactivate", ann.user_id.0)).as_user(&app.owner).send().await.success();
        let body = app.get(&format!("/messages/{id}")).as_user(&ann).send().await.success();
        let flags = body["message"]["flags"].as_array().cloned().unwrap_or_default();
        assert!(flags.contains(&json!("historical")), "no copy was delivered while deactivated: {body}");
    }
}

backend_test! {
    async fn owners_and_last_owner_cannot_be_deactivated_by_others(app) {
        let admin = app.create_user("admin@parley.test", "Ad", Role::Administrator).await;
        let body = app.delete(&format!("/users/{}", app.owner.user_id.0)).as_user(&admin).send().await
            .error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization owner");
        let body = app.delete(&format!("/users/{}", app.owner.user_id.0)).as_user(&app.owner).send().await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Cannot deactivate the only organization owner");
        app.delete("/users/9999").as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn deactivate_own_account(app) {
        let body = app.delete("/users/me").as_user(&app.owner).send().await
            .error(400, "CANNOT_DEACTIVATE_LAST_USER");
        assert_eq!(body["is_last_owner"], false);
        assert_eq!(body["entity"], "user");
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let body = app.delete("/users/me").as_user(&app.owner).send().await
            .error(400, "CANNOT_DEACTIVATE_LAST_USER");
        assert_eq!(body["is_last_owner"], true);
        assert_eq!(body["msg"], "Cannot deactivate the only organization owner");
        let q = queue(&app, &app.owner, json!(["realm_user"])).await;
        app.delete("/users/me").as_user(&ann).send().await.success();
        app.get("/users/me").as_user(&ann).send().await.error(401, "USER_DEACTIVATED");
        let events = app.events_of(&app.owner, &q, &["realm_user"]).await;
        assert_eq!(updates_of(&events, ann.user_id.0), vec![json!({"user_id": ann.user_id.0, "is_active": false})]);
    }
}

backend_test! {
    async fn deactivating_a_person_deactivates_their_bots(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bot = app.post("/bots").as_user(&ann).param("full_name", "Helper")
            .param("short_name", "helper").send().await.success();
        let bot_id = bot["user_id"].as_i64().unwrap();
        let q = queue(&app, &app.owner, json!(["realm_user", "realm_bot"])).await;
        app.delete(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner).send().await.success();
        let events = app.events_of(&app.owner, &q, &["realm_user", "realm_bot"]).await;
        assert_eq!(updates_of(&events, bot_id), vec![json!({"user_id": bot_id, "is_active": false})]);
        assert!(events.iter().any(|e| e["type"] == "realm_bot" && e["op"] == "update"
            && e["bot"] == json!({"user_id": bot_id, "is_active": false})), "{events:?}");
        let user = app.get(&format!("/users/{bot_id}")).as_user(&app.owner).send().await.success();
        assert_eq!(user["user"]["is_active"], false);
    }
}

backend_test! {
    async fn admin_sets_and_clears_profile_data(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let field = app.post("/realm/profile_fields").as_user(&app.owner).param("name", "Phone")
            .param("field_type", "1").send().await.success()["id"].as_i64().unwrap();
        let q = queue(&app, &ann, json!(["realm_user"])).await;
        app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner)
            .json_param("profile_data", &json!([{"id": field, "value": "123"}])).send().await.success();
        app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner)
            .json_param("profile_data", &json!([{"id": field, "value": null}])).send().await.success();
        let events = app.events_of(&ann, &q, &["realm_user"]).await;
        let updates = updates_of(&events, ann.user_id.0);
        assert_eq!(updates.len(), 2, "{updates:?}");
        assert_eq!(updates[0]["custom_profile_field"]["value"], "123");
        assert_eq!(updates[0]["custom_profile_field"]["rendered_value"], "<p>123</p>");
        assert_eq!(updates[1]["custom_profile_field"], json!({"id": field, "value": null}));
        let body = app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner)
            .json_param("profile_data", &json!([{"id": 9999, "value": "x"}])).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "data");
    }
}

backend_test! {
    async fn guests_only_hear_about_users_they_share_channels_with(app) {
        let members = system_group(&app, "role:members").await;
        set_permission(&app, "can_access_all_users_group", members.to_string()).await;
        let guest = app.create_user("guest@parley.test", "Gus", Role::Guest).await;
        let near = app.create_user("near@parley.test", "Near", Role::Member).await;
        let far = app.create_user("far@parley.test", "Far", Role::Member).await;
        app.create_channel(&app.owner, "shared", &[&guest, &near], &[]).await;
        // New users start in the default channel; the guest leaves it so that only "shared" links
        // them to anyone.
        app.delete("/users/me/subscriptions").as_user(&guest)
            .json_param("subscriptions", &json!(["general"])).send().await.success();
        let q = queue(&app, &guest, json!(["realm_user"])).await;
        let member_q = queue(&app, &near, json!(["realm_user"])).await;
        for who in [&near, &far] {
            app.patch(&format!("/users/{}", who.user_id.0)).as_user(&app.owner)
                .param("full_name", format!("Renamed {}", who.user_id.0)).send().await.success();
        }
        let events = app.events_of(&guest, &q, &["realm_user"]).await;
        assert_eq!(updates_of(&events, near.user_id.0).len(), 1);
        assert!(updates_of(&events, far.user_id.0).is_empty(), "{events:?}");
        let events = app.events_of(&near, &member_q, &["realm_user"]).await;
        assert_eq!(updates_of(&events, far.user_id.0).len(), 1);
        // The guest's user list shows the inaccessible user as a placeholder, the others as they are.
        let list = app.get("/users").as_user(&guest).send().await.success();
        let find = |id: i64| list["members"].as_array().unwrap().iter().find(|u| u["user_id"] == id).unwrap().clone();
        assert_eq!(find(far.user_id.0)["full_name"], "Unknown user");
        assert_eq!(find(far.user_id.0)["delivery_email"], Value::Null);
        assert_ne!(find(near.user_id.0)["full_name"], "Unknown user");
        let list = app.get("/users").as_user(&near).send().await.success();
        assert!(list["members"].as_array().unwrap().iter().all(|u| u["full_name"] != "Unknown user"));
        // A direct message gives access too.
        app.post("/messages").as_user(&far).param("type", "direct")
            .json_param("to", &json!([guest.user_id.0])).param("content", "hi").send().await.success();
        let q = queue(&app, &guest, json!(["realm_user"])).await;
        app.patch(&format!("/users/{}", far.user_id.0)).as_user(&app.owner)
            .param("full_name", "Far Again").send().await.success();
        let events = app.events_of(&guest, &q, &["realm_user"]).await;
        assert_eq!(updates_of(&events, far.user_id.0).len(), 1, "{events:?}");
        let list = app.get("/users").as_user(&guest).send().await.success();
        let far_now = list["members"].as_array().unwrap().iter()
            .find(|u| u["user_id"] == far.user_id.0).unwrap().clone();
        assert_eq!(far_now["full_name"], "Far Again");
    }
}

/// The people part of a snapshot, in a form events can be applied to: users (active or not) with
/// their fields, system group members, bots the viewer administers, profile field definitions.
#[derive(Debug, Default, PartialEq)]
struct People {
    users: std::collections::BTreeMap<i64, Value>,
    groups: std::collections::BTreeMap<i64, std::collections::BTreeSet<i64>>,
    bots: std::collections::BTreeMap<i64, Value>,
    fields: Value,
}

const PEOPLE_TYPES: [&str; 5] = [
    "realm_user",
    "realm_user_groups",
    "realm_bot",
    "custom_profile_fields",
    "user_group",
];

impl People {
    fn from_snapshot(s: &Value) -> People {
        let mut people = People {
            fields: s["custom_profile_fields"].clone(),
            ..People::default()
        };
        for list in ["realm_users", "realm_non_active_users"] {
            for u in s[list].as_array().unwrap() {
                let mut u = u.clone();
                // The snapshot may leave Gravatar URLs to the client; events always carry them.
                u.as_object_mut().unwrap().remove("avatar_url");
                people.users.insert(u["user_id"].as_i64().unwrap(), u);
            }
        }
        for g in s["realm_user_groups"].as_array().unwrap() {
            if g["is_system_group"] == true {
                let members = g["members"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m.as_i64().unwrap())
                    .collect();
                people.groups.insert(g["id"].as_i64().unwrap(), members);
            }
        }
        for b in s["realm_bots"].as_array().unwrap() {
            people
                .bots
                .insert(b["user_id"].as_i64().unwrap(), b.clone());
        }
        people
    }

    fn apply(&mut self, e: &Value) {
        match (e["type"].as_str().unwrap(), e["op"].as_str().unwrap_or("")) {
            ("realm_user", "add") => {
                let mut p = e["person"].clone();
                p.as_object_mut().unwrap().remove("avatar_url");
                self.users.insert(p["user_id"].as_i64().unwrap(), p);
            }
            ("realm_user", "update") => {
                let p = &e["person"];
                let id = p["user_id"].as_i64().unwrap();
                let user = self.users.get_mut(&id).unwrap().as_object_mut().unwrap();
                for (key, value) in p.as_object().unwrap() {
                    match key.as_str() {
                        "user_id" => {}
                        "role" => {
                            let role = value.as_i64().unwrap();
                            user.insert("role".into(), role.into());
                            user.insert("is_owner".into(), (role == 100).into());
                            user.insert("is_admin".into(), (role <= 200).into());
                            user.insert("is_guest".into(), (role == 600).into());
                        }
                        "custom_profile_field" => {
                            let data = user.entry("profile_data").or_insert(json!({}));
                            let id = value["id"].to_string();
                            if value["value"].is_null() {
                                data.as_object_mut().unwrap().remove(&id);
                            } else {
                                let mut v = value.clone();
                                v.as_object_mut().unwrap().remove("id");
                                data[id] = v;
                            }
                        }
                        "is_active" => {
                            user.insert(key.clone(), value.clone());
                            if value == false {
                                for members in self.groups.values_mut() {
                                    members.remove(&id);
                                }
                            }
                        }
                        _ => {
                            user.insert(key.clone(), value.clone());
                        }
                    }
                }
            }
            ("user_group", op @ ("add_members" | "remove_members")) => {
                let Some(members) = self.groups.get_mut(&e["group_id"].as_i64().unwrap()) else {
                    return;
                };
                for id in e["user_ids"].as_array().unwrap() {
                    if op == "add_members" {
                        members.insert(id.as_i64().unwrap());
                    } else {
                        members.remove(&id.as_i64().unwrap());
                    }
                }
            }
            ("realm_bot", "add") => {
                self.bots
                    .insert(e["bot"]["user_id"].as_i64().unwrap(), e["bot"].clone());
            }
            ("realm_bot", "update") => {
                let bot = self
                    .bots
                    .get_mut(&e["bot"]["user_id"].as_i64().unwrap())
                    .unwrap();
                for (key, value) in e["bot"].as_object().unwrap() {
                    bot[key] = value.clone();
                }
                if let Some(owner) = e["bot"].get("owner_id") {
                    bot["owner_id"] = owner.clone();
                }
            }
            ("realm_bot", "delete") => {
                self.bots.remove(&e["bot"]["user_id"].as_i64().unwrap());
            }
            ("custom_profile_fields", _) => self.fields = e["fields"].clone(),
            _ => {}
        }
    }
}

async fn people_snapshot(app: &TestApp, who: &Account) -> Value {
    app.register(
        who,
        &[
            ("fetch_event_types", json!(PEOPLE_TYPES)),
            ("client_gravatar", json!(false)),
        ],
    )
    .await
}

backend_test! {
    async fn people_snapshot_plus_events_equals_a_fresh_snapshot(app) {
        let admin = app.create_user("admin@parley.test", "Ad", Role::Administrator).await;
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let viewers = [&app.owner, &admin, &ann, &bob];
        let mut starts = Vec::new();
        for who in viewers {
            let body = app.register(who, &[("event_types", json!(PEOPLE_TYPES)), ("client_gravatar", json!(false))]).await;
            starts.push((People::from_snapshot(&body), body["queue_id"].as_str().unwrap().to_owned()));
        }
        let field = app.post("/realm/profile_fields").as_user(&app.owner).param("name", "Phone")
            .param("field_type", 1).send().await.success()["id"].as_i64().unwrap();
        app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&admin)
            .param("full_name", "Ann Two").json_param("role", &json!(300))
            .json_param("profile_data", &json!([{"id": field, "value": "12"}])).send().await.success();
        app.patch("/users/me/profile_data").as_user(&bob)
            .json_param("data", &json!([{"id": field, "value": "34"}])).send().await.success();
        let bot = app.post("/bots").as_user(&ann).param("full_name", "Helper").param("short_name", "helper")
            .send().await.success()["user_id"].as_i64().unwrap();
        app.patch(&format!("/bots/{bot}")).as_user(&ann).param("full_name", "Helper 2")
            .param("default_all_public_streams", "true").send().await.success();
        app.patch(&format!("/bots/{bot}")).as_user(&ann).json_param("bot_owner_id", &json!(bob.user_id.0))
            .send().await.success();
        app.delete(&format!("/users/{}", bob.user_id.0)).as_user(&admin).send().await.success();
        app.post(&format!("/users/{}/reactivate", bob.user_id.0)).as_user(&admin).send().await.success();
        app.post(&format!("/users/{bot}/reactivate")).as_user(&admin).send().await.success();
        app.patch(&format!("/realm/profile_fields/{field}")).as_user(&app.owner).param("hint", "digits")
            .send().await.success();
        app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner)
            .json_param("role", &json!(400)).send().await.success();
        app.delete("/users/me/profile_data").as_user(&ann).json_param("data", &json!([field])).send().await.success();
        for (who, (mut state, queue)) in viewers.into_iter().zip(starts) {
            for event in app.events(who, &queue, -1).await {
                state.apply(&event);
            }
            let fresh = People::from_snapshot(&people_snapshot(&app, who).await);
            assert_eq!(state, fresh, "viewer {}", who.email);
            let owns_bot = who.user_id == bob.user_id || who.user_id == admin.user_id || who.user_id == app.owner.user_id;
            assert_eq!(fresh.bots.len(), usize::from(owns_bot), "viewer {}", who.email);
            assert_eq!(fresh.users.len(), 5);
            assert_eq!(fresh.users[&bob.user_id.0]["profile_data"][field.to_string()]["value"], "34");
        }
    }
}

backend_test! {
    async fn deactivated_users_cannot_get_direct_messages_and_bots_need_an_active_owner(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bot = app.post("/bots").as_user(&ann).param("full_name", "Helper").param("short_name", "helper")
            .send().await.success()["user_id"].as_i64().unwrap();
        app.delete(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner).send().await.success();
        let body = app.post("/messages").as_user(&app.owner).param("type", "direct")
            .json_param("to", &json!([ann.user_id.0])).param("content", "hi").send().await
            .error(400, "BAD_REQUEST");
        assert!(body["msg"].as_str().unwrap().contains("is no longer using"), "{body}");
        let body = app.post(&format!("/users/{bot}/reactivate")).as_user(&app.owner).send().await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Cannot reactivate a bot whose owner is deactivated");
        app.post(&format!("/users/{}/reactivate", ann.user_id.0)).as_user(&app.owner).send().await.success();
        app.post(&format!("/users/{bot}/reactivate")).as_user(&app.owner).send().await.success();
        // Bots are deactivated through DELETE /bots/{id}, not DELETE /users/{id}.
        let body = app.delete(&format!("/users/{bot}")).as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "No such user");
    }
}

/// Removes the organization's default channels, so that new accounts share no channel.
async fn no_default_channels(app: &TestApp) {
    let all = app.ctx.db.run(parley_storage::channels::all).await.unwrap();
    for channel in all.iter().filter(|c| c.is_default) {
        app.delete("/default_streams")
            .as_user(&app.owner)
            .param("stream_id", channel.id.0)
            .send()
            .await
            .success();
    }
}

fn group_moves(events: &[Value]) -> Vec<(String, i64, Value)> {
    events
        .iter()
        .filter(|e| e["type"] == "user_group")
        .map(|e| {
            (
                e["op"].as_str().unwrap().to_owned(),
                e["group_id"].as_i64().unwrap(),
                e["user_ids"].clone(),
            )
        })
        .collect()
}

async fn snapshot_members(app: &TestApp, who: &Account, group: i64) -> Vec<Value> {
    let body = app
        .register(who, &[("fetch_event_types", json!(["realm_user_groups"]))])
        .await;
    body["realm_user_groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == group)
        .unwrap()["members"]
        .as_array()
        .unwrap()
        .clone()
}

backend_test! {
    async fn full_membership_follows_the_waiting_period(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let moderator = app.create_user("mod@parley.test", "Mod", Role::Moderator).await;
        let q = queue(&app, &moderator, json!(["user_group"])).await;
        let full = system_group(&app, "role:fullmembers").await;
        let members = system_group(&app, "role:members").await;
        let who = json!([ann.user_id.0]);

        // A new account is not a full member once the organization has a waiting period.
        app.patch("/realm").as_user(&app.owner).param("waiting_period_threshold", 3).send().await.success();
        assert_eq!(group_moves(&app.events_of(&moderator, &q, &["user_group"]).await), vec![
            ("remove_members".to_owned(), full, who.clone()),
            ("add_members".to_owned(), members, who.clone()),
        ]);
        assert!(snapshot_members(&app, &moderator, members).await.contains(&json!(ann.user_id.0)));
        assert!(!snapshot_members(&app, &moderator, full).await.contains(&json!(ann.user_id.0)));
        // Moderators are full members whatever their age.
        assert!(!snapshot_members(&app, &moderator, members).await.contains(&json!(moderator.user_id.0)));
        // So a setting of `role:fullmembers` leaves the new member out.
        set_permission(&app, "can_create_public_channel_group", full.to_string()).await;
        app.post("/channels/create").as_user(&ann).param("name", "early").json_param("subscribers", &json!([]))
            .send().await.error(400, "BAD_REQUEST");

        // Nothing changes until the period has passed.
        let now = parley_actions::time::now();
        assert_eq!(parley_actions::full_members::do_update_full_members(&app.ctx, now + 86_400).await.unwrap(), 0);
        // Three days later the scheduler's check makes Ann a full member.
        let q = queue(&app, &moderator, json!(["user_group"])).await;
        assert_eq!(parley_actions::full_members::do_update_full_members(&app.ctx, now + 3 * 86_400 + 5).await.unwrap(), 1);
        assert_eq!(group_moves(&app.events_of(&moderator, &q, &["user_group"]).await), vec![
            ("remove_members".to_owned(), members, who.clone()),
            ("add_members".to_owned(), full, who.clone()),
        ]);
        assert!(snapshot_members(&app, &moderator, full).await.contains(&json!(ann.user_id.0)));
        app.post("/channels/create").as_user(&ann).param("name", "later").json_param("subscribers", &json!([]))
            .send().await.success();

        // A longer period makes her wait again; none makes everyone a full member.
        let q = queue(&app, &moderator, json!(["user_group"])).await;
        app.patch("/realm").as_user(&app.owner).param("waiting_period_threshold", 30).send().await.success();
        app.patch("/realm").as_user(&app.owner).param("waiting_period_threshold", 0).send().await.success();
        assert_eq!(group_moves(&app.events_of(&moderator, &q, &["user_group"]).await), vec![
            ("remove_members".to_owned(), full, who.clone()),
            ("add_members".to_owned(), members, who.clone()),
            ("remove_members".to_owned(), members, who.clone()),
            ("add_members".to_owned(), full, who.clone()),
        ]);
        assert_eq!(parley_actions::full_members::do_update_full_members(&app.ctx, now).await.unwrap(), 0);
    }
}

backend_test! {
    async fn a_new_account_reaches_in_full_only_those_who_can_access_it(app) {
        no_default_channels(&app).await;
        let members = system_group(&app, "role:members").await;
        set_permission(&app, "can_access_all_users_group", members.to_string()).await;
        let guest = app.create_user("guest@parley.test", "Guest", Role::Guest).await;
        let member = app.create_user("mem@parley.test", "Mem", Role::Member).await;
        let gq = queue(&app, &guest, json!(["realm_user"])).await;
        let mq = queue(&app, &member, json!(["realm_user"])).await;
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let adds = |events: Vec<Value>| -> Vec<Value> {
            events.into_iter().filter(|e| e["op"] == "add").map(|e| e["person"].clone()).collect()
        };
        let seen_by_guest = adds(app.events_of(&guest, &gq, &["realm_user"]).await);
        assert_eq!(seen_by_guest.len(), 1);
        assert_eq!(seen_by_guest[0]["user_id"], ann.user_id.0);
        assert_eq!(seen_by_guest[0]["full_name"], "Unknown user");
        let seen_by_member = adds(app.events_of(&member, &mq, &["realm_user"]).await);
        assert_eq!(seen_by_member[0]["full_name"], "Ann");
        // The snapshot says the same.
        let body = app.register(&guest, &[("fetch_event_types", json!(["realm_user"]))]).await;
        let listed = body["realm_users"].as_array().unwrap().iter()
            .find(|u| u["user_id"] == ann.user_id.0).unwrap().clone();
        assert_eq!(listed["full_name"], "Unknown user");

        // Someone who joins a default channel the guest is in is accessible to the guest.
        let lobby = app.create_channel(&app.owner, "lobby", &[&app.owner, &guest], &[]).await;
        app.post("/default_streams").as_user(&app.owner).param("stream_id", lobby).send().await.success();
        let gq = queue(&app, &guest, json!(["realm_user"])).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let seen_by_guest = adds(app.events_of(&guest, &gq, &["realm_user"]).await);
        assert_eq!(seen_by_guest.len(), 1);
        assert_eq!(seen_by_guest[0]["user_id"], bob.user_id.0);
        assert_eq!(seen_by_guest[0]["full_name"], "Bob");
    }
}

backend_test! {
    async fn a_deactivated_user_leaves_anonymous_settings(app) {
        no_default_channels(&app).await;
        let members = system_group(&app, "role:members").await;
        set_permission(&app, "can_access_all_users_group", members.to_string()).await;
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let guest = app.create_user("guest@parley.test", "Guest", Role::Guest).await;
        let body = app.post("/user_groups/create").as_user(&app.owner)
            .param("name", "crew").param("description", "c")
            .json_param("members", &json!([ann.user_id.0]))
            .json_param("can_manage_group", &json!({"direct_members": [ann.user_id.0], "direct_subgroups": []}))
            .send().await.success();
        let crew = body["group_id"].as_i64().unwrap();
        let setting = json!({"direct_members": [ann.user_id.0, app.owner.user_id.0], "direct_subgroups": []});
        app.patch("/realm").as_user(&app.owner).json_param("can_add_custom_emoji_group", &setting)
            .send().await.success();
        let gq = queue(&app, &guest, json!(["realm_user", "user_group", "realm"])).await;
        let wq = queue(&app, &app.owner, json!(["realm_user", "user_group", "realm"])).await;
        app.delete(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner).send().await.success();

        // The guest cannot access Ann: it is told of each group and setting she left.
        let events = app.events_of(&guest, &gq, &["realm_user", "user_group", "realm"]).await;
        let shapes: Vec<Value> = events.iter().map(|e| {
            let mut e = e.clone();
            e.as_object_mut().unwrap().remove("id");
            e
        }).collect();
        assert_eq!(shapes, vec![
            json!({"type": "user_group", "op": "remove_members", "group_id": crew, "user_ids": [ann.user_id.0]}),
            json!({"type": "user_group", "op": "update", "group_id": crew,
                   "data": {"can_manage_group": {"direct_members": [], "direct_subgroups": []}}}),
            json!({"type": "realm", "op": "update_dict", "property": "default",
                   "data": {"can_add_custom_emoji_group": {"direct_members": [app.owner.user_id.0], "direct_subgroups": []}}}),
        ]);
        // Those who can access her learn it from the deactivation itself.
        let events = app.events_of(&app.owner, &wq, &["realm_user", "user_group", "realm"]).await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["person"]["is_active"], false);
        // The snapshot agrees.
        let snap = app.register(&guest, &[("fetch_event_types", json!(["realm", "realm_user_groups"]))]).await;
        assert_eq!(snap["realm_can_add_custom_emoji_group"], json!({"direct_members": [app.owner.user_id.0], "direct_subgroups": []}));
        let group = snap["realm_user_groups"].as_array().unwrap().iter().find(|g| g["id"] == crew).unwrap().clone();
        assert_eq!(group["members"], json!([]));
        assert_eq!(group["can_manage_group"], json!({"direct_members": [], "direct_subgroups": []}));
    }
}

//! Organization settings: `PATCH /realm`, its permission rules and errors, the `realm` events it
//! sends and the register snapshot that reflects it, and the effects of the settings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

/// Group IDs read from a snapshot's defaults: (members, administrators, everyone).
fn system_groups(snapshot: &Value) -> (i64, i64, i64) {
    (
        snapshot["realm_can_create_public_channel_group"]
            .as_i64()
            .unwrap(),
        snapshot["realm_can_mention_many_users_group"]
            .as_i64()
            .unwrap(),
        snapshot["realm_can_resolve_topics_group"].as_i64().unwrap(),
    )
}

async fn admin_and_member(app: &TestApp) -> (Account, Account) {
    let admin = app
        .create_user("admin@parley.test", "Adam", Role::Administrator)
        .await;
    let member = app
        .create_user("mia@parley.test", "Mia", Role::Member)
        .await;
    (admin, member)
}

fn realm_events(events: Vec<Value>) -> Vec<Value> {
    events
        .into_iter()
        .map(|mut e| {
            e.as_object_mut().unwrap().remove("id");
            e
        })
        .collect()
}

backend_test! {
    async fn only_administrators_and_owners_change_settings(app) {
        let (admin, member) = admin_and_member(&app).await;
        let body = app.patch("/realm").as_user(&member).param("name", "Mine").send().await
            .error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization administrator");
        // The role is checked before the values, as the reference does.
        let body = app.patch("/realm").as_user(&member).param("video_chat_provider", "99")
            .send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization administrator");
        // Owner-only settings.
        for (name, value) in [
            ("invite_required", "false"),
            ("waiting_period_threshold", "3"),
            ("message_retention_days", "30"),
            ("can_create_groups", "{\"new\": 1}"),
        ] {
            let body = app.patch("/realm").as_user(&admin).param(name, value).send().await
                .error(400, "UNAUTHORIZED_PRINCIPAL");
            assert_eq!(body["msg"], "Must be an organization owner", "{name}");
        }
        let ok = app.patch("/realm").as_user(&admin).param("name", "Renamed").send().await.success();
        assert_eq!(ok["name"], "updated");
        let ok = app.patch("/realm").as_user(&app.owner).param("invite_required", "false")
            .send().await.success();
        assert_eq!(ok["invite_required"], false);
        let s = app.register(&member, &[]).await;
        assert_eq!(s["realm_name"], "Renamed");
        assert_eq!(s["realm_invite_required"], false);
        let settings = app.get("/server_settings").send().await.success();
        assert_eq!(settings["realm_name"], "Renamed");
    }
}

backend_test! {
    async fn changes_send_events_and_fresh_register_agrees(app) {
        let (_, member) = admin_and_member(&app).await;
        let before = app.register(&member, &[("event_types", json!(["realm"]))]).await;
        let queue = before["queue_id"].as_str().unwrap().to_owned();
        let (_, admins, _) = system_groups(&before);
        let ok = app.patch("/realm").as_user(&app.owner)
            .param("description", "We **build**")
            .param("allow_message_editing", "false")
            .param("message_content_edit_limit_seconds", "unlimited")
            .param("move_messages_within_stream_limit_seconds", "3600")
            .param("topics_policy", "disable_empty_topic")
            .param("default_language", "de")
            .param("digest_weekday", "3")
            .param("enable_read_receipts", "true")
            .json_param("can_create_public_channel_group", &json!({"new": admins}))
            .json_param("direct_message_permission_group",
                &json!({"new": {"direct_members": [member.user_id.0], "direct_subgroups": [admins]}}))
            .send().await.success();
        assert_eq!(ok["description"], "updated");
        assert_eq!(ok["allow_message_editing"], false);
        assert_eq!(ok["message_content_edit_limit_seconds"], Value::Null);
        assert_eq!(ok["move_messages_within_stream_limit_seconds"], 3600);
        assert_eq!(ok["can_create_public_channel_group"], admins);

        let events = realm_events(app.events_of(&member, &queue, &["realm"]).await);
        let dict = |data: Value| json!({"type": "realm", "op": "update_dict", "property": "default", "data": data});
        let upd = |p: &str, v: Value| json!({"type": "realm", "op": "update", "property": p, "value": v});
        let description = events.iter()
            .find(|e| e["data"].get("description").is_some()).unwrap().clone();
        // The event carries the Markdown only, as the reference's; the snapshot holds the HTML.
        assert_eq!(description["data"], json!({"description": "We **build**"}));
        for expected in [
            dict(json!({"allow_message_editing": false})),
            dict(json!({"message_content_edit_limit_seconds": null})),
            upd("move_messages_within_stream_limit_seconds", json!(3600)),
            dict(json!({"topics_policy": "disable_empty_topic", "mandatory_topics": true})),
            upd("default_language", json!("de")),
            upd("digest_weekday", json!(3)),
            upd("enable_read_receipts", json!(true)),
            dict(json!({"can_create_public_channel_group": admins})),
            dict(json!({"direct_message_permission_group":
                {"direct_members": [member.user_id.0], "direct_subgroups": [admins]}})),
        ] {
            assert!(events.contains(&expected), "missing {expected} in {events:?}");
        }
        assert_eq!(events.len(), 10);

        // The snapshot before plus the events equals a fresh snapshot.
        let mut state = before.clone();
        for e in &events {
            match e["op"].as_str().unwrap() {
                "update" => {
                    state[format!("realm_{}", e["property"].as_str().unwrap())] = e["value"].clone();
                }
                _ => {
                    for (k, v) in e["data"].as_object().unwrap() {
                        state[format!("realm_{k}")] = v.clone();
                    }
                }
            }
        }
        let after = app.register(&member, &[("event_types", json!(["realm"]))]).await;
        // Clients render the new description themselves; the fresh snapshot has it rendered.
        assert!(after["realm_description"].as_str().unwrap().contains("<strong>build</strong>"));
        state["realm_description"] = after["realm_description"].clone();
        for (key, value) in after.as_object().unwrap() {
            if key.starts_with("realm_") {
                assert_eq!(&state[key], value, "{key}");
            }
        }
        assert_eq!(after["realm_message_content_edit_limit_seconds"], Value::Null);
        assert_eq!(after["realm_topics_policy"], "disable_empty_topic");
        assert_eq!(after["realm_mandatory_topics"], true);
    }
}

backend_test! {
    async fn unchanged_values_succeed_without_events(app) {
        let (_, member) = admin_and_member(&app).await;
        let s = app.register(&member, &[("event_types", json!(["realm"]))]).await;
        let queue = s["queue_id"].as_str().unwrap();
        let (members, _, _) = system_groups(&s);
        let ok = app.patch("/realm").as_user(&app.owner)
            .param("name", s["realm_name"].as_str().unwrap())
            .param("allow_message_editing", "true")
            .param("message_content_edit_limit_seconds", "600")
            .json_param("can_create_public_channel_group", &json!({"new": members, "old": members}))
            .send().await.success();
        assert!(ok.get("name").is_none() && ok.get("allow_message_editing").is_none());
        assert!(app.events_of(&member, queue, &["realm"]).await.is_empty());
        // Parameters PATCH /realm does not take are reported, not applied.
        let ok = app.patch("/realm").as_user(&app.owner).param("email_address_visibility", "2")
            .send().await.success();
        assert_eq!(ok["ignored_parameters_unsupported"], json!(["email_address_visibility"]));
    }
}

backend_test! {
    async fn invalid_values_name_the_parameter(app) {
        let s = app.register(&app.owner, &[]).await;
        let (members, admins, everyone) = system_groups(&s);
        for (name, value) in [
            ("message_content_edit_limit_seconds", "0"),
            ("message_content_delete_limit_seconds", "\"forever\""),
            ("move_messages_between_streams_limit_seconds", "-5"),
            ("message_retention_days", "0"),
            ("video_chat_provider", "99"),
            ("default_language", "xx-nope"),
            ("topics_policy", "sometimes"),
            ("name", ""),
            ("waiting_period_threshold", "-1"),
            ("inline_image_preview", "maybe"),
            ("new_stream_announcements_stream_id", "987654"),
            ("can_create_public_channel_group", "{\"new\": 987654}"),
            ("can_create_public_channel_group", "{\"new\": \"x\"}"),
            ("can_create_public_channel_group", &format!("{{\"new\": {everyone}}}")),
            ("can_add_subscribers_group",
                "{\"new\": {\"direct_members\": [987654], \"direct_subgroups\": []}}"),
            ("can_access_all_users_group", &format!("{{\"new\": {admins}}}")),
        ] {
            let body = app.patch("/realm").as_user(&app.owner).param(name, value).send().await
                .error(400, "BAD_REQUEST");
            assert_eq!(body["var_name"], name, "{name}={value}: {body}");
        }
        let body = app.patch("/realm").as_user(&app.owner)
            .json_param("can_create_public_channel_group", &json!({"new": admins, "old": everyone}))
            .send().await.error(400, "EXPECTATION_MISMATCH");
        assert_eq!(body["msg"], "'old' value does not match the expected value.");
        // A failed request changes nothing, even settings sent alongside the bad one.
        app.patch("/realm").as_user(&app.owner).param("name", "Half")
            .param("video_chat_provider", "99").send().await.error(400, "BAD_REQUEST");
        app.patch("/realm").as_user(&app.owner).param("name", "Half")
            .json_param("can_create_public_channel_group", &json!({"new": 987654}))
            .send().await.error(400, "BAD_REQUEST");
        let after = app.register(&app.owner, &[]).await;
        assert_eq!(after["realm_name"], s["realm_name"]);
        assert_eq!(after["realm_can_create_public_channel_group"], members);
    }
}

backend_test! {
    async fn settings_take_effect(app) {
        let (_, member) = admin_and_member(&app).await;
        let s = app.register(&app.owner, &[]).await;
        let (_, admins, _) = system_groups(&s);
        app.post("/channels/create").as_user(&member).param("name", "before")
            .json_param("subscribers", &json!([])).send().await.success();
        app.patch("/realm").as_user(&app.owner)
            .json_param("can_create_public_channel_group", &json!({"new": admins}))
            .send().await.success();
        app.post("/channels/create").as_user(&member).param("name", "after")
            .json_param("subscribers", &json!([])).send().await.error(400, "BAD_REQUEST");

        // topics_policy (and its legacy alias) governs the empty topic.
        app.create_channel(&app.owner, "lounge", &[&app.owner, &member], &[]).await;
        app.send_to_channel(&member, "lounge", "", "empty topic allowed").await;
        app.patch("/realm").as_user(&app.owner).param("mandatory_topics", "true")
            .send().await.success();
        app.post("/messages").as_user(&member).param("type", "stream").param("to", "lounge")
            .param("topic", "").param("content", "now refused").send().await
            .error(400, "BAD_REQUEST");
        let s = app.register(&member, &[]).await;
        assert_eq!(s["realm_topics_policy"], "disable_empty_topic");
        app.patch("/realm").as_user(&app.owner).param("topics_policy", "allow_empty_topic")
            .send().await.success();
        app.send_to_channel(&member, "lounge", "", "allowed again").await;

        // Spectator access switches anonymous register on and off.
        app.post("/register").send().await.error(401, "UNAUTHORIZED");
        app.patch("/realm").as_user(&app.owner).param("enable_spectator_access", "true")
            .send().await.success();
        let anon = app.post("/register").send().await.success();
        assert_eq!(anon["queue_id"], Value::Null);
        assert_eq!(anon["realm_enable_spectator_access"], true);
        app.patch("/realm").as_user(&app.owner).param("enable_spectator_access", "false")
            .send().await.success();
        app.post("/register").send().await.error(401, "UNAUTHORIZED");

        // Message editing switched off.
        let id = app.send_to_channel(&member, "lounge", "t", "draft").await;
        app.patch("/realm").as_user(&app.owner).param("allow_message_editing", "false")
            .send().await.success();
        app.patch(&format!("/messages/{id}")).as_user(&member).param("content", "edited")
            .send().await.error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn announcement_channels_and_limits(app) {
        let id = app.create_channel(&app.owner, "news", &[&app.owner], &[]).await;
        let ok = app.patch("/realm").as_user(&app.owner)
            .param("new_stream_announcements_stream_id", id)
            .param("message_retention_days", "unlimited")
            .param("message_content_delete_limit_seconds", "\"unlimited\"")
            .send().await.success();
        assert_eq!(ok["new_stream_announcements_stream_id"], id);
        let s = app.register(&app.owner, &[]).await;
        assert_eq!(s["realm_new_stream_announcements_stream_id"], id);
        assert_eq!(s["realm_message_retention_days"], -1);
        assert_eq!(s["realm_message_content_delete_limit_seconds"], Value::Null);
        app.patch("/realm").as_user(&app.owner)
            .param("new_stream_announcements_stream_id", "-1")
            .param("message_retention_days", "90")
            .send().await.success();
        let s = app.register(&app.owner, &[]).await;
        assert_eq!(s["realm_new_stream_announcements_stream_id"], -1);
        assert_eq!(s["realm_message_retention_days"], 90);
    }
}

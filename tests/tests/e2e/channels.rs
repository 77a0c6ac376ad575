//! Channels and subscriptions: creating, joining, leaving, listing, settings, privacy.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::backend_test;
use serde_json::{json, Value};

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

backend_test! {
    async fn new_organizations_have_a_default_general_channel(app) {
        let subs = app.get("/users/me/subscriptions").as_user(&app.owner).send().await.success();
        assert_eq!(names(&subs["subscriptions"]), vec!["general"]);
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let subs = app.get("/users/me/subscriptions").as_user(&ann).send().await.success();
        assert_eq!(names(&subs["subscriptions"]), vec!["general"], "new users join default channels");
        let streams = app.get("/streams").as_user(&ann).param("include_default", "true").send().await.success();
        assert_eq!(streams["streams"][0]["is_default"], true);
    }
}

backend_test! {
    async fn create_channel_with_defaults_and_every_field(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let id = app.post("/channels/create").as_user(&ann)
            .param("name", " design ").param("description", "All things **design**")
            .json_param("subscribers", &json!([ann.user_id.0, app.owner.user_id.0]))
            .send().await.success()["id"].as_i64().unwrap();
        let stream = app.get(&format!("/streams/{id}")).as_user(&ann).send().await.success()["stream"].clone();
        assert_eq!(stream["name"], "design");
        assert_eq!(stream["stream_id"], id);
        assert_eq!(stream["rendered_description"], "<p>All things <strong>design</strong></p>");
        assert_eq!(stream["invite_only"], false);
        assert_eq!(stream["history_public_to_subscribers"], true);
        assert_eq!(stream["creator_id"], ann.user_id.0);
        assert_eq!(stream["message_retention_days"], Value::Null);
        assert_eq!(stream["topics_policy"], "inherit");
        assert_eq!(stream["is_archived"], false);
        assert_eq!(stream["subscriber_count"], 2);
        assert!(stream["date_created"].as_i64().unwrap() > 1_700_000_000);
        assert_eq!(stream["can_administer_channel_group"], json!({"direct_members": [ann.user_id.0], "direct_subgroups": []}));
        assert!(stream["can_send_message_group"].is_i64());
        let members = app.get(&format!("/streams/{id}/members")).as_user(&ann).send().await.success();
        assert_eq!(members["subscribers"], json!([app.owner.user_id.0, ann.user_id.0]));
        let found = app.get("/get_stream_id").as_user(&ann).param("stream", "DESIGN").send().await.success();
        assert_eq!(found["stream_id"], id);
    }
}

backend_test! {
    async fn create_channel_errors(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let guest = app.create_user("guest@parley.test", "Gus", Role::Guest).await;
        app.create_channel(&ann, "taken", &[&ann], &[]).await;
        let body = app.post("/channels/create").as_user(&ann).param("name", "TAKEN")
            .json_param("subscribers", &json!([])).send().await.error(409, "CHANNEL_ALREADY_EXISTS");
        assert_eq!(body["channel_name"], "TAKEN");
        let body = app.post("/channels/create").as_user(&ann).param("name", "  ")
            .json_param("subscribers", &json!([])).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "name");
        let body = app.post("/channels/create").as_user(&ann).param("name", "x")
            .send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "subscribers");
        let body = app.post("/channels/create").as_user(&guest).param("name", "g")
            .json_param("subscribers", &json!([])).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Not allowed for guest users");
        let body = app.post("/channels/create").as_user(&ann).param("name", "r")
            .json_param("subscribers", &json!([])).json_param("message_retention_days", &json!(30))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Must be an organization owner");
        app.post("/channels/create").as_user(&ann).param("name", "d")
            .json_param("subscribers", &json!([])).json_param("is_default_stream", &json!(true))
            .send().await.error(400, "BAD_REQUEST");
        let body = app.post("/channels/create").as_user(&app.owner).param("name", "pd")
            .json_param("subscribers", &json!([])).json_param("is_default_stream", &json!(true))
            .json_param("invite_only", &json!(true)).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "A default channel cannot be private.");
        let body = app.post("/channels/create").as_user(&app.owner).param("name", "w")
            .json_param("subscribers", &json!([])).json_param("is_web_public", &json!(true))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Web-public channels are not enabled.");
        let body = app.post("/channels/create").as_user(&ann).param("name", "h")
            .json_param("subscribers", &json!([])).json_param("history_public_to_subscribers", &json!(false))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid parameters");
        let body = app.post("/channels/create").as_user(&ann).param("name", "s")
            .json_param("subscribers", &json!([999])).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "subscribers");
        let body = app.post("/channels/create").as_user(&ann).param("name", "g2")
            .json_param("subscribers", &json!([])).json_param("can_send_message_group", &json!(9999))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "can_send_message_group");
        let body = app.post("/channels/create").as_user(&ann).param("name", "tp")
            .json_param("subscribers", &json!([])).param("topics_policy", "sometimes")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "topics_policy");
        let streams = app.get("/streams").as_user(&ann).send().await.success();
        assert_eq!(names(&streams["streams"]), vec!["general", "taken"], "failed creations left nothing behind");
    }
}

backend_test! {
    async fn private_channels_are_invisible_to_outsiders(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let guest = app.create_user("guest@parley.test", "Gus", Role::Guest).await;
        let secret = app.create_channel(&ann, "secret", &[&ann], &[("invite_only", json!(true))]).await;
        let public = app.create_channel(&ann, "public", &[&ann], &[]).await;

        let missing = app.get("/streams/99999").as_user(&bob).send().await.error(400, "BAD_REQUEST");
        let hidden = app.get(&format!("/streams/{secret}")).as_user(&bob).send().await.error(400, "BAD_REQUEST");
        assert_eq!(missing["msg"], hidden["msg"], "a hidden channel reads exactly like a missing one");
        app.get("/get_stream_id").as_user(&bob).param("stream", "secret").send().await.error(400, "BAD_REQUEST");
        let streams = app.get("/streams").as_user(&bob).send().await.success();
        assert_eq!(names(&streams["streams"]), vec!["general", "public"]);

        // Administrators see private channels' metadata.
        app.get(&format!("/streams/{secret}")).as_user(&app.owner).send().await.success();
        let all = app.get("/streams").as_user(&app.owner).param("include_all", "true").send().await.success();
        assert_eq!(names(&all["streams"]), vec!["general", "public", "secret"]);

        // Guests see only what they are subscribed to.
        let streams = app.get("/streams").as_user(&guest).send().await.success();
        assert_eq!(names(&streams["streams"]), vec!["general"]);
        app.get(&format!("/streams/{public}")).as_user(&guest).send().await.error(400, "BAD_REQUEST");

        // Joining a private channel one may not see fails without revealing it.
        let body = app.post("/users/me/subscriptions").as_user(&bob)
            .json_param("subscriptions", &json!([{"name": "secret"}])).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Unable to access channel (secret).");
        let body = app.post("/users/me/subscriptions").as_user(&bob)
            .json_param("subscriptions", &json!([{"name": "secret"}, {"name": "public"}]))
            .json_param("authorization_errors_fatal", &json!(false)).send().await.success();
        assert_eq!(body["unauthorized"], json!(["secret"]));
        assert_eq!(body["subscribed"][bob.user_id.0.to_string()], json!(["public"]));

        let body = app.get(&format!("/streams/{secret}/members")).as_user(&bob).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid channel ID");
        let status = app.get(&format!("/users/{}/subscriptions/{secret}", ann.user_id.0)).as_user(&bob).send().await;
        status.error(400, "BAD_REQUEST");
        let status = app.get(&format!("/users/{}/subscriptions/{secret}", ann.user_id.0)).as_user(&ann).send().await.success();
        assert_eq!(status["is_subscribed"], true);
    }
}

backend_test! {
    async fn subscribe_unsubscribe_and_create_on_the_fly(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let body = app.post("/users/me/subscriptions").as_user(&ann)
            .json_param("subscriptions", &json!([{"name": "new one", "description": "fresh"}, {"name": "general"}]))
            .send().await.success();
        let key = ann.user_id.0.to_string();
        assert_eq!(body["subscribed"][&key], json!(["new one"]));
        assert_eq!(body["already_subscribed"][&key], json!(["general"]));
        assert!(body.get("unauthorized").is_none());

        // Others, by ID and by email.
        let body = app.post("/users/me/subscriptions").as_user(&ann)
            .json_param("subscriptions", &json!([{"name": "new one"}]))
            .json_param("principals", &json!([bob.user_id.0])).send().await.success();
        assert_eq!(body["subscribed"][bob.user_id.0.to_string()], json!(["new one"]));
        let body = app.post("/users/me/subscriptions").as_user(&ann)
            .json_param("subscriptions", &json!([{"name": "new one"}]))
            .json_param("principals", &json!(["bob@parley.test"])).send().await.success();
        assert_eq!(body["already_subscribed"][bob.user_id.0.to_string()], json!(["new one"]));
        let body = app.post("/users/me/subscriptions").as_user(&ann)
            .json_param("subscriptions", &json!([{"name": "new one"}]))
            .json_param("principals", &json!(["nobody@parley.test"])).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "principals");

        let subs = app.get("/users/me/subscriptions").as_user(&bob).param("include_subscribers", "true").send().await.success();
        let list = subs["subscriptions"].as_array().unwrap();
        assert_eq!(names(&subs["subscriptions"]), vec!["general", "new one"], "sorted by name");
        let new_one = &list[1];
        assert_eq!(new_one["description"], "fresh");
        assert_eq!(new_one["subscribers"], json!([ann.user_id.0, bob.user_id.0]));
        for field in ["color", "is_muted", "in_home_view", "pin_to_top", "desktop_notifications",
                      "audible_notifications", "push_notifications", "email_notifications",
                      "wildcard_mentions_notify", "stream_id", "rendered_description", "invite_only"] {
            assert!(new_one.get(field).is_some(), "missing {field}");
        }
        assert_eq!(new_one["desktop_notifications"], Value::Null);
        assert!(list[0].get("subscribers").is_none() || list[0]["subscribers"].is_array());

        let body = app.delete("/users/me/subscriptions").as_user(&bob)
            .json_param("subscriptions", &json!(["new one", "general"])).send().await.success();
        assert_eq!(body["removed"], json!(["new one", "general"]));
        let body = app.delete("/users/me/subscriptions").as_user(&bob)
            .json_param("subscriptions", &json!(["new one"])).send().await.success();
        assert_eq!(body["not_removed"], json!(["new one"]));
        let body = app.delete("/users/me/subscriptions").as_user(&bob)
            .json_param("subscriptions", &json!(["new one", "ghost", "phantom"])).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Channel(s) (ghost, phantom) do not exist");
        // Removing others needs permission.
        app.delete("/users/me/subscriptions").as_user(&bob).json_param("subscriptions", &json!(["new one"]))
            .json_param("principals", &json!([ann.user_id.0])).send().await.error(400, "BAD_REQUEST");
        let body = app.delete("/users/me/subscriptions").as_user(&app.owner).json_param("subscriptions", &json!(["new one"]))
            .json_param("principals", &json!([ann.user_id.0])).send().await.success();
        assert_eq!(body["removed"], json!(["new one"]));
        let subs = app.get("/users/me/subscriptions").as_user(&bob).send().await.success();
        assert_eq!(subs["subscriptions"], json!([]));
    }
}

backend_test! {
    async fn subscription_properties(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let id = app.create_channel(&ann, "props", &[&ann], &[]).await;
        app.post("/users/me/subscriptions/properties").as_user(&ann)
            .json_param("subscription_data", &json!([
                {"stream_id": id, "property": "color", "value": "#AABBCC"},
                {"stream_id": id, "property": "is_muted", "value": true},
                {"stream_id": id, "property": "pin_to_top", "value": true},
                {"stream_id": id, "property": "desktop_notifications", "value": false},
                {"stream_id": id, "property": "push_notifications", "value": true},
            ])).send().await.success();
        let subs = app.get("/users/me/subscriptions").as_user(&ann).send().await.success();
        let sub = subs["subscriptions"].as_array().unwrap().iter().find(|s| s["stream_id"] == id).unwrap().clone();
        assert_eq!(sub["color"], "#aabbcc");
        assert_eq!(sub["is_muted"], true);
        assert_eq!(sub["in_home_view"], false);
        assert_eq!(sub["pin_to_top"], true);
        assert_eq!(sub["desktop_notifications"], false);
        assert_eq!(sub["push_notifications"], true);
        // null goes back to inheriting; PATCH is an alias.
        app.patch("/users/me/subscriptions/properties").as_user(&ann)
            .json_param("subscription_data", &json!([{"stream_id": id, "property": "desktop_notifications", "value": null},
                                                     {"stream_id": id, "property": "in_home_view", "value": true}]))
            .send().await.success();
        let subs = app.get("/users/me/subscriptions").as_user(&ann).send().await.success();
        let sub = subs["subscriptions"].as_array().unwrap().iter().find(|s| s["stream_id"] == id).unwrap().clone();
        assert_eq!(sub["desktop_notifications"], Value::Null);
        assert_eq!(sub["is_muted"], false);

        for (data, needle) in [
            (json!([{"stream_id": id, "property": "colour", "value": "#000000"}]), "Unknown subscription property"),
            (json!([{"stream_id": id, "property": "color", "value": "red"}]), "color is not a valid hex color code"),
            (json!([{"stream_id": id, "property": "is_muted", "value": "yes"}]), "is_muted"),
            (json!([{"stream_id": 9999, "property": "is_muted", "value": true}]), "Not subscribed"),
        ] {
            let body = app.post("/users/me/subscriptions/properties").as_user(&ann)
                .json_param("subscription_data", &data).send().await.error(400, "BAD_REQUEST");
            assert!(body["msg"].as_str().unwrap().contains(needle), "{body}");
        }
        let subs = app.get("/users/me/subscriptions").as_user(&ann).send().await.success();
        let sub = subs["subscriptions"].as_array().unwrap().iter().find(|s| s["stream_id"] == id).unwrap().clone();
        assert_eq!(sub["color"], "#aabbcc", "failed updates change nothing");
    }
}

backend_test! {
    async fn update_and_archive_channels(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let id = app.create_channel(&ann, "old name", &[&ann], &[]).await;
        let path = format!("/streams/{id}");
        // The creator administers the channel; others may not.
        let body = app.patch(&path).as_user(&bob).param("new_name", "nope").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "You do not have permission to administer this channel.");
        app.patch(&path).as_user(&ann).param("new_name", "new name").param("description", "line one\nline two")
            .send().await.success();
        let stream = app.get(&path).as_user(&bob).send().await.success()["stream"].clone();
        assert_eq!(stream["name"], "new name");
        assert_eq!(stream["description"], "line one line two");
        app.patch(&path).as_user(&ann).param("new_name", "new name").send().await.error(400, "BAD_REQUEST");
        app.patch(&path).as_user(&ann).param("new_name", "general").send().await.error(409, "CHANNEL_ALREADY_EXISTS");

        // Group settings take {"new", "old"}; a stale "old" is refused.
        let current = stream["can_send_message_group"].clone();
        let body = app.patch(&path).as_user(&ann)
            .json_param("can_send_message_group", &json!({"new": {"direct_members": [ann.user_id.0], "direct_subgroups": []}, "old": 99999}))
            .send().await.error(400, "EXPECTATION_MISMATCH");
        assert_eq!(body["field_name"], "old");
        app.patch(&path).as_user(&ann)
            .json_param("can_send_message_group", &json!({"new": {"direct_members": [ann.user_id.0], "direct_subgroups": []}, "old": current}))
            .send().await.success();
        let stream = app.get(&path).as_user(&ann).send().await.success()["stream"].clone();
        assert_eq!(stream["can_send_message_group"], json!({"direct_members": [ann.user_id.0], "direct_subgroups": []}));

        // Privacy.
        app.patch(&path).as_user(&ann).json_param("is_private", &json!(true)).send().await.success();
        let stream = app.get(&path).as_user(&ann).send().await.success()["stream"].clone();
        assert_eq!(stream["invite_only"], true);
        app.get(&path).as_user(&bob).send().await.error(400, "BAD_REQUEST");

        // Archive.
        app.delete(&path).as_user(&bob).send().await.error(400, "BAD_REQUEST");
        app.delete(&path).as_user(&ann).send().await.success();
        let stream = app.get(&path).as_user(&ann).send().await.success()["stream"].clone();
        assert_eq!(stream["is_archived"], true);
        let subs = app.get("/users/me/subscriptions").as_user(&ann).send().await.success();
        assert_eq!(names(&subs["subscriptions"]), vec!["general"], "archived channels leave the subscription list");
        let all = app.get("/streams").as_user(&ann).param("exclude_archived", "false").send().await.success();
        assert!(names(&all["streams"]).contains(&"new name".to_owned()));
        app.delete(&path).as_user(&ann).send().await.error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn announcing_new_channels(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        app.post("/channels/create").as_user(&ann).param("name", "launch")
            .json_param("subscribers", &json!([ann.user_id.0])).json_param("announce", &json!(true)).send().await.success();
        app.post("/channels/create").as_user(&ann).param("name", "hush")
            .json_param("subscribers", &json!([ann.user_id.0])).json_param("invite_only", &json!(true))
            .json_param("announce", &json!(true)).send().await.success();
        app.post("/users/me/subscriptions").as_user(&ann).json_param("subscriptions", &json!([{"name": "side"}]))
            .json_param("announce", &json!(true)).send().await.success();
        let page = app.get("/messages").as_user(&ann).param("anchor", "newest").param("num_before", 10)
            .param("apply_markdown", "false")
            .json_param("narrow", &json!([["channel", "general"], ["topic", "new channels"]])).send().await.success();
        let messages = page["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 2, "private channels are not announced: {page}");
        assert_eq!(messages[0]["content"], format!("@_**Ann|{}** created a new channel #**launch**.", ann.user_id.0));
        assert_eq!(messages[0]["sender_full_name"], "Notification Bot");
        assert_eq!(messages[1]["content"], format!("@_**Ann|{}** created a new channel #**side**.", ann.user_id.0));
        assert_eq!(messages[0]["flags"], json!(["read"]), "read for the creator");
        // The bot is not one of the organization's users.
        let users = app.get("/users").as_user(&ann).send().await.success();
        assert!(users["members"].as_array().unwrap().iter().all(|u| u["full_name"] != "Notification Bot"));
    }
}

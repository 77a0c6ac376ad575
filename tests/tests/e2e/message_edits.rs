//! Editing, moving and resolving messages, with their permissions, limits, notices and history.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

async fn setup(app: &TestApp) -> (Account, Account, i64) {
    let ann = app
        .create_user("ann@parley.test", "Ann", Role::Member)
        .await;
    let bob = app
        .create_user("bob@parley.test", "Bob", Role::Member)
        .await;
    let id = app
        .post("/channels/create")
        .as_user(&ann)
        .param("name", "dev")
        .json_param("subscribers", &json!([ann.user_id.0, bob.user_id.0]))
        .send()
        .await
        .success()["id"]
        .as_i64()
        .unwrap();
    (ann, bob, id)
}

async fn topic_of(app: &TestApp, who: &Account, id: i64) -> Value {
    let m = app
        .get(&format!("/messages/{id}"))
        .as_user(who)
        .send()
        .await
        .success();
    json!([m["message"]["display_recipient"], m["message"]["subject"]])
}

async fn contents(app: &TestApp, who: &Account, narrow: Value) -> Vec<String> {
    let page = app
        .get("/messages")
        .as_user(who)
        .param("anchor", "newest")
        .param("num_before", 50)
        .param("apply_markdown", "false")
        .json_param("narrow", &narrow)
        .send()
        .await
        .success();
    page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

async fn set_policy(app: &TestApp, name: &'static str, value: &'static str) {
    app.ctx
        .db
        .run(move |c| parley_storage::realms::set_permission(c, name, value))
        .await
        .unwrap();
    // Written behind the server's back (no event): the organization cache is told directly.
    app.ctx.events.realm_cache().invalidate();
}

backend_test! {
    async fn content_edits_and_history(app) {
        let (ann, bob, _) = setup(&app).await;
        let id = app.send_to_channel(&ann, "dev", "t", "first draft").await;
        let path = format!("/messages/{id}");
        let body = app.patch(&path).as_user(&bob).param("content", "hijack").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "You don't have permission to edit this message");
        let body = app.patch(&path).as_user(&ann).param("content", "x").param("prev_content_sha256", "0".repeat(64))
            .send().await.error(400, "EXPECTATION_MISMATCH");
        assert_eq!(body["field_name"], "prev_content_sha256");
        let body = app.patch(&path).as_user(&ann).param("content", "second **draft**").send().await.success();
        assert_eq!(body["detached_uploads"], json!([]));
        let m = app.get(&path).as_user(&bob).send().await.success()["message"].clone();
        assert_eq!(m["content"], "<p>second <strong>draft</strong></p>");
        assert!(m["last_edit_timestamp"].is_i64());
        assert_eq!(m["edit_history"][0]["prev_content"], "first draft");
        assert_eq!(m["edit_history"][0]["user_id"], ann.user_id.0);

        let history = app.get(&format!("{path}/history")).as_user(&bob).send().await.success();
        let snapshots = history["message_history"].as_array().unwrap();
        assert_eq!(snapshots.len(), 2);
        assert_eq!(snapshots[0]["content"], "first draft");
        assert_eq!(snapshots[1]["content"], "second **draft**");
        assert_eq!(snapshots[1]["prev_content"], "first draft");
        assert_eq!(snapshots[1]["prev_rendered_content"], "<p>first draft</p>");
        assert_eq!(snapshots[1]["rendered_content"], "<p>second <strong>draft</strong></p>");
        // The new rendering, the inserted words and the deleted ones marked, as the reference.
        assert_eq!(
            snapshots[1]["content_html_diff"],
            "<div><p><span class=\"highlight_text_inserted\">second </span>\
             <span class=\"highlight_text_deleted\">first </span><strong>draft</strong></p></div>"
        );
        assert!(snapshots[0].get("content_html_diff").is_none());
        assert_eq!(snapshots[0]["topic"], "t");

        app.patch(&path).as_user(&ann).param("content", "   ").send().await.success();
        assert_eq!(app.get(&path).as_user(&ann).send().await.success()["raw_content"], "(deleted)");
        let body = app.patch(&path).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Nothing to change");
        let body = app.patch(&path).as_user(&ann).param("content", "x").param("propagate_mode", "change_all")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid propagate_mode without topic edit");
        let body = app.patch(&path).as_user(&ann).param("topic", "x").param("propagate_mode", "change_some")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "propagate_mode");
        set_policy(&app, "message_content_edit_limit_seconds", "-100").await;
        let body = app.patch(&path).as_user(&ann).param("content", "late").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "The time limit for editing this message has passed");
        set_policy(&app, "allow_message_editing", "false").await;
        let body = app.patch(&path).as_user(&ann).param("content", "late").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Your organization has turned off message editing");
    }
}

backend_test! {
    async fn topic_moves_with_each_propagate_mode(app) {
        let (ann, bob, _) = setup(&app).await;
        let m: Vec<i64> = {
            let mut v = Vec::new();
            for i in 0..4 {
                v.push(app.send_to_channel(&ann, "dev", "old", &format!("m{i}")).await);
            }
            v
        };
        app.patch(&format!("/messages/{}", m[0])).as_user(&bob).param("topic", "one").send().await.success();
        assert_eq!(topic_of(&app, &bob, m[0]).await, json!(["dev", "one"]));
        assert_eq!(topic_of(&app, &bob, m[1]).await, json!(["dev", "old"]));
        let moved = app.get(&format!("/messages/{}", m[0])).as_user(&bob).send().await.success()["message"].clone();
        assert_eq!(moved["edit_history"][0]["prev_topic"], "old");
        assert_eq!(moved["edit_history"][0]["topic"], "one");
        assert!(moved["last_moved_timestamp"].is_i64());
        // The notification bot tells the new topic.
        let notes = contents(&app, &bob, json!([["topic", "one"]])).await;
        assert_eq!(notes.len(), 2);
        assert!(notes[1].starts_with("A message was moved here from #**dev>old** by @_**Bob|"), "{}", notes[1]);

        app.patch(&format!("/messages/{}", m[2])).as_user(&bob).param("topic", "later")
            .param("propagate_mode", "change_later").json_param("send_notification_to_new_thread", &json!(false))
            .json_param("send_notification_to_old_thread", &json!(true)).send().await.success();
        assert_eq!(topic_of(&app, &bob, m[1]).await, json!(["dev", "old"]));
        assert_eq!(topic_of(&app, &bob, m[2]).await, json!(["dev", "later"]));
        assert_eq!(topic_of(&app, &bob, m[3]).await, json!(["dev", "later"]));
        assert_eq!(contents(&app, &bob, json!([["topic", "later"]])).await, vec!["m2", "m3"]);
        let old = contents(&app, &bob, json!([["topic", "old"]])).await;
        assert!(old.last().unwrap().starts_with("2 messages were moved from this topic to #**dev>later** by"), "{old:?}");

        app.patch(&format!("/messages/{}", m[3])).as_user(&bob).param("topic", "all")
            .param("propagate_mode", "change_all").send().await.success();
        assert_eq!(topic_of(&app, &bob, m[2]).await, json!(["dev", "all"]));
        let notes = contents(&app, &bob, json!([["topic", "all"]])).await;
        assert!(notes.last().unwrap().starts_with("This topic was moved here from #**dev>later** by"), "{notes:?}");
    }
}

backend_test! {
    async fn resolving_and_unresolving_topics(app) {
        let (ann, bob, _) = setup(&app).await;
        let a = app.send_to_channel(&ann, "dev", "bug", "it broke").await;
        let b = app.send_to_channel(&bob, "dev", "bug", "fixed").await;
        app.patch(&format!("/messages/{b}")).as_user(&ann).param("topic", "✔ bug").param("propagate_mode", "change_all")
            .send().await.success();
        assert_eq!(topic_of(&app, &bob, a).await, json!(["dev", "✔ bug"]));
        let notes = contents(&app, &bob, json!([["topic", "✔ bug"]])).await;
        assert_eq!(notes.len(), 3);
        assert!(notes[2].ends_with("has marked this topic as resolved."), "{notes:?}");
        let resolved = app.get("/messages").as_user(&bob).param("anchor", "newest").param("num_before", 10)
            .json_param("narrow", &json!([["is", "resolved"]])).send().await.success();
        assert_eq!(resolved["messages"].as_array().unwrap().len(), 3);
        let m = app.get(&format!("/messages/{a}")).as_user(&bob).send().await.success()["message"].clone();
        assert!(m.get("last_moved_timestamp").is_none(), "resolving is not a move");

        app.patch(&format!("/messages/{a}")).as_user(&bob).param("topic", "bug").param("propagate_mode", "change_all")
            .send().await.success();
        assert_eq!(topic_of(&app, &bob, b).await, json!(["dev", "bug"]));
        let notes = contents(&app, &bob, json!([["topic", "bug"]])).await;
        assert!(notes.last().unwrap().ends_with("has marked this topic as unresolved."), "{notes:?}");

        let empty = app.send_to_channel(&ann, "dev", "", "no topic").await;
        let body = app.patch(&format!("/messages/{empty}")).as_user(&ann).param("topic", "✔ general chat")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "General chat cannot be marked as resolved");

        // Without the resolve permission.
        set_policy(&app, "can_resolve_topics_group", "{\"direct_members\":[],\"direct_subgroups\":[]}").await;
        let body = app.patch(&format!("/messages/{a}")).as_user(&bob).param("topic", "✔ bug").param("propagate_mode", "change_all")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "You don't have permission to resolve topics in this channel.");
    }
}

backend_test! {
    async fn moving_between_channels(app) {
        let (ann, bob, _) = setup(&app).await;
        let guest = app.create_user("guest@parley.test", "Gus", Role::Guest).await;
        app.post("/users/me/subscriptions").as_user(&ann).json_param("subscriptions", &json!([{"name": "dev"}]))
            .json_param("principals", &json!([guest.user_id.0])).send().await.success();
        let private = app.post("/channels/create").as_user(&ann).param("name", "private")
            .json_param("subscribers", &json!([ann.user_id.0])).json_param("invite_only", &json!(true))
            .send().await.success()["id"].as_i64().unwrap();
        let other = app.post("/channels/create").as_user(&ann).param("name", "other")
            .json_param("subscribers", &json!([ann.user_id.0, bob.user_id.0, guest.user_id.0])).send().await.success()["id"].as_i64().unwrap();
        let a = app.send_to_channel(&ann, "dev", "t", "move me").await;
        let body = app.patch(&format!("/messages/{a}")).as_user(&guest).json_param("stream_id", &json!(other))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "You don't have permission to move this message");
        let body = app.patch(&format!("/messages/{a}")).as_user(&ann).json_param("stream_id", &json!(other))
            .param("content", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Cannot change message content while changing channel");
        app.patch(&format!("/messages/{a}")).as_user(&ann).json_param("stream_id", &json!(other)).send().await.success();
        assert_eq!(topic_of(&app, &bob, a).await, json!(["other", "t"]));
        let m = app.get(&format!("/messages/{a}")).as_user(&bob).send().await.success()["message"].clone();
        assert_eq!(m["edit_history"][0]["stream"], other);
        // Into a private channel: Bob, not subscribed there, can no longer read it.
        app.patch(&format!("/messages/{a}")).as_user(&ann).json_param("stream_id", &json!(private)).send().await.success();
        app.get(&format!("/messages/{a}")).as_user(&bob).send().await.error(400, "BAD_REQUEST");
        assert_eq!(topic_of(&app, &ann, a).await, json!(["private", "t"]));
        let body = app.patch(&format!("/messages/{a}")).as_user(&bob).json_param("stream_id", &json!(other))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid message(s)");
    }
}

backend_test! {
    async fn administrators_move_only_into_channels_they_may_read_and_post_in(app) {
        let (ann, bob, _) = setup(&app).await;
        let owner = app.owner.clone();
        // A private channel the owner is not in: as an administrator they see its name only.
        let secret = app.create_channel(&ann, "secret", &[&ann], &[("invite_only", json!(true))]).await;
        // One they are in, where only Ann may post.
        let quiet = app.create_channel(&ann, "quiet", &[&ann, &owner], &[
            ("invite_only", json!(true)),
            ("can_send_message_group", json!({"direct_members": [ann.user_id.0], "direct_subgroups": []})),
        ]).await;
        let a = app.send_to_channel(&bob, "dev", "t", "stay here").await;
        let body = app.patch(&format!("/messages/{a}")).as_user(&owner).json_param("stream_id", &json!(secret))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid channel ID");
        let body = app.patch(&format!("/messages/{a}")).as_user(&owner).json_param("stream_id", &json!(quiet))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "You do not have permission to post in this channel.");
        assert_eq!(topic_of(&app, &bob, a).await, json!(["dev", "t"]));
        // Once subscribed to the private channel, the move is allowed.
        app.post("/users/me/subscriptions").as_user(&ann).json_param("subscriptions", &json!([{"name": "secret"}]))
            .json_param("principals", &json!([owner.user_id.0])).send().await.success();
        app.patch(&format!("/messages/{a}")).as_user(&owner).json_param("stream_id", &json!(secret))
            .send().await.success();
        assert_eq!(topic_of(&app, &ann, a).await, json!(["secret", "t"]));
    }
}

backend_test! {
    async fn move_time_limits(app) {
        let (ann, bob, _) = setup(&app).await;
        let moderator = app.create_user("mod@parley.test", "Mo", Role::Moderator).await;
        app.post("/users/me/subscriptions").as_user(&moderator).json_param("subscriptions", &json!([{"name": "dev"}])).send().await.success();
        let a = app.send_to_channel(&ann, "dev", "t", "old one").await;
        let b = app.send_to_channel(&ann, "dev", "t", "new one").await;
        // The first message was sent a day ago; moves are allowed for an hour.
        let day_ago = parley_actions::time::now() - 86_400;
        app.ctx.db.run(move |c| parley_storage::messages::set_date_sent(c, parley_domain::MessageId(a), day_ago)).await.unwrap();
        set_policy(&app, "move_messages_within_stream_limit_seconds", "3600").await;
        let body = app.patch(&format!("/messages/{a}")).as_user(&bob).param("topic", "u").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "The time limit for editing this message's topic has passed.");
        let body = app.patch(&format!("/messages/{b}")).as_user(&bob).param("topic", "u").param("propagate_mode", "change_all")
            .send().await.error(400, "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED");
        assert_eq!(body["first_message_id_allowed_to_move"], b);
        assert_eq!(body["total_messages_in_topic"], 2);
        assert_eq!(body["total_messages_allowed_to_move"], 1);
        assert_eq!(body["msg"], "You only have permission to move the 1/2 most recent messages in this topic.");
        assert_eq!(topic_of(&app, &bob, b).await, json!(["dev", "t"]), "nothing moved");
        // The client retries with change_later from the first movable message.
        app.patch(&format!("/messages/{b}")).as_user(&bob).param("topic", "u").param("propagate_mode", "change_later")
            .send().await.success();
        assert_eq!(topic_of(&app, &bob, b).await, json!(["dev", "u"]));
        assert_eq!(topic_of(&app, &bob, a).await, json!(["dev", "t"]));
        // Moderators are exempt.
        app.patch(&format!("/messages/{a}")).as_user(&moderator).param("topic", "u").param("propagate_mode", "change_all")
            .send().await.success();
        assert_eq!(topic_of(&app, &bob, a).await, json!(["dev", "u"]));
        // Resolving ignores the limits.
        app.patch(&format!("/messages/{a}")).as_user(&bob).param("topic", "✔ u").param("propagate_mode", "change_all")
            .send().await.success();
        assert_eq!(topic_of(&app, &bob, a).await, json!(["dev", "✔ u"]));
    }
}

backend_test! {
    async fn direct_message_edits(app) {
        let (ann, bob, _) = setup(&app).await;
        let id = app.post("/messages").as_user(&ann).param("type", "direct").json_param("to", &json!([bob.user_id.0]))
            .param("content", "hi").send().await.success()["id"].as_i64().unwrap();
        let body = app.patch(&format!("/messages/{id}")).as_user(&ann).param("topic", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Direct messages cannot have topics.");
        let body = app.patch(&format!("/messages/{id}")).as_user(&ann).json_param("stream_id", &json!(1)).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Direct messages cannot be moved to channels.");
        app.patch(&format!("/messages/{id}")).as_user(&ann).param("content", "hi @**Bob**").send().await.success();
        let m = app.get(&format!("/messages/{id}")).as_user(&bob).send().await.success()["message"].clone();
        assert_eq!(m["flags"], json!(["mentioned"]), "mentions added by an edit set the flag");
    }
}

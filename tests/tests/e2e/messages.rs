//! Sending and reading messages: channel and direct messages, topic rules, anchors, narrows,
//! and that nobody reads what they may not see.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

async fn fetch(app: &TestApp, who: &Account, narrow: Value) -> Value {
    app.get("/messages")
        .as_user(who)
        .param("anchor", "newest")
        .param("num_before", 100)
        .json_param("narrow", &narrow)
        .send()
        .await
        .success()
}

fn ids(page: &Value) -> Vec<i64> {
    page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .collect()
}

backend_test! {
    async fn channel_messages_round_trip_with_every_field(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        app.create_channel(&ann, "design", &[&ann, &bob], &[]).await;
        let id = app.send_to_channel(&ann, "design", "colours", "Hello **world**").await;
        let page = fetch(&app, &bob, json!([["channel", "design"], ["topic", "colours"]])).await;
        assert_eq!(ids(&page), vec![id]);
        let m = &page["messages"][0];
        assert_eq!(m["content"], "<p>Hello <strong>world</strong></p>");
        assert_eq!(m["content_type"], "text/html");
        assert_eq!(m["sender_id"], ann.user_id.0);
        assert_eq!(m["sender_full_name"], "Ann");
        assert_eq!(m["sender_email"], "ann@parley.test");
        assert_eq!(m["type"], "stream");
        assert_eq!(m["display_recipient"], "design");
        assert_eq!(m["subject"], "colours");
        assert!(m["stream_id"].is_i64() && m["recipient_id"].is_i64());
        assert_eq!(m["flags"], json!([]), "unread for the recipient");
        assert_eq!(m["reactions"], json!([]));
        assert_eq!(m["submessages"], json!([]));
        assert_eq!(m["topic_links"], json!([]));
        assert_eq!(m["is_me_message"], false);
        assert!(m["timestamp"].as_i64().unwrap() > 1_700_000_000);
        for field in ["avatar_url", "client", "sender_realm_str"] {
            assert!(m.get(field).is_some(), "missing {field}");
        }
        assert_eq!(page["found_anchor"], false);
        assert_eq!(page["found_newest"], true);
        assert_eq!(page["found_oldest"], true);
        assert_eq!(page["history_limited"], false);

        let me = app.get("/users/me").as_user(&bob).send().await.success();
        assert_eq!(me["max_message_id"], id);
        let raw = app.get(&format!("/messages/{id}")).as_user(&bob).param("apply_markdown", "false").send().await.success();
        assert_eq!(raw["raw_content"], "Hello **world**");
        assert_eq!(raw["message"]["content"], "Hello **world**");
        assert_eq!(raw["message"]["content_type"], "text/x-markdown");

        // The Python client's messages start unread for their sender; read_by_sender overrides.
        let own = fetch(&app, &ann, json!([["channel", "design"]])).await;
        assert_eq!(own["messages"][0]["flags"], json!([]));
        let id2 = app.post("/messages").as_user(&ann).param("type", "channel").param("to", "design")
            .param("topic", "colours").param("content", "again").param("read_by_sender", "true")
            .send().await.success()["id"].as_i64().unwrap();
        let own = app.get(&format!("/messages/{id2}")).as_user(&ann).send().await.success();
        assert_eq!(own["message"]["flags"], json!(["read"]));
    }
}

backend_test! {
    async fn channel_send_errors(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let guest = app.create_user("guest@parley.test", "Gus", Role::Guest).await;
        let secret = app.create_channel(&ann, "secret", &[&ann], &[("invite_only", json!(true))]).await;
        app.create_channel(&ann, "open", &[&ann], &[]).await;
        let send = |who: &Account, to: &str, topic: Option<&str>, content: &str| {
            let mut r = app.post("/messages").as_user(who).param("type", "stream").param("to", to).param("content", content);
            if let Some(topic) = topic { r = r.param("topic", topic); }
            r.send()
        };
        let body = send(&bob, "nowhere", Some("t"), "x").await.error(400, "STREAM_DOES_NOT_EXIST");
        assert_eq!(body["stream"], "nowhere");
        assert_eq!(body["msg"], "Channel 'nowhere' does not exist");
        let hidden = send(&bob, "secret", Some("t"), "x").await.error(400, "STREAM_DOES_NOT_EXIST");
        assert_eq!(hidden["msg"], "Channel 'secret' does not exist", "private channels read as missing");
        let body = send(&bob, "999999", Some("t"), "x").await.error(400, "STREAM_DOES_NOT_EXIST");
        assert_eq!(body["stream_id"], 999999);
        let hidden = send(&bob, &secret.to_string(), Some("t"), "x").await.error(400, "STREAM_DOES_NOT_EXIST");
        assert_eq!(hidden["stream_id"], secret, "private channels read as missing by ID too");
        send(&bob, "open", None, "x").await.error(400, "BAD_REQUEST");
        let body = send(&bob, "open", Some("t"), "   ").await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Message must not be empty");
        let body = send(&bob, "open", Some("a\u{0007}b"), "x").await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "topic");
        let body = send(&guest, "open", Some("t"), "x").await.error(400, "STREAM_DOES_NOT_EXIST");
        assert!(body["msg"].as_str().unwrap().contains("open"));
        let body = app.post("/messages").as_user(&bob).param("type", "carrier-pigeon").param("to", "open")
            .param("content", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "type");

        // can_send_message_group.
        let announce = app.create_channel(&ann, "announce", &[&ann, &bob], &[
            ("can_send_message_group", json!({"direct_members": [ann.user_id.0], "direct_subgroups": []})),
        ]).await;
        let body = send(&bob, "announce", Some("t"), "x").await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "You do not have permission to post in this channel.");
        send(&ann, &announce.to_string(), Some("t"), "by id").await.success();

        // Archived channels take no messages.
        let archived = app.create_channel(&ann, "old", &[&ann], &[]).await;
        app.delete(&format!("/streams/{archived}")).as_user(&ann).send().await.success();
        let body = send(&ann, "old", Some("t"), "x").await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Not authorized to send to channel 'old'");
    }
}

backend_test! {
    async fn topic_rules_and_limits(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        app.create_channel(&ann, "free", &[&ann], &[]).await;
        app.create_channel(&ann, "strict", &[&ann], &[("topics_policy", json!("disable_empty_topic"))]).await;
        app.create_channel(&ann, "chat", &[&ann], &[("topics_policy", json!("empty_topic_only"))]).await;
        let empty = app.send_to_channel(&ann, "free", "(no topic)", "a").await;
        let general = app.send_to_channel(&ann, "free", "general chat", "b").await;
        let page = fetch(&app, &ann, json!([["channel", "free"]])).await;
        assert_eq!(ids(&page), vec![empty, general]);
        assert_eq!(page["messages"][0]["subject"], "general chat");
        let page = app.get("/messages").as_user(&ann).param("anchor", "newest").param("num_before", 10)
            .param("allow_empty_topic_name", "true").json_param("narrow", &json!([["channel", "free"], ["topic", ""]]))
            .send().await.success();
        assert_eq!(page["messages"][0]["subject"], "");
        assert_eq!(ids(&page), vec![empty, general]);

        let body = app.post("/messages").as_user(&ann).param("type", "stream").param("to", "strict")
            .param("topic", "").param("content", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Sending messages to the general chat is not allowed in this channel.");
        let body = app.post("/messages").as_user(&ann).param("type", "stream").param("to", "chat")
            .param("topic", "named").param("content", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Only the general chat topic is allowed in this channel.");
        app.send_to_channel(&ann, "chat", "", "fine").await;

        let long_topic = "t".repeat(80);
        let id = app.send_to_channel(&ann, "free", &long_topic, &"c".repeat(10_500)).await;
        let m = app.get(&format!("/messages/{id}")).as_user(&ann).send().await.success();
        assert_eq!(m["message"]["subject"].as_str().unwrap().chars().count(), 60);
        assert!(m["raw_content"].as_str().unwrap().ends_with("[message truncated]"));
        assert_eq!(m["raw_content"].as_str().unwrap().chars().count(), 10_000);
    }
}

backend_test! {
    async fn direct_messages_reach_only_their_participants(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let cat = app.create_user("cat@parley.test", "Cat", Role::Member).await;
        let one = app.send_direct(&ann, json!([bob.user_id.0]), "hi bob").await;
        let by_email = app.send_direct(&bob, json!(["ann@parley.test"]), "hi ann").await;
        let plain = app.post("/messages").as_user(&ann).param("type", "private").param("to", "bob@parley.test")
            .param("content", "plain list").send().await.success()["id"].as_i64().unwrap();
        let group = app.send_direct(&ann, json!([bob.user_id.0, cat.user_id.0]), "hi all").await;
        let me = app.send_direct(&ann, json!([ann.user_id.0]), "note to self").await;

        let bob_view = fetch(&app, &bob, json!([])).await;
        assert_eq!(ids(&bob_view), vec![one, by_email, plain, group]);
        let cat_view = fetch(&app, &cat, json!([])).await;
        assert_eq!(ids(&cat_view), vec![group]);
        let ann_dm_bob = fetch(&app, &ann, json!([["dm", [bob.user_id.0]]])).await;
        assert_eq!(ids(&ann_dm_bob), vec![one, by_email, plain]);
        let bob_dm_ann = fetch(&app, &bob, json!([{"operator": "dm", "operand": "ann@parley.test"}])).await;
        assert_eq!(ids(&bob_dm_ann), vec![one, by_email, plain]);
        let self_dm = fetch(&app, &ann, json!([["dm", [ann.user_id.0]]])).await;
        assert_eq!(ids(&self_dm), vec![me]);
        let with_cat = fetch(&app, &ann, json!([["dm-including", cat.user_id.0]])).await;
        assert_eq!(ids(&with_cat), vec![group]);
        let all_dms = fetch(&app, &ann, json!([["is", "dm"]])).await;
        assert_eq!(ids(&all_dms), vec![one, by_email, plain, group, me]);

        let m = &ann_dm_bob["messages"][0];
        assert_eq!(m["type"], "private");
        assert_eq!(m["subject"], "");
        let recipients: Vec<i64> = m["display_recipient"].as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect();
        assert_eq!(recipients.len(), 2);
        assert!(recipients.contains(&ann.user_id.0) && recipients.contains(&bob.user_id.0));
        // Messages in both directions of a conversation share its key (the other party's).
        assert_eq!(ann_dm_bob["messages"][0]["recipient_id"], ann_dm_bob["messages"][1]["recipient_id"]);
        assert_eq!(bob_dm_ann["messages"][0]["recipient_id"], bob_dm_ann["messages"][1]["recipient_id"]);
        assert_ne!(ann_dm_bob["messages"][0]["recipient_id"], self_dm["messages"][0]["recipient_id"]);

        app.get(&format!("/messages/{one}")).as_user(&cat).send().await.error(400, "BAD_REQUEST");
        let body = app.post("/messages").as_user(&ann).param("type", "direct").json_param("to", &json!([99999]))
            .param("content", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid user ID 99999");
        let body = app.post("/messages").as_user(&ann).param("type", "direct").json_param("to", &json!(["ghost@parley.test"]))
            .param("content", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid email 'ghost@parley.test'");
        let body = app.post("/messages").as_user(&ann).param("type", "direct").json_param("to", &json!([bob.user_id.0, "cat@parley.test"]))
            .param("content", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "to");
        let body = app.post("/messages").as_user(&ann).param("type", "direct").json_param("to", &json!([]))
            .param("content", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Message must have recipients");
        let id = cat.user_id;
        app.ctx.db.run(move |c| parley_storage::users::set_active(c, id, false)).await.unwrap();
        let body = app.post("/messages").as_user(&ann).param("type", "direct").json_param("to", &json!([cat.user_id.0]))
            .param("content", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "'cat@parley.test' is no longer using Zulip.");
    }
}

backend_test! {
    async fn history_and_private_channel_visibility(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let guest = app.create_user("guest@parley.test", "Gus", Role::Guest).await;
        app.create_channel(&ann, "public", &[&ann], &[]).await;
        app.create_channel(&ann, "private", &[&ann], &[("invite_only", json!(true))]).await;
        let public = app.send_to_channel(&ann, "public", "t", "public words").await;
        let private = app.send_to_channel(&ann, "private", "t", "private words").await;

        // Bob never received the public message but may read the channel's history.
        assert_eq!(ids(&fetch(&app, &bob, json!([])).await), Vec::<i64>::new());
        let page = fetch(&app, &bob, json!([["channel", "public"]])).await;
        assert_eq!(ids(&page), vec![public]);
        assert_eq!(page["messages"][0]["flags"], json!(["read", "historical"]));
        app.get(&format!("/messages/{public}")).as_user(&bob).send().await.success();

        // The private channel and its messages do not exist for him, nor for the guest.
        let body = app.get("/messages").as_user(&bob).param("anchor", "newest")
            .json_param("narrow", &json!([["channel", "private"]])).send().await.error(400, "BAD_NARROW");
        assert_eq!(body["desc"], "unknown channel private");
        let missing = app.get("/messages/999999").as_user(&bob).send().await.error(400, "BAD_REQUEST");
        let hidden = app.get(&format!("/messages/{private}")).as_user(&bob).send().await.error(400, "BAD_REQUEST");
        assert_eq!(missing["msg"], hidden["msg"]);
        let by_ids = app.get("/messages").as_user(&bob).json_param("message_ids", &json!([public, private]))
            .send().await.success();
        assert_eq!(ids(&by_ids), vec![public], "message_ids never reveals what one may not see");
        assert_eq!(ids(&fetch(&app, &bob, json!([["search", "words"]])).await), Vec::<i64>::new());
        assert_eq!(ids(&fetch(&app, &bob, json!([["channels", "public"]])).await), vec![public]);
        app.get(&format!("/messages/{public}")).as_user(&guest).send().await.error(400, "BAD_REQUEST");
        let page = app.get("/messages").as_user(&guest).param("anchor", "newest")
            .json_param("narrow", &json!([["channel", "public"]])).send().await;
        page.error(400, "BAD_NARROW");

        // Subscribing to a private channel with protected history shows only later messages.
        app.post("/users/me/subscriptions").as_user(&ann).json_param("subscriptions", &json!([{"name": "private"}]))
            .json_param("principals", &json!([bob.user_id.0])).send().await.success();
        assert_eq!(ids(&fetch(&app, &bob, json!([["channel", "private"]])).await), Vec::<i64>::new());
        let later = app.send_to_channel(&ann, "private", "t", "later").await;
        assert_eq!(ids(&fetch(&app, &bob, json!([["channel", "private"]])).await), vec![later]);
    }
}

backend_test! {
    async fn anchors_and_paging(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        app.create_channel(&ann, "log", &[&ann], &[]).await;
        let mut sent = Vec::new();
        for i in 0..10 {
            sent.push(app.send_to_channel(&ann, "log", "t", &format!("m{i}")).await);
        }
        let get = |anchor: String, before: i64, after: i64| {
            app.get("/messages").as_user(&ann).param("anchor", anchor).param("num_before", before).param("num_after", after).send()
        };
        let page = get(sent[4].to_string(), 2, 2).await.success();
        assert_eq!(ids(&page), sent[2..7].to_vec());
        assert_eq!(page["found_anchor"], true);
        assert_eq!(page["found_oldest"], false);
        assert_eq!(page["found_newest"], false);
        assert_eq!(page["anchor"], sent[4]);
        let page = get("oldest".into(), 0, 3).await.success();
        assert_eq!(ids(&page), sent[0..3].to_vec());
        assert_eq!(page["found_oldest"], true);
        let page = get("newest".into(), 3, 0).await.success();
        assert_eq!(ids(&page), sent[7..10].to_vec());
        assert_eq!(page["found_newest"], true);
        // Everything is unread, so first_unread is the oldest; num_after counts beyond it.
        let page = get("first_unread".into(), 0, 1).await.success();
        assert_eq!(ids(&page), sent[0..2].to_vec());
        assert_eq!(page["anchor"], sent[0]);
        let page = app.get("/messages").as_user(&ann).param("anchor", sent[4]).param("num_before", 0)
            .param("num_after", 2).param("include_anchor", "false").send().await.success();
        assert_eq!(ids(&page), sent[5..7].to_vec());
        app.get("/messages").as_user(&ann).param("anchor", sent[4]).param("num_before", 1)
            .param("num_after", 1).param("include_anchor", "false").send().await.error(400, "BAD_REQUEST");
        let page = app.get("/messages").as_user(&ann).json_param("message_ids", &json!([sent[3], sent[1], 999999]))
            .send().await.success();
        assert_eq!(ids(&page), vec![sent[1], sent[3]]);
        assert!(page.get("anchor").is_none());
        let page = app.get("/messages").as_user(&ann).json_param("message_ids", &json!([sent[3], sent[1]]))
            .json_param("narrow", &json!([["id", sent[3]]])).send().await.success();
        assert_eq!(ids(&page), vec![sent[3]]);
        let body = app.get("/messages").as_user(&ann).json_param("message_ids", &json!([sent[1]]))
            .param("anchor", "newest").send().await.error(400, "BAD_REQUEST");
        assert!(body["msg"].as_str().unwrap().starts_with("Unsupported parameter combination"));
        let body = get("sideways".into(), 1, 1).await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "anchor");
        let body = app.get("/messages").as_user(&ann).send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "anchor");
        get("newest".into(), 4000, 2000).await.error(400, "BAD_REQUEST");
        get("newest".into(), i64::MAX, 1).await.error(400, "BAD_REQUEST");
        let body = app.post("/messages/flags/narrow").as_user(&ann).param("anchor", "newest")
            .param("num_before", i64::MAX).param("num_after", i64::MAX).json_param("narrow", &json!([]))
            .param("op", "add").param("flag", "read").send().await.success();
        assert_eq!(body["processed_count"], 10, "huge ranges are clamped, not overflowed");
        app.post("/messages/flags/narrow").as_user(&ann).param("anchor", "newest")
            .param("num_before", i64::MIN).param("num_after", 0).json_param("narrow", &json!([]))
            .param("op", "add").param("flag", "read").send().await.error(400, "BAD_REQUEST");
        let body = get("newest".into(), -1, 0).await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "num_before");
    }
}

backend_test! {
    async fn narrows(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        app.create_channel(&ann, "dev", &[&ann, &bob], &[]).await;
        let a = app.send_to_channel(&ann, "dev", "Build", "the build is green https://ci.example.com").await;
        let b = app.send_to_channel(&bob, "dev", "build", "thanks @**Ann**").await;
        let c = app.send_to_channel(&bob, "dev", "✔ release", "shipped").await;
        let d = app.send_direct(&bob, json!([ann.user_id.0]), "psst").await;
        let n = |narrow: Value| fetch(&app, &ann, narrow);
        assert_eq!(ids(&n(json!([["topic", "BUILD"]])).await), vec![a, b], "topics are case-insensitive");
        assert_eq!(ids(&n(json!([["sender", bob.user_id.0]])).await), vec![b, c, d]);
        assert_eq!(ids(&n(json!([["sender", "bob@parley.test"], ["channel", "dev"]])).await), vec![b, c]);
        assert_eq!(ids(&n(json!([{"operator": "topic", "operand": "build", "negated": true}])).await), vec![c, d]);
        assert_eq!(ids(&n(json!([["is", "resolved"]])).await), vec![c]);
        assert_eq!(ids(&n(json!([["is", "mentioned"]])).await), vec![b]);
        assert_eq!(ids(&n(json!([["has", "link"]])).await), vec![a]);
        assert_eq!(ids(&n(json!([{"operator": "has", "operand": "link", "negated": true}])).await), vec![b, c, d]);
        assert_eq!(ids(&n(json!([["has", "image"]])).await), Vec::<i64>::new());
        assert_eq!(ids(&n(json!([["channel", "dev"], ["has", "attachment"]])).await), Vec::<i64>::new());
        assert_eq!(ids(&n(json!([["search", "GREEN"]])).await), vec![a]);
        assert_eq!(ids(&n(json!([["search", "builds greens"]])).await), vec![a], "stemmed, every word");
        assert_eq!(ids(&n(json!([["search", "release"]])).await), vec![c], "topics are searched too");
        assert_eq!(ids(&n(json!([["search", "green thanks"]])).await), Vec::<i64>::new());
        assert_eq!(ids(&n(json!([["search", "\"OR NOT"]])).await), Vec::<i64>::new(), "input is never query syntax");
        assert_eq!(ids(&n(json!([["id", b]])).await), vec![b]);
        // API clients' own messages start unread (the read_by_sender heuristic).
        assert_eq!(ids(&n(json!([["is", "unread"]])).await), vec![a, b, c, d]);
        assert_eq!(ids(&n(json!([["near", a], ["channel", "dev"]])).await), vec![a, b, c]);
        assert_eq!(ids(&n(json!([["with", a]])).await), vec![a, b]);
        let mentioned = n(json!([["id", b]])).await;
        assert_eq!(mentioned["messages"][0]["flags"], json!(["mentioned"]));
        for (narrow, desc) in [
            (json!([["channel", "nowhere"]]), "unknown channel nowhere"),
            (json!([["sender", "ghost@parley.test"]]), "unknown user ghost@parley.test"),
            (json!([["is", "asleep"]]), "unknown 'is' operand asleep"),
            (json!([["channel", "dev"], ["is", "dm"]]), "No message can be both a channel message and direct message"),
        ] {
            let body = app.get("/messages").as_user(&ann).param("anchor", "newest").json_param("narrow", &narrow)
                .send().await.error(400, "BAD_NARROW");
            assert_eq!(body["desc"], desc);
        }
        let body = app.get("/messages").as_user(&ann).param("anchor", "newest").param("narrow", "[[")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "narrow");
    }
}

backend_test! {
    async fn wildcard_mentions_need_permission_in_big_channels(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let mut crowd = vec![ann.clone()];
        for i in 0..15 {
            crowd.push(app.create_user(&format!("u{i}@parley.test"), &format!("User {i}"), Role::Member).await);
        }
        let members: Vec<&Account> = crowd.iter().collect();
        app.create_channel(&ann, "small", &members[..10], &[]).await;
        app.create_channel(&ann, "big", &members, &[]).await;
        let id = app.send_to_channel(&ann, "small", "t", "hey @**all**").await;
        let seen = app.get(&format!("/messages/{id}")).as_user(&crowd[3]).send().await.success();
        assert!(seen["message"]["flags"].as_array().unwrap().contains(&json!("wildcard_mentioned")));
        let body = app.post("/messages").as_user(&ann).param("type", "stream").param("to", "big")
            .param("topic", "t").param("content", "hey @**everyone**").send().await.error(400, "STREAM_WILDCARD_MENTION_NOT_ALLOWED");
        assert_eq!(body["msg"], "You do not have permission to use channel wildcard mentions in this channel.");
        // Administrators are in can_mention_many_users_group by default.
        app.post("/users/me/subscriptions").as_user(&app.owner).json_param("subscriptions", &json!([{"name": "big"}])).send().await.success();
        app.send_to_channel(&app.owner, "big", "t", "hey @**channel**").await;
        // A topic wildcard in a topic with few participants is fine for anyone.
        app.send_to_channel(&ann, "big", "t", "hey @**topic**").await;
        for member in &crowd[1..] {
            app.send_to_channel(member, "big", "busy", "me too").await;
        }
        let body = app.post("/messages").as_user(&ann).param("type", "stream").param("to", "big")
            .param("topic", "busy").param("content", "hey @**topic**").send().await.error(400, "TOPIC_WILDCARD_MENTION_NOT_ALLOWED");
        assert_eq!(body["msg"], "You do not have permission to use topic wildcard mentions in this topic.");
    }
}

backend_test! {
    async fn render_previews_html(app) {
        let body = app.post("/messages/render").as_user(&app.owner).param("content", "*hi* @**Owner**").send().await.success();
        let html = body["rendered"].as_str().unwrap();
        assert!(html.starts_with("<p><em>hi</em> "), "{html}");
        assert!(html.contains("user-mention"), "{html}");
    }
}

backend_test! {
    async fn search_results_are_highlighted(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        app.create_channel(&ann, "dev", &[&ann], &[]).await;
        let a = app.send_to_channel(&ann, "dev", "Builds & releases <v2>", "The **builds** are green; see [build log](https://ci.example.com/build)").await;
        let b = app.send_to_channel(&ann, "dev", "other", "nothing here").await;
        let body = fetch(&app, &ann, json!([["search", "build"]])).await;
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 1);
        let m = &messages[0];
        assert_eq!(m["id"], a);
        // Words in text nodes, by stem; the link's address is left alone.
        assert_eq!(
            m["match_content"],
            "<p>The <strong><span class=\"highlight\">builds</span></strong> are green; see \
             <a href=\"https://ci.example.com/build\" target=\"_blank\" rel=\"noopener noreferrer\"><span class=\"highlight\">build</span> log</a></p>"
        );
        assert_eq!(m["match_subject"], "<span class=\"highlight\">Builds</span> &amp; releases &lt;v2&gt;");
        // The same fields from GET /messages/matches_narrow, and none without a search.
        let body = app.get("/messages/matches_narrow").as_user(&ann).json_param("msg_ids", &json!([a, b]))
            .json_param("narrow", &json!([["search", "releasing"]])).send().await.success();
        let matched = body["messages"].as_object().unwrap();
        assert_eq!(matched.len(), 1);
        assert_eq!(matched[&a.to_string()]["match_subject"], "Builds &amp; <span class=\"highlight\">releases</span> &lt;v2&gt;");
        let plain = fetch(&app, &ann, json!([["channel", "dev"]])).await;
        assert!(plain["messages"][0].get("match_content").is_none());
        let by_ids = app.get("/messages").as_user(&ann).json_param("message_ids", &json!([a]))
            .json_param("narrow", &json!([["search", "green"]])).send().await.success();
        assert!(by_ids["messages"][0]["match_content"].as_str().unwrap().contains("<span class=\"highlight\">green</span>"));
    }
}

backend_test! {
    async fn search_pages_walk_the_matches_in_id_order_from_any_anchor(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        app.create_channel(&ann, "dev", &[&ann, &bob], &[]).await;
        // Public, Bob not subscribed: read through the channel's history.
        app.create_channel(&ann, "open", &[&ann], &[]).await;
        let mut deploys = Vec::new();
        let mut open_deploys = Vec::new();
        for i in 0..30 {
            let dev = app.send_to_channel(&ann, "dev", "t", &format!("note {i}{}", if i % 3 == 0 { " deploy" } else { "" })).await;
            if i % 3 == 0 {
                deploys.push(dev);
            }
            let open = app.send_to_channel(&ann, "open", "t", &format!("open {i}{}", if i % 5 == 0 { " deploys" } else { "" })).await;
            if i % 5 == 0 {
                open_deploys.push(open);
            }
        }
        let page = |anchor: Value, before: i64, after: i64, narrow: Value| {
            let app = &app;
            let bob = &bob;
            async move {
                let mut r = app.get("/messages").as_user(bob)
                    .param("num_before", before).param("num_after", after)
                    .json_param("narrow", &narrow);
                r = match anchor.as_str() {
                    Some(text) => r.param("anchor", text),
                    None => r.param("anchor", anchor.as_i64().unwrap()),
                };
                r.send().await.success()
            }
        };
        let search = json!([["search", "deploy"]]);
        assert_eq!(ids(&page(json!("newest"), 4, 0, search.clone()).await), deploys[6..].to_vec());
        assert_eq!(ids(&page(json!("oldest"), 0, 3, search.clone()).await), deploys[..3].to_vec());
        // From an ID between matches, both ways; the anchor itself only when it matches.
        let mid = deploys[5] - 1;
        let got = page(json!(mid), 2, 2, search.clone()).await;
        assert_eq!(ids(&got), vec![deploys[3], deploys[4], deploys[5], deploys[6]]);
        assert_eq!(ids(&page(json!(deploys[5]), 1, 1, search.clone()).await), deploys[4..7].to_vec());
        let got = page(json!(deploys[0]), 0, 100, search.clone()).await;
        assert_eq!(ids(&got), deploys);
        assert!(got["messages"][0]["match_content"].as_str().unwrap().contains("highlight"));
        // Unread first: every message is unread for Bob.
        assert_eq!(ids(&page(json!("first_unread"), 0, 2, search.clone()).await), deploys[..3].to_vec());
        // A channel Bob is not subscribed to: its history, searched (stemmed: "deploys").
        let narrow = json!([["channel", "open"], ["search", "deploy"]]);
        assert_eq!(ids(&page(json!("newest"), 100, 0, narrow.clone()).await), open_deploys);
        assert_eq!(ids(&page(json!(open_deploys[2]), 1, 1, narrow).await), open_deploys[1..4].to_vec());
    }
}

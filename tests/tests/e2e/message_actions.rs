//! What people do to messages: flags (star, read), marking read in bulk, reactions, topic lists
//! and deleting.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

async fn setup(app: &TestApp) -> (Account, Account) {
    let ann = app
        .create_user("ann@parley.test", "Ann", Role::Member)
        .await;
    let bob = app
        .create_user("bob@parley.test", "Bob", Role::Member)
        .await;
    app.post("/channels/create")
        .as_user(&ann)
        .param("name", "dev")
        .json_param("subscribers", &json!([ann.user_id.0, bob.user_id.0]))
        .send()
        .await
        .success();
    (ann, bob)
}

async fn flags_of(app: &TestApp, who: &Account, id: i64) -> Value {
    app.get(&format!("/messages/{id}"))
        .as_user(who)
        .send()
        .await
        .success()["message"]["flags"]
        .clone()
}

async fn unread(app: &TestApp, who: &Account) -> Vec<i64> {
    let page = app
        .get("/messages")
        .as_user(who)
        .param("anchor", "newest")
        .param("num_before", 100)
        .json_param("narrow", &json!([["is", "unread"]]))
        .send()
        .await
        .success();
    page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .collect()
}

backend_test! {
    async fn star_and_read_flags(app) {
        let (ann, bob) = setup(&app).await;
        let a = app.send_to_channel(&ann, "dev", "t", "one").await;
        let b = app.send_to_channel(&ann, "dev", "t", "two").await;
        let body = app.post("/messages/flags").as_user(&bob).json_param("messages", &json!([a, b]))
            .param("op", "add").param("flag", "starred").send().await.success();
        assert_eq!(body["messages"], json!([a, b]));
        assert_eq!(flags_of(&app, &bob, a).await, json!(["starred"]));
        app.post("/messages/flags").as_user(&bob).json_param("messages", &json!([a]))
            .param("op", "add").param("flag", "read").send().await.success();
        assert_eq!(flags_of(&app, &bob, a).await, json!(["read", "starred"]));
        app.post("/messages/flags").as_user(&bob).json_param("messages", &json!([a]))
            .param("op", "remove").param("flag", "starred").send().await.success();
        assert_eq!(flags_of(&app, &bob, a).await, json!(["read"]));
        let starred = app.get("/messages").as_user(&bob).param("anchor", "newest").param("num_before", 10)
            .json_param("narrow", &json!([["is", "starred"]])).send().await.success();
        assert_eq!(starred["messages"].as_array().unwrap().len(), 1);
        assert_eq!(flags_of(&app, &ann, a).await, json!([]), "flags are per user");

        for (op, flag, var, msg) in [
            ("add", "mentioned", "flag", "Flag not editable: 'mentioned'"),
            ("add", "sparkly", "flag", "Invalid flag: 'sparkly'"),
            ("toggle", "read", "op", "Invalid message flag operation: 'toggle'"),
        ] {
            let body = app.post("/messages/flags").as_user(&bob).json_param("messages", &json!([a]))
                .param("op", op).param("flag", flag).send().await.error(400, "BAD_REQUEST");
            assert_eq!(body["var_name"], var);
            assert_eq!(body["msg"], msg);
        }
        app.post("/messages/flags").as_user(&bob).json_param("messages", &json!([999999]))
            .param("op", "add").param("flag", "starred").send().await.error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn historical_messages_can_be_starred(app) {
        let (ann, _) = setup(&app).await;
        let cat = app.create_user("cat@parley.test", "Cat", Role::Member).await;
        let a = app.send_to_channel(&ann, "dev", "t", "before cat").await;
        assert_eq!(flags_of(&app, &cat, a).await, json!(["read", "historical"]));
        app.post("/messages/flags").as_user(&cat).json_param("messages", &json!([a]))
            .param("op", "add").param("flag", "starred").send().await.success();
        assert_eq!(flags_of(&app, &cat, a).await, json!(["read", "starred", "historical"]));
    }
}

backend_test! {
    async fn mark_read_in_bulk(app) {
        let (ann, bob) = setup(&app).await;
        let a = app.send_to_channel(&ann, "dev", "alpha", "1").await;
        let b = app.send_to_channel(&ann, "dev", "beta", "2").await;
        let c = app.send_to_channel(&ann, "dev", "beta", "3").await;
        let d = app.post("/messages").as_user(&ann).param("type", "direct").json_param("to", &json!([bob.user_id.0]))
            .param("content", "dm").send().await.success()["id"].as_i64().unwrap();
        assert_eq!(unread(&app, &bob).await, vec![a, b, c, d]);
        let channel = app.get("/get_stream_id").as_user(&bob).param("stream", "dev").send().await.success()["stream_id"].clone();
        app.post("/mark_topic_as_read").as_user(&bob).param("stream_id", &channel).param("topic_name", "BETA")
            .send().await.success();
        assert_eq!(unread(&app, &bob).await, vec![a, d]);
        let body = app.post("/mark_topic_as_read").as_user(&bob).param("stream_id", &channel).param("topic_name", "gamma")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "No such topic 'gamma'");
        app.post("/mark_stream_as_read").as_user(&bob).param("stream_id", &channel).send().await.success();
        assert_eq!(unread(&app, &bob).await, vec![d]);
        app.post("/mark_stream_as_read").as_user(&bob).param("stream_id", 99999).send().await.error(400, "BAD_REQUEST");
        let body = app.post("/mark_all_as_read").as_user(&bob).send().await.success();
        assert_eq!(body["complete"], true);
        assert_eq!(unread(&app, &bob).await, Vec::<i64>::new());

        // By narrow: mark the beta topic unread again.
        let body = app.post("/messages/flags/narrow").as_user(&bob).param("anchor", "oldest")
            .param("num_before", 0).param("num_after", 100).json_param("narrow", &json!([["topic", "beta"]]))
            .param("op", "remove").param("flag", "read").send().await.success();
        assert_eq!(body["processed_count"], 2);
        assert_eq!(body["updated_count"], 2);
        assert_eq!(body["first_processed_id"], b);
        assert_eq!(body["last_processed_id"], c);
        assert_eq!(body["found_newest"], true);
        assert_eq!(unread(&app, &bob).await, vec![b, c]);
        let body = app.post("/messages/flags/narrow").as_user(&bob).param("anchor", "oldest")
            .json_param("narrow", &json!([])).param("op", "add").param("flag", "read").send().await
            .error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "num_before");
    }
}

backend_test! {
    async fn reactions(app) {
        let (ann, bob) = setup(&app).await;
        let a = app.send_to_channel(&ann, "dev", "t", "react to me").await;
        let path = format!("/messages/{a}/reactions");
        app.post(&path).as_user(&bob).param("emoji_name", "smile").send().await.success();
        app.post(&path).as_user(&ann).param("emoji_name", "smile").send().await.success();
        let body = app.post(&path).as_user(&bob).param("emoji_name", "smile").send().await.error(400, "REACTION_ALREADY_EXISTS");
        assert_eq!(body["msg"], "Reaction already exists.");
        let body = app.post(&path).as_user(&bob).param("emoji_name", "definitely_not_an_emoji").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Emoji 'definitely_not_an_emoji' does not exist");
        app.post(&path).as_user(&bob).param("emoji_name", "smile").param("emoji_code", "zzzz").send().await.error(400, "BAD_REQUEST");
        app.post(&path).as_user(&bob).param("emoji_name", "smile").param("reaction_type", "realm_emoji").send().await.error(400, "BAD_REQUEST");
        let m = app.get(&format!("/messages/{a}")).as_user(&ann).send().await.success()["message"].clone();
        let reactions = m["reactions"].as_array().unwrap();
        assert_eq!(reactions.len(), 2);
        assert_eq!(reactions[0]["emoji_name"], "smile");
        assert_eq!(reactions[0]["reaction_type"], "unicode_emoji");
        assert_eq!(reactions[0]["user_id"], bob.user_id.0);
        let code = reactions[0]["emoji_code"].as_str().unwrap().to_owned();
        assert!(!code.is_empty() && code.chars().all(|c| c.is_ascii_hexdigit() || c == '-'), "{code}");
        let has_reaction = app.get("/messages").as_user(&ann).param("anchor", "newest").param("num_before", 5)
            .json_param("narrow", &json!([["has", "reaction"]])).send().await.success();
        assert_eq!(has_reaction["messages"].as_array().unwrap().len(), 1);

        app.delete(&path).as_user(&bob).param("emoji_name", "smile").send().await.success();
        let body = app.delete(&path).as_user(&bob).param("emoji_name", "smile").send().await.error(400, "REACTION_DOES_NOT_EXIST");
        assert_eq!(body["msg"], "Reaction doesn't exist.");
        app.delete(&path).as_user(&ann).param("emoji_code", &code).send().await.success();
        app.delete(&path).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        app.post("/messages/999999/reactions").as_user(&ann).param("emoji_name", "smile").send().await.error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn topics_of_a_channel(app) {
        let (ann, bob) = setup(&app).await;
        app.send_to_channel(&ann, "dev", "Alpha", "1").await;
        let beta = app.send_to_channel(&ann, "dev", "beta", "2").await;
        let alpha = app.send_to_channel(&bob, "dev", "alpha", "3").await;
        app.send_to_channel(&bob, "dev", "", "4").await;
        let general = app.get("/messages").as_user(&ann).param("anchor", "newest").send().await.success()["messages"].clone();
        let _ = general;
        let channel = app.get("/get_stream_id").as_user(&bob).param("stream", "dev").send().await.success()["stream_id"].as_i64().unwrap();
        let topics = app.get(&format!("/users/me/{channel}/topics")).as_user(&bob).send().await.success();
        let list = topics["topics"].as_array().unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0]["name"], "general chat");
        assert_eq!(list[1]["name"], "alpha", "named as in the latest message");
        assert_eq!(list[1]["max_id"], alpha);
        assert_eq!(list[2]["name"], "beta");
        assert_eq!(list[2]["max_id"], beta);
        let topics = app.get(&format!("/users/me/{channel}/topics")).as_user(&bob).param("allow_empty_topic_name", "true").send().await.success();
        assert_eq!(topics["topics"][0]["name"], "");
        app.get("/users/me/99999/topics").as_user(&bob).send().await.error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn deleting_messages(app) {
        let (ann, bob) = setup(&app).await;
        let a = app.send_to_channel(&ann, "dev", "t", "oops").await;
        let body = app.delete(&format!("/messages/{a}")).as_user(&bob).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "You don't have permission to delete this message");
        app.delete(&format!("/messages/{a}")).as_user(&ann).send().await.success();
        app.get(&format!("/messages/{a}")).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        app.delete(&format!("/messages/{a}")).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        // Senders may delete their own messages only for ten minutes by default.
        let late = app.send_to_channel(&ann, "dev", "t", "late").await;
        let day_ago = parley_actions::time::now() - 86_400;
        app.ctx.db.run(move |c| parley_storage::messages::set_date_sent(c, parley_domain::MessageId(late), day_ago)).await.unwrap();
        let body = app.delete(&format!("/messages/{late}")).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "The time limit for deleting this message has passed");
        app.delete(&format!("/messages/{late}")).as_user(&app.owner).send().await.success();
        // Administrators may delete anyone's messages.
        let b = app.send_to_channel(&bob, "dev", "t", "spam").await;
        app.delete(&format!("/messages/{b}")).as_user(&app.owner).send().await.success();
        let page = app.get("/messages").as_user(&ann).param("anchor", "newest").param("num_before", 10).send().await.success();
        assert_eq!(page["messages"], json!([]));
    }
}

backend_test! {
    async fn matches_narrow_read_receipts_and_topic_deletion(app) {
        let (ann, bob) = setup(&app).await;
        let a = app.send_to_channel(&ann, "dev", "t", "apples").await;
        let b = app.send_to_channel(&ann, "dev", "u", "pears").await;
        let body = app.get("/messages/matches_narrow").as_user(&bob).json_param("msg_ids", &json!([a, b, 99999]))
            .json_param("narrow", &json!([["topic", "t"]])).send().await.success();
        let matched = body["messages"].as_object().unwrap();
        assert_eq!(matched.len(), 1);
        assert_eq!(matched[&a.to_string()]["match_content"], "<p>apples</p>");
        assert_eq!(matched[&a.to_string()]["match_subject"], "t");

        let body = app.get(&format!("/messages/{a}/read_receipts")).as_user(&ann).send().await.success();
        assert_eq!(body["user_ids"], json!([]));
        app.post("/messages/flags").as_user(&bob).json_param("messages", &json!([a]))
            .param("op", "add").param("flag", "read").send().await.success();
        let body = app.get(&format!("/messages/{a}/read_receipts")).as_user(&ann).send().await.success();
        assert_eq!(body["user_ids"], json!([bob.user_id.0]));
        // `is:unread` among the given IDs: each message's own read state, for this reader.
        let unread_of = |who: &parley_tests::Account| {
            let request = app.get("/messages/matches_narrow").as_user(who).json_param("msg_ids", &json!([a, b]))
                .json_param("narrow", &json!([["is", "unread"]]));
            async move {
                let body = request.send().await.success();
                let mut ids: Vec<i64> = body["messages"].as_object().unwrap().keys().map(|k| k.parse().unwrap()).collect();
                ids.sort_unstable();
                ids
            }
        };
        assert_eq!(unread_of(&bob).await, [b], "Bob read a");
        assert_eq!(unread_of(&ann).await, [a, b], "Ann's own messages, sent through the API, are unread for her");

        let channel = app.get("/get_stream_id").as_user(&bob).param("stream", "dev").send().await.success()["stream_id"].clone();
        let path = format!("/streams/{channel}/delete_topic");
        let body = app.post(&path).as_user(&bob).param("topic_name", "t").send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization administrator");
        let body = app.post(&path).as_user(&app.owner).param("topic_name", "t").send().await.success();
        assert_eq!(body["complete"], true);
        app.get(&format!("/messages/{a}")).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        app.get(&format!("/messages/{b}")).as_user(&ann).send().await.success();
    }
}

backend_test! {
    async fn default_channels(app) {
        let (ann, _) = setup(&app).await;
        let channel = app.get("/get_stream_id").as_user(&ann).param("stream", "dev").send().await.success()["stream_id"].clone();
        app.post("/default_streams").as_user(&ann).param("stream_id", &channel).send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
        app.post("/default_streams").as_user(&app.owner).param("stream_id", &channel).send().await.success();
        let cat = app.create_user("cat@parley.test", "Cat", Role::Member).await;
        let subs = app.get("/users/me/subscriptions").as_user(&cat).send().await.success();
        let names: Vec<&str> = subs["subscriptions"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, vec!["dev", "general"]);
        app.delete("/default_streams").as_user(&app.owner).param("stream_id", &channel).send().await.success();
        let dan = app.create_user("dan@parley.test", "Dan", Role::Member).await;
        let subs = app.get("/users/me/subscriptions").as_user(&dan).send().await.success();
        assert_eq!(subs["subscriptions"].as_array().unwrap().len(), 1);
        let private = app.post("/channels/create").as_user(&app.owner).param("name", "p")
            .json_param("subscribers", &json!([])).json_param("invite_only", &json!(true)).send().await.success()["id"].clone();
        let body = app.post("/default_streams").as_user(&app.owner).param("stream_id", &private).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Private channels cannot be made default.");
    }
}

//! Typing notifications: direct and channel typing reach exactly the right queues, editing
//! notifications reach the message's audience, and bad requests are refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

async fn queue(app: &TestApp, who: &Account, capabilities: Value) -> String {
    app.post("/register")
        .as_user(who)
        .json_param("event_types", &json!(["typing", "typing_edit_message"]))
        .json_param("client_capabilities", &capabilities)
        .send()
        .await
        .success()["queue_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn events(app: &TestApp, who: &Account, queue_id: &str) -> Vec<Value> {
    app.events(who, queue_id, -1)
        .await
        .into_iter()
        .map(|mut e| {
            e.as_object_mut().unwrap().remove("id");
            e
        })
        .collect()
}

fn who(account: &Account) -> Value {
    json!({"user_id": account.user_id.0, "email": account.email})
}

async fn typing(
    app: &TestApp,
    sender: &Account,
    params: &[(&str, Value)],
) -> parley_tests::Response {
    let mut request = app.post("/typing").as_user(sender);
    for (name, value) in params {
        request = match value {
            Value::String(s) => request.param(name, s),
            other => request.json_param(name, other),
        };
    }
    request.send().await
}

backend_test! {
    async fn direct_typing_reaches_the_conversation_only(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let carol = app.create_user("carol@parley.test", "Carol", Role::Member).await;
        let ann_q = queue(&app, &ann, json!({})).await;
        let bob_q = queue(&app, &bob, json!({})).await;
        let carol_q = queue(&app, &carol, json!({})).await;

        typing(&app, &ann, &[("op", "start".into()), ("to", json!([bob.user_id.0]))]).await.success();
        let expected_start = json!({
            "type": "typing",
            "op": "start",
            "message_type": "direct",
            "sender": who(&ann),
            "recipients": [who(&bob), who(&ann)],
        });
        assert_eq!(events(&app, &bob, &bob_q).await, vec![expected_start.clone()]);
        // The sender is a recipient too.
        assert_eq!(events(&app, &ann, &ann_q).await, vec![expected_start.clone()]);

        typing(&app, &ann, &[("op", "stop".into()), ("type", "private".into()), ("to", json!([bob.user_id.0, ann.user_id.0]))]).await.success();
        let mut expected_stop = expected_start.clone();
        expected_stop["op"] = "stop".into();
        assert_eq!(events(&app, &bob, &bob_q).await, vec![expected_start.clone(), expected_stop]);
        assert!(events(&app, &carol, &carol_q).await.is_empty());

        // A group conversation reaches every member.
        typing(&app, &carol, &[("op", "start".into()), ("type", "direct".into()), ("to", json!([ann.user_id.0, bob.user_id.0]))]).await.success();
        let group = events(&app, &bob, &bob_q).await;
        assert_eq!(group.len(), 3);
        assert_eq!(group[2]["sender"], who(&carol));
        assert_eq!(group[2]["recipients"], json!([who(&ann), who(&bob), who(&carol)]));
        assert_eq!(events(&app, &carol, &carol_q).await.len(), 1);

        // A deactivated participant still names the conversation but is not told.
        let carol_id = carol.user_id;
        app.ctx.db.run(move |conn| parley_storage::users::set_active(conn, carol_id, false)).await.unwrap();
        typing(&app, &ann, &[("op", "start".into()), ("to", json!([carol.user_id.0]))]).await.success();
        let mine = events(&app, &ann, &ann_q).await;
        assert_eq!(mine.last().unwrap()["recipients"], json!([who(&carol), who(&ann)]));
    }
}

backend_test! {
    async fn channel_typing_reaches_capable_subscribers_only(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let carol = app.create_user("carol@parley.test", "Carol", Role::Member).await;
        let channel = app.create_channel(&ann, "design", &[&ann, &bob], &[]).await;
        let bob_capable = queue(&app, &bob, json!({"stream_typing_notifications": true})).await;
        let bob_old = queue(&app, &bob, json!({})).await;
        let carol_q = queue(&app, &carol, json!({"stream_typing_notifications": true})).await;
        let ann_q = queue(&app, &ann, json!({"stream_typing_notifications": true})).await;

        typing(&app, &ann, &[
            ("op", "start".into()), ("type", "stream".into()),
            ("stream_id", json!(channel)), ("topic", "colours".into()),
        ]).await.success();
        typing(&app, &ann, &[
            ("op", "stop".into()), ("type", "channel".into()),
            ("stream_id", json!(channel)), ("topic", "colours".into()),
        ]).await.success();
        let start = json!({
            "type": "typing",
            "op": "start",
            "message_type": "stream",
            "sender": who(&ann),
            "stream_id": channel,
            "topic": "colours",
        });
        let mut stop = start.clone();
        stop["op"] = "stop".into();
        assert_eq!(events(&app, &bob, &bob_capable).await, vec![start.clone(), stop]);
        assert_eq!(events(&app, &ann, &ann_q).await.len(), 2);
        assert!(events(&app, &bob, &bob_old).await.is_empty());
        assert!(events(&app, &carol, &carol_q).await.is_empty());

        // The empty topic shows under its display name to clients that do not handle it.
        let modern = queue(&app, &bob, json!({"stream_typing_notifications": true, "empty_topic_name": true})).await;
        typing(&app, &ann, &[
            ("op", "start".into()), ("type", "stream".into()),
            ("stream_id", json!(channel)), ("topic", "".into()),
        ]).await.success();
        assert_eq!(events(&app, &bob, &modern).await[0]["topic"], "");
        assert_eq!(events(&app, &bob, &bob_capable).await[2]["topic"], "general chat");
    }
}

backend_test! {
    async fn typing_parameters_are_checked(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let public = app.create_channel(&ann, "design", &[&ann], &[]).await;
        let private = app.create_channel(&ann, "secret", &[&ann], &[("invite_only", json!(true))]).await;
        let bob_q = queue(&app, &bob, json!({"stream_typing_notifications": true})).await;

        let body = typing(&app, &ann, &[("to", json!([bob.user_id.0]))]).await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "op");
        let body = typing(&app, &ann, &[("op", "typing".into()), ("to", json!([bob.user_id.0]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "op");
        let body = typing(&app, &ann, &[("op", "start".into()), ("type", "huddle".into()), ("to", json!([bob.user_id.0]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "type");
        let body = typing(&app, &ann, &[("op", "start".into())]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Missing 'to' argument");
        let body = typing(&app, &ann, &[("op", "start".into()), ("to", json!([]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Empty 'to' list");
        let body = typing(&app, &ann, &[("op", "start".into()), ("to", json!([bob.user_id.0, 999_999]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid user ID 999999");
        let body = typing(&app, &ann, &[("op", "start".into()), ("to", json!("bob"))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "to");

        let body = typing(&app, &ann, &[("op", "start".into()), ("type", "stream".into()), ("topic", "x".into())]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Missing 'stream_id' argument");
        let body = typing(&app, &ann, &[("op", "start".into()), ("type", "stream".into()), ("stream_id", json!(public))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Missing topic");
        let body = typing(&app, &ann, &[("op", "start".into()), ("type", "stream".into()), ("stream_id", json!(999_999)), ("topic", "x".into())]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid channel ID");
        // A private channel Bob is not in reads as nonexistent.
        let body = typing(&app, &bob, &[("op", "start".into()), ("type", "stream".into()), ("stream_id", json!(private)), ("topic", "x".into())]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid channel ID");

        // Nothing reached Bob from any refused request.
        assert!(events(&app, &bob, &bob_q).await.is_empty());
    }
}

backend_test! {
    async fn edit_typing_reaches_the_message_audience(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let carol = app.create_user("carol@parley.test", "Carol", Role::Member).await;
        let channel = app.create_channel(&ann, "design", &[&ann, &bob], &[]).await;
        let message = app.send_to_channel(&ann, "design", "colours", "hello").await;
        let dm = app.post("/messages").as_user(&ann)
            .param("type", "direct")
            .json_param("to", &json!([bob.user_id.0]))
            .param("content", "psst")
            .send().await.success()["id"].as_i64().unwrap();
        let bob_q = queue(&app, &bob, json!({})).await;
        let carol_q = queue(&app, &carol, json!({})).await;

        app.post(&format!("/messages/{message}/typing")).as_user(&ann).param("op", "start").send().await.success();
        app.post(&format!("/messages/{dm}/typing")).as_user(&ann).param("op", "stop").send().await.success();
        let mut ids = vec![ann.user_id.0, bob.user_id.0];
        ids.sort();
        assert_eq!(events(&app, &bob, &bob_q).await, vec![
            json!({
                "type": "typing_edit_message",
                "op": "start",
                "sender_id": ann.user_id.0,
                "message_id": message,
                "recipient": {"type": "channel", "channel_id": channel, "topic": "colours"},
            }),
            json!({
                "type": "typing_edit_message",
                "op": "stop",
                "sender_id": ann.user_id.0,
                "message_id": dm,
                "recipient": {"type": "direct", "user_ids": ids},
            }),
        ]);
        assert!(events(&app, &carol, &carol_q).await.is_empty());

        // Only someone who may edit the message may say they are editing it.
        let body = app.post(&format!("/messages/{message}/typing")).as_user(&bob).param("op", "start").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "You don't have permission to edit this message");
        let body = app.post(&format!("/messages/{dm}/typing")).as_user(&carol).param("op", "start").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid message(s)");
        let body = app.post("/messages/999999/typing").as_user(&ann).param("op", "start").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid message(s)");
        let body = app.post(&format!("/messages/{message}/typing")).as_user(&ann).send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "op");
        let body = app.post(&format!("/messages/{message}/typing")).as_user(&ann).param("op", "go").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "op");
        assert_eq!(events(&app, &bob, &bob_q).await.len(), 2);
    }
}

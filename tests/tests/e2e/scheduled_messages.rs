//! Scheduled messages and reminders: scheduling checks a message as sending would, the list,
//! the snapshot and the events follow every change, and the scheduler sends each one once at
//! its time through the ordinary send path (failing visibly when the send is refused then).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_actions::scheduler::do_deliver_due;
use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

async fn schedule(
    app: &TestApp,
    who: &Account,
    params: &[(&str, Value)],
) -> parley_tests::Response {
    let mut request = app.post("/scheduled_messages").as_user(who);
    for (name, value) in params {
        request = match value {
            Value::String(text) => request.param(name, text),
            other => request.json_param(name, other),
        };
    }
    request.send().await
}

async fn scheduled(app: &TestApp, who: &Account) -> Vec<Value> {
    app.get("/scheduled_messages")
        .as_user(who)
        .send()
        .await
        .success()["scheduled_messages"]
        .as_array()
        .unwrap()
        .clone()
}

async fn newest_message(app: &TestApp, who: &Account, narrow: Value) -> Value {
    let page = app
        .get("/messages")
        .as_user(who)
        .param("anchor", "newest")
        .param("num_before", 1)
        .param("num_after", 0)
        .json_param("narrow", &narrow)
        .send()
        .await
        .success();
    page["messages"][0].clone()
}

backend_test! {
    async fn scheduling_listing_editing_and_cancelling(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let dev = app.create_channel(&ann, "dev", &[&ann, &bob], &[]).await;
        let queue = app.register(&ann, &[("event_types", json!(["scheduled_messages"]))]).await;
        let queue_id = queue["queue_id"].as_str().unwrap().to_owned();
        assert_eq!(queue["scheduled_messages"], json!([]));
        let later = now() + 3600;

        let channel_id = schedule(&app, &ann, &[("type", json!("stream")), ("to", json!(dev)), ("topic", json!("plans")),
            ("content", json!("**later**")), ("scheduled_delivery_timestamp", json!(later + 60))]).await.success()["scheduled_message_id"].as_i64().unwrap();
        let direct_id = schedule(&app, &ann, &[("type", json!("direct")), ("to", json!([bob.user_id.0])),
            ("content", json!("psst")), ("scheduled_delivery_timestamp", json!(later))]).await.success()["scheduled_message_id"].as_i64().unwrap();
        let list = scheduled(&app, &ann).await;
        assert_eq!(list.len(), 2);
        // By delivery time.
        assert_eq!(list[0]["scheduled_message_id"], direct_id);
        assert_eq!(list[0]["type"], "private");
        assert_eq!(list[0]["to"], json!([bob.user_id.0]));
        assert!(list[0].get("topic").is_none());
        assert_eq!(list[1], json!({"scheduled_message_id": channel_id, "type": "stream", "to": dev, "topic": "plans",
            "content": "**later**", "rendered_content": "<p><strong>later</strong></p>", "scheduled_delivery_timestamp": later + 60, "failed": false}));
        assert!(scheduled(&app, &bob).await.is_empty(), "only the owner sees them");
        let snapshot = app.register(&ann, &[("event_types", json!(["scheduled_messages"]))]).await;
        assert_eq!(snapshot["scheduled_messages"].as_array().unwrap(), &list);

        // Checked as a send: the same errors as POST /messages, and a time in the future.
        let body = schedule(&app, &ann, &[("type", json!("stream")), ("to", json!(dev)), ("topic", json!("t")),
            ("content", json!("x")), ("scheduled_delivery_timestamp", json!(now() - 10))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "scheduled_delivery_timestamp");
        schedule(&app, &ann, &[("type", json!("stream")), ("to", json!(999_999)), ("topic", json!("t")),
            ("content", json!("x")), ("scheduled_delivery_timestamp", json!(later))]).await.error(400, "STREAM_DOES_NOT_EXIST");
        schedule(&app, &ann, &[("type", json!("stream")), ("to", json!(dev)), ("topic", json!("t")),
            ("content", json!("  ")), ("scheduled_delivery_timestamp", json!(later))]).await.error(400, "BAD_REQUEST");
        let secret = app.create_channel(&bob, "secret", &[&bob], &[("invite_only", json!(true))]).await;
        let refused = schedule(&app, &ann, &[("type", json!("stream")), ("to", json!(secret)), ("topic", json!("t")),
            ("content", json!("x")), ("scheduled_delivery_timestamp", json!(later))]).await;
        assert_eq!(refused.status, 400, "{}", refused.text);
        assert_eq!(scheduled(&app, &ann).await.len(), 2, "refused ones are not kept");
        // Nothing was sent while checking.
        let dev_newest = newest_message(&app, &bob, json!([["channel", "dev"]])).await;
        assert_ne!(dev_newest["content"], "<p><strong>later</strong></p>");

        // Editing: content and time; the type needs a recipient.
        app.patch(&format!("/scheduled_messages/{channel_id}")).as_user(&ann).param("content", "sooner")
            .param("scheduled_delivery_timestamp", later - 60).send().await.success();
        app.patch(&format!("/scheduled_messages/{channel_id}")).as_user(&ann).param("type", "direct")
            .send().await.error(400, "BAD_REQUEST");
        app.patch(&format!("/scheduled_messages/{channel_id}")).as_user(&bob).param("content", "mine")
            .send().await.error(404, "BAD_REQUEST");
        let list = scheduled(&app, &ann).await;
        assert_eq!(list[0]["scheduled_message_id"], channel_id);
        assert_eq!(list[0]["rendered_content"], "<p>sooner</p>");

        // Cancelling.
        app.delete(&format!("/scheduled_messages/{direct_id}")).as_user(&ann).send().await.success();
        let body = app.delete(&format!("/scheduled_messages/{direct_id}")).as_user(&ann).send().await.error(404, "BAD_REQUEST");
        assert_eq!(body["msg"], "Scheduled message does not exist");
        assert_eq!(scheduled(&app, &ann).await.len(), 1);

        let events = app.events_of(&ann, &queue_id, &["scheduled_messages"]).await;
        let ops: Vec<&str> = events.iter().map(|e| e["op"].as_str().unwrap()).collect();
        assert_eq!(ops, ["add", "add", "update", "remove"]);
        assert_eq!(events[2]["scheduled_message"]["content"], "sooner");
        assert_eq!(events[3]["scheduled_message_id"], direct_id);
    }
}

backend_test! {
    async fn the_scheduler_sends_each_message_once_at_its_time(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let dev = app.create_channel(&ann, "dev", &[&ann, &bob], &[]).await;
        let queue = app.register(&ann, &[("event_types", json!(["scheduled_messages", "message"]))]).await;
        let queue_id = queue["queue_id"].as_str().unwrap().to_owned();
        let at = now() + 3600;
        let id = schedule(&app, &ann, &[("type", json!("channel")), ("to", json!(dev)), ("topic", json!("plans")),
            ("content", json!("sent by the scheduler")), ("scheduled_delivery_timestamp", json!(at))]).await
            .success()["scheduled_message_id"].as_i64().unwrap();

        assert_eq!(do_deliver_due(&app.ctx, at - 1).await.unwrap(), 0, "not due yet");
        assert_eq!(do_deliver_due(&app.ctx, at).await.unwrap(), 1);
        assert_eq!(do_deliver_due(&app.ctx, at + 10).await.unwrap(), 0, "never twice");
        let sent = newest_message(&app, &bob, json!([["channel", "dev"], ["topic", "plans"]])).await;
        assert_eq!(sent["content"], "<p>sent by the scheduler</p>");
        assert_eq!(sent["sender_id"], ann.user_id.0);
        assert!(scheduled(&app, &ann).await.is_empty());
        let events = app.events_of(&ann, &queue_id, &["scheduled_messages", "message"]).await;
        let kinds: Vec<String> = events.iter().map(|e| format!("{}:{}", e["type"].as_str().unwrap(), e["op"].as_str().unwrap_or(""))).collect();
        assert_eq!(kinds, ["scheduled_messages:add", "message:", "scheduled_messages:remove"]);
        assert_eq!(events[2]["scheduled_message_id"], id);
    }
}

backend_test! {
    async fn a_send_refused_at_its_time_is_kept_as_failed_and_explained(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let dev = app.create_channel(&bob, "dev", &[&ann, &bob], &[("invite_only", json!(true))]).await;
        let at = now() + 3600;
        let id = schedule(&app, &ann, &[("type", json!("stream")), ("to", json!(dev)), ("topic", json!("t")),
            ("content", json!("too late")), ("scheduled_delivery_timestamp", json!(at))]).await
            .success()["scheduled_message_id"].as_i64().unwrap();
        // Ann leaves the private channel before the time comes.
        app.delete("/users/me/subscriptions").as_user(&ann).json_param("subscriptions", &json!(["dev"])).send().await.success();
        let queue = app.register(&ann, &[("event_types", json!(["scheduled_messages"]))]).await;
        let queue_id = queue["queue_id"].as_str().unwrap().to_owned();
        assert_eq!(do_deliver_due(&app.ctx, at).await.unwrap(), 1);
        assert_eq!(do_deliver_due(&app.ctx, at + 60).await.unwrap(), 0, "a failed message is not retried");
        let list = scheduled(&app, &ann).await;
        assert_eq!(list.len(), 1);
        assert_eq!(list[0]["scheduled_message_id"], id);
        assert_eq!(list[0]["failed"], true);
        let events = app.events_of(&ann, &queue_id, &["scheduled_messages"]).await;
        assert_eq!(events[0]["op"], "update");
        assert_eq!(events[0]["scheduled_message"]["failed"], true);
        let notice = newest_message(&app, &ann, json!([["is", "dm"]])).await;
        assert_eq!(notice["sender_email"], "notification-bot@zulip.com");
        assert!(notice["content"].as_str().unwrap().contains("was not sent"), "{notice}");
        let bobs_view = newest_message(&app, &bob, json!([["channel", "dev"]])).await;
        assert_ne!(bobs_view["content"], "<p>too late</p>");
        // Editing a failed message schedules it again.
        app.patch(&format!("/scheduled_messages/{id}")).as_user(&ann).json_param("to", &json!([bob.user_id.0]))
            .param("type", "direct").send().await.success();
        assert_eq!(scheduled(&app, &ann).await[0]["failed"], false);
        assert_eq!(do_deliver_due(&app.ctx, at + 120).await.unwrap(), 1);
        let dm = newest_message(&app, &bob, json!([["dm", ann.user_id.0]])).await;
        assert_eq!(dm["content"], "<p>too late</p>");
    }
}

backend_test! {
    async fn reminders_quote_the_message_from_the_notification_bot(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        app.create_channel(&ann, "dev", &[&ann, &bob], &[]).await;
        let secret = app.create_channel(&bob, "secret", &[&bob], &[("invite_only", json!(true))]).await;
        let target = app.send_to_channel(&bob, "dev", "plans", "ship on **Friday**").await;
        let hidden = app.send_to_channel(&bob, "secret", "x", "not for Ann").await;
        let _ = secret;
        let queue = app.register(&ann, &[("event_types", json!(["reminders"]))]).await;
        let queue_id = queue["queue_id"].as_str().unwrap().to_owned();
        let at = now() + 600;
        let id = app.post("/reminders").as_user(&ann).param("message_id", target).param("scheduled_delivery_timestamp", at)
            .param("note", "check the release").send().await.success()["reminder_id"].as_i64().unwrap();
        app.post("/reminders").as_user(&ann).param("message_id", hidden).param("scheduled_delivery_timestamp", at)
            .send().await.error(400, "BAD_REQUEST");
        let body = app.post("/reminders").as_user(&ann).param("message_id", target).param("scheduled_delivery_timestamp", now() - 1)
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "scheduled_delivery_timestamp");
        let list = app.get("/reminders").as_user(&ann).send().await.success()["reminders"].clone();
        assert_eq!(list.as_array().unwrap().len(), 1);
        assert_eq!(list[0]["reminder_id"], id);
        assert_eq!(list[0]["reminder_target_message_id"], target);
        assert_eq!(list[0]["to"], json!([ann.user_id.0]));
        let content = list[0]["content"].as_str().unwrap();
        assert!(content.contains("check the release") && content.contains("ship on **Friday**"), "{content}");
        assert!(scheduled(&app, &ann).await.is_empty(), "reminders are not scheduled messages");
        let snapshot = app.register(&ann, &[("event_types", json!(["reminders"]))]).await;
        assert_eq!(snapshot["reminders"], list);

        assert_eq!(do_deliver_due(&app.ctx, at).await.unwrap(), 1);
        let reminder = newest_message(&app, &ann, json!([["is", "dm"]])).await;
        assert_eq!(reminder["sender_email"], "notification-bot@zulip.com");
        let html = reminder["content"].as_str().unwrap();
        assert!(html.contains("<blockquote>") && html.contains("<strong>Friday</strong>"), "{html}");
        assert_eq!(app.get("/reminders").as_user(&ann).send().await.success()["reminders"], json!([]));

        let second = app.post("/reminders").as_user(&ann).param("message_id", target).param("scheduled_delivery_timestamp", at + 60)
            .send().await.success()["reminder_id"].as_i64().unwrap();
        app.delete(&format!("/reminders/{second}")).as_user(&bob).send().await.error(404, "BAD_REQUEST");
        app.delete(&format!("/reminders/{second}")).as_user(&ann).send().await.success();
        let body = app.delete(&format!("/reminders/{second}")).as_user(&ann).send().await.error(404, "BAD_REQUEST");
        assert_eq!(body["msg"], "Reminder does not exist");
        let events = app.events_of(&ann, &queue_id, &["reminders"]).await;
        let ops: Vec<&str> = events.iter().map(|e| e["op"].as_str().unwrap()).collect();
        assert_eq!(ops, ["add", "remove", "add", "remove"]);
    }
}

backend_test! {
    async fn a_send_that_breaks_fails_that_message_and_the_later_ones_still_go(app) {
        use diesel::connection::SimpleConnection;
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let at = now() + 3600;
        let mut ids = Vec::new();
        for content in ["poison", "after the poison"] {
            ids.push(schedule(&app, &ann, &[("type", json!("direct")), ("to", json!([bob.user_id.0])),
                ("content", json!(content)), ("scheduled_delivery_timestamp", json!(at))]).await
                .success()["scheduled_message_id"].as_i64().unwrap());
        }
        // The database refuses the first message's insert: a failure that is no refusal of
        // the request (as a constraint or a broken disk would be).
        let trigger = match app.backend {
            parley_storage::testing::Backend::Sqlite => "CREATE TRIGGER poison BEFORE INSERT ON messages \
                WHEN NEW.content = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END;",
            parley_storage::testing::Backend::Postgres(_) => "CREATE FUNCTION poison() RETURNS trigger AS $$ \
                BEGIN IF NEW.content = 'poison' THEN RAISE EXCEPTION 'poisoned'; END IF; RETURN NEW; END $$ \
                LANGUAGE plpgsql; CREATE TRIGGER poison BEFORE INSERT ON messages \
                FOR EACH ROW EXECUTE FUNCTION poison();",
        };
        app.ctx.db.run(move |conn| Ok::<_, parley_storage::StorageError>(conn.batch_execute(trigger)?)).await.unwrap();
        assert_eq!(do_deliver_due(&app.ctx, at).await.unwrap(), 2, "both handled in one tick");
        assert_eq!(do_deliver_due(&app.ctx, at + 60).await.unwrap(), 0, "the failed one is not retried");
        let list = scheduled(&app, &ann).await;
        assert_eq!(list.len(), 1, "{list:?}");
        assert_eq!(list[0]["scheduled_message_id"], ids[0]);
        assert_eq!(list[0]["failed"], true);
        let dm = newest_message(&app, &bob, json!([["dm", ann.user_id.0]])).await;
        assert_eq!(dm["content"], "<p>after the poison</p>");
    }
}

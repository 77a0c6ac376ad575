//! The bounds on one request's work (`parley_domain::limits`): every list parameter over its
//! limit is a 400 naming the parameter and the limit, and requests at the limits work on both
//! backends (a narrow of many terms used to be a 500).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use actix_web::http::Method;
use parley_domain::limits::{
    MAX_DRAFTS, MAX_LIST_ITEMS, MAX_MESSAGE_IDS, MAX_NARROW_TERMS, MAX_PRINCIPALS, MAX_RECIPIENTS,
    MAX_SUBSCRIPTION_CHANGES, MAX_SUBSCRIPTION_CHANNELS, MAX_TOPIC_DELETE_BATCH,
};
use parley_tests::{busy_backend_test, TestApp};
use serde_json::{json, Value};
use std::time::Instant;

fn ids(n: usize) -> Value {
    json!((1..=n as i64).collect::<Vec<_>>())
}

fn names(n: usize) -> Value {
    json!((0..n).map(|i| format!("c{i}")).collect::<Vec<_>>())
}

fn channels(n: usize) -> Value {
    json!((0..n)
        .map(|i| json!({"name": format!("c{i}")}))
        .collect::<Vec<_>>())
}

/// A narrow of `n` terms that combine (negated topics).
fn narrow(n: usize) -> Value {
    json!((0..n)
        .map(|i| json!({"operator": "topic", "operand": format!("not {i}"), "negated": true}))
        .collect::<Vec<_>>())
}

fn drafts(n: usize) -> Value {
    json!((0..n)
        .map(|i| json!({"type": "", "to": [], "topic": "", "content": format!("d{i}")}))
        .collect::<Vec<_>>())
}

/// Sends `method path` with these JSON parameters and expects the limit error.
async fn over_limit(
    app: &TestApp,
    method: Method,
    path: &str,
    params: &[(&str, Value)],
    var_name: &str,
    limit: usize,
) {
    let mut request = app.request(method.clone(), path).as_user(&app.owner);
    for (name, value) in params {
        request = match value {
            Value::String(text) => request.param(name, text),
            other => request.json_param(name, other),
        };
    }
    let body = request.send().await.error(400, "BAD_REQUEST");
    assert_eq!(body["var_name"], var_name, "{method} {path}: {body}");
    let msg = body["msg"].as_str().unwrap();
    assert!(
        msg.contains(var_name) && msg.contains(&limit.to_string()),
        "{method} {path}: {msg}"
    );
}

busy_backend_test! {
    async fn list_parameters_over_their_limit_are_400s_naming_parameter_and_limit(app) {
        let sub = "/users/me/subscriptions";
        let n = MAX_SUBSCRIPTION_CHANNELS + 1;
        over_limit(&app, Method::POST, sub, &[("subscriptions", channels(n))], "subscriptions", MAX_SUBSCRIPTION_CHANNELS).await;
        over_limit(&app, Method::DELETE, sub, &[("subscriptions", names(n))], "subscriptions", MAX_SUBSCRIPTION_CHANNELS).await;
        over_limit(&app, Method::POST, sub, &[("subscriptions", channels(1)), ("principals", ids(MAX_PRINCIPALS + 1))], "principals", MAX_PRINCIPALS).await;
        over_limit(&app, Method::DELETE, sub, &[("subscriptions", names(1)), ("principals", ids(MAX_PRINCIPALS + 1))], "principals", MAX_PRINCIPALS).await;
        // Channels × users.
        let n = MAX_SUBSCRIPTION_CHANGES / MAX_PRINCIPALS + 1;
        over_limit(&app, Method::POST, sub, &[("subscriptions", channels(n)), ("principals", ids(MAX_PRINCIPALS))], "principals", MAX_SUBSCRIPTION_CHANGES).await;
        over_limit(&app, Method::DELETE, sub, &[("subscriptions", names(n)), ("principals", ids(MAX_PRINCIPALS))], "principals", MAX_SUBSCRIPTION_CHANGES).await;
        over_limit(&app, Method::POST, "/channels/create", &[("name", "big".into()), ("subscribers", ids(MAX_PRINCIPALS + 1))], "subscribers", MAX_PRINCIPALS).await;
        over_limit(&app, Method::GET, "/users", &[("user_ids", ids(MAX_LIST_ITEMS + 1))], "user_ids", MAX_LIST_ITEMS).await;
        over_limit(&app, Method::POST, "/messages/flags", &[("messages", ids(MAX_MESSAGE_IDS + 1)), ("op", "add".into()), ("flag", "read".into())], "messages", MAX_MESSAGE_IDS).await;
        over_limit(&app, Method::GET, "/messages", &[("message_ids", ids(MAX_MESSAGE_IDS + 1))], "message_ids", MAX_MESSAGE_IDS).await;
        over_limit(&app, Method::POST, "/drafts", &[("drafts", drafts(MAX_DRAFTS + 1))], "drafts", MAX_DRAFTS).await;
        over_limit(&app, Method::POST, "/messages", &[("type", "direct".into()), ("to", ids(MAX_RECIPIENTS + 1)), ("content", "hi".into())], "to", MAX_RECIPIENTS).await;
        over_limit(&app, Method::POST, "/typing", &[("op", "start".into()), ("to", ids(MAX_RECIPIENTS + 1))], "to", MAX_RECIPIENTS).await;
        // Narrows: terms, and lists nested in a term.
        let long = narrow(MAX_NARROW_TERMS + 1);
        over_limit(&app, Method::GET, "/messages", &[("anchor", "newest".into()), ("narrow", long.clone())], "narrow", MAX_NARROW_TERMS).await;
        over_limit(&app, Method::POST, "/messages/flags/narrow", &[("anchor", "newest".into()), ("num_before", "10".into()), ("num_after", "0".into()), ("op", "add".into()), ("flag", "read".into()), ("narrow", long.clone())], "narrow", MAX_NARROW_TERMS).await;
        over_limit(&app, Method::GET, "/messages/matches_narrow", &[("msg_ids", ids(1)), ("narrow", long.clone())], "narrow", MAX_NARROW_TERMS).await;
        over_limit(&app, Method::POST, "/register", &[("narrow", json!((0..MAX_NARROW_TERMS + 1).map(|i| json!(["topic", format!("t{i}")])).collect::<Vec<_>>()))], "narrow", MAX_NARROW_TERMS).await;
        let wide_dm = json!([{"operator": "dm", "operand": ids(MAX_LIST_ITEMS + 1)}]);
        over_limit(&app, Method::GET, "/messages", &[("anchor", "newest".into()), ("narrow", wide_dm)], "narrow", MAX_LIST_ITEMS).await;
    }
}

busy_backend_test! {
    async fn narrows_at_the_limit_work_on_both_backends(app) {
        let owner = app.owner.clone();
        app.create_channel(&owner, "dev", &[&owner], &[]).await;
        let id = app.send_to_channel(&owner, "dev", "t", "hello").await;
        // A thousand terms used to be a 500 (SQLite's expression depth, PostgreSQL's bind
        // limit); the limit keeps every allowed narrow well inside both.
        let full = narrow(MAX_NARROW_TERMS);
        let page = app.get("/messages").as_user(&owner).param("anchor", "newest")
            .param("num_before", 10).json_param("narrow", &full).send().await.success();
        assert_eq!(page["messages"][0]["id"], id);
        app.post("/messages/flags/narrow").as_user(&owner).param("anchor", "newest")
            .param("num_before", 10).param("num_after", 0).param("op", "add").param("flag", "starred")
            .json_param("narrow", &full).send().await.success();
        let dm = json!([{"operator": "dm", "operand": ids(MAX_LIST_ITEMS)}]);
        let response = app.get("/messages").as_user(&owner).param("anchor", "newest")
            .json_param("narrow", &dm).send().await;
        assert!((200..500).contains(&response.status), "{}", response.text);
        // And a thousand terms is now a 400, not a 500.
        app.post("/messages/flags/narrow").as_user(&owner).param("anchor", "newest")
            .param("num_before", 10).param("num_after", 0).param("op", "add").param("flag", "starred")
            .json_param("narrow", &narrow(1000)).send().await.error(400, "BAD_REQUEST");
    }
}

busy_backend_test! {
    async fn delete_topic_deletes_one_batch_per_request(app) {
        let owner = app.owner.clone();
        app.create_channel(&owner, "dev", &[&owner], &[]).await;
        let total = MAX_TOPIC_DELETE_BATCH + 5;
        for n in 0..total {
            app.send_to_channel(&owner, "dev", "big", &format!("m{n}")).await;
        }
        let keep = app.send_to_channel(&owner, "dev", "other", "stays").await;
        let channel = app.get("/get_stream_id").as_user(&owner).param("stream", "dev").send().await
            .success()["stream_id"].as_i64().unwrap();
        let path = format!("/streams/{channel}/delete_topic");
        let body = app.post(&path).as_user(&owner).param("topic_name", "big").send().await.success();
        assert_eq!(body["complete"], false);
        let left = app.get("/messages").as_user(&owner).param("anchor", "oldest").param("num_after", 100)
            .json_param("narrow", &json!([["channel", "dev"], ["topic", "big"]])).send().await.success();
        let left: Vec<&str> = left["messages"].as_array().unwrap().iter()
            .map(|m| m["content"].as_str().unwrap()).collect();
        // The newest went first; the oldest five remain.
        assert_eq!(left, ["<p>m0</p>", "<p>m1</p>", "<p>m2</p>", "<p>m3</p>", "<p>m4</p>"]);
        let body = app.post(&path).as_user(&owner).param("topic_name", "big").send().await.success();
        assert_eq!(body["complete"], true);
        app.get(&format!("/messages/{keep}")).as_user(&owner).send().await.success();
    }
}

/// The largest subscribes the limits allow, timed: each is one transaction, so this is about
/// how long it holds SQLite's writer (the figures in `docs/api-coverage.md`, "Limits").
#[actix_web::test]
async fn the_largest_allowed_subscribes_hold_the_writer_briefly() {
    for backend in parley_tests::Backend::available() {
        let app =
            TestApp::start_with_limits(backend.clone(), parley_tests::lifted_api_limit()).await;
        let owner = app.owner.clone();
        let users = app.create_users_fast("sub", MAX_PRINCIPALS).await;
        let shapes = [
            (
                MAX_SUBSCRIPTION_CHANNELS,
                MAX_SUBSCRIPTION_CHANGES / MAX_SUBSCRIPTION_CHANNELS,
            ),
            (MAX_SUBSCRIPTION_CHANGES / MAX_PRINCIPALS, MAX_PRINCIPALS),
        ];
        for (shape, (channel_count, user_count)) in shapes.into_iter().enumerate() {
            let principals: Vec<i64> = users[..user_count].iter().map(|u| u.user_id.0).collect();
            for existing in [false, true] {
                let prefix = format!("s{shape}{existing}-");
                let list = json!((0..channel_count)
                    .map(|i| json!({"name": format!("{prefix}{i}")}))
                    .collect::<Vec<_>>());
                if existing {
                    app.post("/users/me/subscriptions")
                        .as_user(&owner)
                        .json_param("subscriptions", &list)
                        .send()
                        .await
                        .success();
                }
                let started = Instant::now();
                let subscribe = app
                    .post("/users/me/subscriptions")
                    .as_user(&owner)
                    .json_param("subscriptions", &list)
                    .json_param("principals", &json!(principals))
                    .send();
                // Meanwhile another writer tries every 10 ms; its longest wait is how long the
                // subscribe kept the writer (on SQLite; PostgreSQL has no single writer).
                let done = std::cell::Cell::new(false);
                let probe = async {
                    let mut longest = std::time::Duration::ZERO;
                    while !done.get() {
                        let asked = Instant::now();
                        app.ctx
                            .db
                            .transaction(|_| Ok::<_, parley_storage::StorageError>(()))
                            .await
                            .unwrap();
                        longest = longest.max(asked.elapsed());
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    }
                    longest
                };
                let subscribe = async {
                    let response = subscribe.await;
                    done.set(true);
                    response
                };
                let (response, waited) = futures_util::future::join(subscribe, probe).await;
                let took = started.elapsed();
                let body = response.success();
                assert_eq!(body["subscribed"].as_object().unwrap().len(), user_count);
                eprintln!("largest subscribe: {channel_count} {} channels x {user_count} users on {backend:?}: request {took:?}, another writer waited up to {waited:?}",
                    if existing { "existing" } else { "new" });
                assert!(took.as_secs() < 30, "{took:?}");
            }
        }
    }
}

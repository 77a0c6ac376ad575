//! The organization cache (`parley_actions::realm_cache`): a change of a setting, a linkifier, a
//! custom emoji, a group's members, a person's or a channel's name applies to the very next
//! request, on the node that made it and, on PostgreSQL, on another node as soon as that node
//! has delivered the change's event.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, Backend, TestApp};
use serde_json::{json, Value};
use std::time::Duration;

async fn render(app: &TestApp, who: &Account, content: &str) -> String {
    app.post("/messages/render")
        .as_user(who)
        .param("content", content)
        .send()
        .await
        .success()["rendered"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn add_linkifier(app: &TestApp, url_template: &str) -> i64 {
    app.post("/realm/filters")
        .as_user(&app.owner)
        .param("pattern", "#(?P<id>[0-9]+)")
        .param("url_template", url_template)
        .send()
        .await
        .success()["id"]
        .as_i64()
        .unwrap()
}

async fn add_emoji(app: &TestApp, who: &Account, name: &str) -> parley_tests::Response {
    app.post(&format!("/realm/emoji/{name}"))
        .as_user(who)
        .files(&[("e.png", "image/png", &parley_tests::images::png(32, 32))])
        .send()
        .await
}

backend_test! {
    async fn linkifier_changes_apply_to_the_next_rendering_and_send(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        app.create_channel(&app.owner, "town", &[&ann], &[]).await;
        // Fill the cache with "no linkifiers" first.
        assert!(!render(&app, &ann, "fix #8").await.contains("href"));
        let id = add_linkifier(&app, "https://a.example/{id}").await;
        assert!(render(&app, &ann, "fix #8").await.contains("https://a.example/8"));
        app.patch(&format!("/realm/filters/{id}")).as_user(&app.owner)
            .param("pattern", "#(?P<id>[0-9]+)").param("url_template", "https://b.example/{id}")
            .send().await.success();
        let sent = app.send_to_channel(&ann, "town", "t", "fix #9").await;
        let message = app.get(&format!("/messages/{sent}")).as_user(&ann).send().await.success();
        assert!(message["message"]["content"].as_str().unwrap().contains("https://b.example/9"), "{message}");
        app.delete(&format!("/realm/filters/{id}")).as_user(&app.owner).send().await.success();
        assert!(!render(&app, &ann, "fix #8").await.contains("href"));
    }
}

backend_test! {
    async fn custom_emoji_changes_apply_to_the_next_rendering(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        assert!(!render(&app, &ann, ":tick:").await.contains("<img"));
        add_emoji(&app, &ann, "tick").await.success();
        let html = render(&app, &ann, ":tick:").await;
        assert!(html.contains("<img") && html.contains("emoji"), "{html}");
        app.delete("/realm/emoji/tick").as_user(&ann).send().await.success();
        assert!(!render(&app, &ann, ":tick:").await.contains("<img"));
    }
}

backend_test! {
    async fn setting_and_group_changes_apply_to_the_next_check(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        app.create_channel(&app.owner, "town", &[&ann], &[]).await;
        // Empty topics allowed, then not: the send right after the change is refused.
        app.post("/messages").as_user(&ann).param("type", "stream").param("to", "town")
            .param("topic", "").param("content", "a").send().await.success();
        app.patch("/realm").as_user(&app.owner).param("topics_policy", "disable_empty_topic")
            .send().await.success();
        app.post("/messages").as_user(&ann).param("type", "stream").param("to", "town")
            .param("topic", "").param("content", "b").send().await.error(400, "BAD_REQUEST");

        // Only the group "crew" may add custom emoji; Ann may as soon as she joins it.
        let crew = app.post("/user_groups/create").as_user(&app.owner)
            .param("name", "crew").param("description", "c")
            .json_param("members", &json!([app.owner.user_id.0]))
            .send().await.success()["group_id"].as_i64().unwrap();
        app.patch("/realm").as_user(&app.owner)
            .json_param("can_add_custom_emoji_group", &json!({"new": crew}))
            .send().await.success();
        add_emoji(&app, &ann, "first").await.error(400, "BAD_REQUEST");
        app.post(&format!("/user_groups/{crew}/members")).as_user(&app.owner)
            .json_param("add", &json!([ann.user_id.0])).send().await.success();
        add_emoji(&app, &ann, "second").await.success();
        app.post(&format!("/user_groups/{crew}/members")).as_user(&app.owner)
            .json_param("delete", &json!([ann.user_id.0])).send().await.success();
        add_emoji(&app, &ann, "third").await.error(400, "BAD_REQUEST");
    }
}

async fn flags(app: &TestApp, who: &Account, id: i64) -> Vec<String> {
    let message = app
        .get(&format!("/messages/{id}"))
        .as_user(who)
        .send()
        .await
        .success();
    serde_json::from_value(message["message"]["flags"].clone()).unwrap()
}

fn has(flags: &[String], flag: &str) -> bool {
    flags.iter().any(|f| f == flag)
}

backend_test! {
    async fn alert_word_mute_and_topic_setting_changes_apply_to_the_next_send(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        app.create_channel(&app.owner, "town", &[&ann, &bob], &[]).await;
        // Each change comes after a send that read (and cached) what it changes.
        let before = app.send_to_channel(&bob, "town", "t", "deploy today").await;
        assert!(!has(&flags(&app, &ann, before).await, "has_alert_word"));
        app.post("/users/me/alert_words").as_user(&ann)
            .json_param("alert_words", &json!(["deploy"])).send().await.success();
        let after = app.send_to_channel(&bob, "town", "t", "deploy again").await;
        assert!(has(&flags(&app, &ann, after).await, "has_alert_word"));
        app.delete("/users/me/alert_words").as_user(&ann)
            .json_param("alert_words", &json!(["deploy"])).send().await.success();
        let removed = app.send_to_channel(&bob, "town", "t", "deploy once more").await;
        assert!(!has(&flags(&app, &ann, removed).await, "has_alert_word"));

        // A muted sender's messages arrive read, and unread again once unmuted.
        assert!(!has(&flags(&app, &ann, removed).await, "read"));
        let mute = format!("/users/me/muted_users/{}", bob.user_id.0);
        app.post(&mute).as_user(&ann).send().await.success();
        let muted = app.send_to_channel(&bob, "town", "t", "hello").await;
        assert!(has(&flags(&app, &ann, muted).await, "read"));
        app.delete(&mute).as_user(&ann).send().await.success();
        let unmuted = app.send_to_channel(&bob, "town", "t", "hello again").await;
        assert!(!has(&flags(&app, &ann, unmuted).await, "read"));

        // Starting a topic follows it (the default policy), and no longer once Bob says never.
        let send = |topic: &'static str| {
            app.post("/messages").as_user(&bob).param("type", "stream").param("to", "town")
                .param("topic", topic).param("content", "x").send()
        };
        assert_eq!(send("first").await.success()["automatic_new_visibility_policy"], 3);
        app.patch("/settings").as_user(&bob)
            .param("automatically_follow_topics_policy", "4").send().await.success();
        let sent = send("second").await.success();
        assert!(sent.get("automatic_new_visibility_policy").is_none(), "{sent}");
    }
}

backend_test! {
    async fn a_callers_changed_role_and_name_apply_to_their_next_request(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let me = || app.get("/users/me").as_user(&ann).send();
        let before = me().await.success();
        assert_eq!((before["role"].as_i64(), before["full_name"].as_str()), (Some(400), Some("Ann")));
        // Ann is kept as authenticated; an administrator changes her.
        app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner)
            .param("role", "200").param("full_name", "Ann Admin").send().await.success();
        let after = me().await.success();
        assert_eq!((after["role"].as_i64(), after["full_name"].as_str()), (Some(200), Some("Ann Admin")));
        // And what she may do follows: an administrator's setting is hers to change now.
        app.patch("/realm").as_user(&ann).param("description", "by Ann").send().await.success();
    }
}

/// The sender's name and the channel's name of `reader`'s newest message, as a page shows them.
async fn names_shown(app: &TestApp, reader: &Account) -> (String, String) {
    let m = app.newest_message(reader).await;
    let name = |field: &str| m[field].as_str().expect(field).to_owned();
    (name("sender_full_name"), name("display_recipient"))
}

backend_test! {
    async fn renamed_people_and_channels_show_in_the_next_page(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let town = app.create_channel(&app.owner, "town", &[&ann, &bob], &[]).await;
        app.send_to_channel(&ann, "town", "t", "hello").await;
        assert_eq!(names_shown(&app, &bob).await, ("Ann".into(), "town".into()));
        // Both kept now; an administrator renames them, one at a time.
        app.patch(&format!("/streams/{town}")).as_user(&app.owner)
            .param("new_name", "city").send().await.success();
        assert_eq!(names_shown(&app, &bob).await, ("Ann".into(), "city".into()));
        app.patch(&format!("/users/{}", ann.user_id.0)).as_user(&app.owner)
            .param("full_name", "Ann Lee").send().await.success();
        assert_eq!(names_shown(&app, &bob).await, ("Ann Lee".into(), "city".into()));
        // And a new message's event names them as its page does.
        let q = app.register_queue(&bob, &[("event_types", json!(["message"]))]).await;
        app.send_to_channel(&ann, "city", "t", "again").await;
        let events = app.events_of(&bob, &q, &["message"]).await;
        assert_eq!(events[0]["message"]["sender_full_name"], "Ann Lee");
        assert_eq!(events[0]["message"]["display_recipient"], "city");
    }
}

/// The IDs of the messages whose events reached the queue.
async fn messages_queued(app: &TestApp, who: &Account, queue: &str) -> Vec<i64> {
    let events = app.events_of(who, queue, &["message"]).await;
    events
        .iter()
        .filter_map(|e| e["message"]["id"].as_i64())
        .collect()
}

backend_test! {
    async fn a_channels_recipients_follow_subscriptions_from_one_send_to_the_next(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let cat = app.create_user("cat@parley.test", "Cat", Role::Member).await;
        app.create_channel(&ann, "town", &[&ann, &bob], &[]).await;
        let params = [("event_types", json!(["message"]))];
        let bob_q = app.register_queue(&bob, &params).await;
        let cat_q = app.register_queue(&cat, &params).await;
        let first = app.send_to_channel(&ann, "town", "t", "one").await;
        // The recipients are kept now (on SQLite); Cat joins and Bob leaves.
        app.post("/users/me/subscriptions").as_user(&cat)
            .json_param("subscriptions", &json!([{"name": "town"}])).send().await.success();
        app.delete("/users/me/subscriptions").as_user(&bob)
            .json_param("subscriptions", &json!(["town"])).send().await.success();
        let second = app.send_to_channel(&ann, "town", "t", "two").await;
        assert_eq!(messages_queued(&app, &bob, &bob_q).await, vec![first], "the one who left");
        assert_eq!(messages_queued(&app, &cat, &cat_q).await, vec![second], "the new subscriber");
    }
}

/// Waits until `node` has delivered an event of `kind` to the queue.
async fn wait_for_event(node: &TestApp, who: &Account, queue: &str, kind: &str) {
    for _ in 0..100 {
        if !node.events_of(who, queue, &[kind]).await.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no {kind} event arrived");
}

/// Two nodes on one PostgreSQL database: node 1 has the organization cached; changes made
/// through node 0 apply on node 1 once node 1 has delivered their events.
#[actix_web::test]
async fn another_nodes_changes_apply_once_their_event_arrived() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let nodes = TestApp::start_cluster(backend, 2).await;
    let (zero, one) = (&nodes[0], &nodes[1]);
    let ann = zero
        .create_user("ann@parley.test", "Ann", Role::Member)
        .await;
    let params = [
        (
            "event_types",
            json!(["realm_linkifiers", "realm_emoji", "realm", "alert_words"]),
        ),
        (
            "client_capabilities",
            json!({"linkifier_url_template": true}),
        ),
    ];

    // Linkifiers.
    assert!(!render(one, &ann, "fix #8").await.contains("href"));
    let q = one.register_queue(&ann, &params).await;
    add_linkifier(zero, "https://a.example/{id}").await;
    wait_for_event(one, &ann, &q, "realm_linkifiers").await;
    assert!(render(one, &ann, "fix #8")
        .await
        .contains("https://a.example/8"));

    // Custom emoji.
    assert!(!render(one, &ann, ":tick:").await.contains("<img"));
    let q = one.register_queue(&ann, &params).await;
    add_emoji(zero, &ann, "tick").await.success();
    wait_for_event(one, &ann, &q, "realm_emoji").await;
    assert!(render(one, &ann, ":tick:").await.contains("<img"));

    // An alert word, which a send reads from the cache.
    let town = one.create_channel(&one.owner, "town", &[&ann], &[]).await;
    let before = one
        .send_to_channel(&one.owner, "town", "t", "deploy today")
        .await;
    assert!(!has(&flags(one, &ann, before).await, "has_alert_word"));
    let q = one.register_queue(&ann, &params).await;
    zero.post("/users/me/alert_words")
        .as_user(&ann)
        .json_param("alert_words", &json!(["deploy"]))
        .send()
        .await
        .success();
    wait_for_event(one, &ann, &q, "alert_words").await;
    let after = one
        .send_to_channel(&one.owner, "town", "t", "deploy again")
        .await;
    assert!(has(&flags(one, &ann, after).await, "has_alert_word"));

    // A caller node 1 keeps as authenticated, deactivated through node 0.
    let bob = zero
        .create_user("bob@parley.test", "Bob", Role::Member)
        .await;
    one.get("/users/me").as_user(&bob).send().await.success();
    let q = one
        .register_queue(&ann, &[("event_types", json!(["realm_user"]))])
        .await;
    zero.delete(&format!("/users/{}", bob.user_id.0))
        .as_user(&zero.owner)
        .send()
        .await
        .success();
    wait_for_event(one, &ann, &q, "realm_user").await;
    one.get("/users/me")
        .as_user(&bob)
        .send()
        .await
        .error(401, "USER_DEACTIVATED");

    // A channel's name, which pages show from the cache.
    one.send_to_channel(&one.owner, "town", "t", "named").await;
    assert_eq!(names_shown(one, &ann).await.1, "town");

    let q = one
        .register_queue(&ann, &[("event_types", json!(["stream"]))])
        .await;
    zero.patch(&format!("/streams/{town}"))
        .as_user(&zero.owner)
        .param("new_name", "city")
        .send()
        .await
        .success();
    wait_for_event(one, &ann, &q, "stream").await;
    assert_eq!(names_shown(one, &ann).await.1, "city");

    // A setting checked on send.
    fn empty<'a>(node: &'a TestApp, ann: &Account) -> parley_tests::RequestBuilder<'a> {
        node.post("/messages")
            .as_user(ann)
            .param("type", "stream")
            .param("to", "city")
            .param("topic", "")
            .param("content", "x")
    }
    empty(one, &ann).send().await.success();
    let q = one.register_queue(&ann, &params).await;
    zero.patch("/realm")
        .as_user(&zero.owner)
        .param("topics_policy", "disable_empty_topic")
        .send()
        .await
        .success();
    wait_for_event(one, &ann, &q, "realm").await;
    let refused: Value = empty(one, &ann).send().await.error(400, "BAD_REQUEST");
    assert!(refused["msg"].as_str().is_some());
}

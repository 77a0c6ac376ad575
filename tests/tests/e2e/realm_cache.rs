//! The organization cache (`parley_actions::realm_cache`): a change of a setting, a linkifier, a
//! custom emoji or a group's members applies to the very next request, on the node that made it
//! and, on PostgreSQL, on another node as soon as that node has delivered the change's event.

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
            json!(["realm_linkifiers", "realm_emoji", "realm"]),
        ),
        (
            "client_capabilities",
            json!({"linkifier_url_template": true}),
        ),
    ];

    // Linkifiers.
    assert!(!render(one, &ann, "fix #8").await.contains("href"));
    let q = one.register(&ann, &params).await["queue_id"]
        .as_str()
        .unwrap()
        .to_owned();
    add_linkifier(zero, "https://a.example/{id}").await;
    wait_for_event(one, &ann, &q, "realm_linkifiers").await;
    assert!(render(one, &ann, "fix #8")
        .await
        .contains("https://a.example/8"));

    // Custom emoji.
    assert!(!render(one, &ann, ":tick:").await.contains("<img"));
    let q = one.register(&ann, &params).await["queue_id"]
        .as_str()
        .unwrap()
        .to_owned();
    add_emoji(zero, &ann, "tick").await.success();
    wait_for_event(one, &ann, &q, "realm_emoji").await;
    assert!(render(one, &ann, ":tick:").await.contains("<img"));

    // A setting checked on send.
    one.create_channel(&one.owner, "town", &[&ann], &[]).await;
    fn empty<'a>(node: &'a TestApp, ann: &Account) -> parley_tests::RequestBuilder<'a> {
        node.post("/messages")
            .as_user(ann)
            .param("type", "stream")
            .param("to", "town")
            .param("topic", "")
            .param("content", "x")
    }
    empty(one, &ann).send().await.success();
    let q = one.register(&ann, &params).await["queue_id"]
        .as_str()
        .unwrap()
        .to_owned();
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

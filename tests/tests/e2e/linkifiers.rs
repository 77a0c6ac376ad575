//! Linkifiers: `GET/PATCH /realm/linkifiers`, `POST /realm/filters`,
//! `PATCH/DELETE /realm/filters/{filter_id}`, their `realm_linkifiers` events (only for clients
//! with `linkifier_url_template`), the register snapshot, and links in messages and topics.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

const ISSUE: &str = "#(?P<id>[0-9]+)";
const ISSUE_URL: &str = "https://github.com/zulip/zulip/issues/{id}";

async fn add(app: &TestApp, who: &Account, pattern: &str, url_template: &str) -> i64 {
    app.post("/realm/filters")
        .as_user(who)
        .param("pattern", pattern)
        .param("url_template", url_template)
        .send()
        .await
        .success()["id"]
        .as_i64()
        .unwrap()
}

async fn list(app: &TestApp, who: &Account) -> Value {
    app.get("/realm/linkifiers")
        .as_user(who)
        .send()
        .await
        .success()["linkifiers"]
        .clone()
}

fn ids(list: &Value) -> Vec<i64> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_i64().unwrap())
        .collect()
}

async fn reorder(app: &TestApp, order: Value) -> parley_tests::Response {
    app.patch("/realm/linkifiers")
        .as_user(&app.owner)
        .json_param("ordered_linkifier_ids", &order)
        .send()
        .await
}

backend_test! {
    async fn linkifiers_are_added_listed_updated_and_removed(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        assert_eq!(list(&app, &ann).await, json!([]));
        let a = add(&app, &app.owner, &format!("  {ISSUE} "), &format!(" {ISSUE_URL}\n")).await;
        let b = add(&app, &app.owner, "PR (?P<pr>[0-9]+)", "https://example.com/~user/web#view_type=type&id={pr}").await;
        let got = list(&app, &ann).await;
        assert_eq!(got, json!([
            {"id": a, "pattern": ISSUE, "url_template": ISSUE_URL},
            {"id": b, "pattern": "PR (?P<pr>[0-9]+)", "url_template": "https://example.com/~user/web#view_type=type&id={pr}"},
        ]));

        app.patch(&format!("/realm/filters/{a}")).as_user(&app.owner)
            .param("pattern", "#(?P<id>[0-9]{2,8})")
            .param("url_template", "https://trac.example.com/ticket/{id}")
            .send().await.success();
        let got = list(&app, &ann).await;
        assert_eq!(ids(&got), vec![a, b], "an update keeps the linkifier's place");
        assert_eq!(got[0]["pattern"], "#(?P<id>[0-9]{2,8})");
        assert_eq!(got[0]["url_template"], "https://trac.example.com/ticket/{id}");
        // Keeping its own pattern is no clash.
        app.patch(&format!("/realm/filters/{a}")).as_user(&app.owner)
            .param("pattern", "#(?P<id>[0-9]{2,8})")
            .param("url_template", "https://trac.example.com/t/{id}")
            .send().await.success();

        app.delete(&format!("/realm/filters/{a}")).as_user(&app.owner).send().await.success();
        assert_eq!(ids(&list(&app, &ann).await), vec![b]);

        for path in [format!("/realm/filters/{a}"), "/realm/filters/999999".to_owned()] {
            let body = app.delete(&path).as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
            assert_eq!(body["msg"], "Linkifier not found.");
            let body = app.patch(&path).as_user(&app.owner)
                .param("pattern", ISSUE).param("url_template", ISSUE_URL)
                .send().await.error(400, "BAD_REQUEST");
            assert_eq!(body["msg"], "Linkifier not found.");
        }
        let body = app.delete("/realm/filters/abc").as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "filter_id", "{body}");
        assert_eq!(ids(&list(&app, &ann).await), vec![b]);
    }
}

backend_test! {
    async fn invalid_linkifiers_are_refused_with_the_reference_messages(app) {
        let cases: [(&str, &str, &str, &str); 10] = [
            ("", ISSUE_URL, "pattern", "pattern must not be empty"),
            (ISSUE, "  ", "url_template", "url_template must not be empty"),
            ("(foo", "https://e.com/", "pattern", "Bad regular expression: unclosed group"),
            (r"ZUL-(?P<id>\d????)", ISSUE_URL, "pattern", "Bad regular expression: bad repetition operator"),
            (ISSUE, "https://e.com/{id", "url_template", "Invalid URL template."),
            (ISSUE, "https://e.com/{//id}", "url_template", "Invalid URL template."),
            (r"ZUL-(?P<id>\d+)", "$fgfg", "url_template", "Group 'id' in linkifier pattern is not present in URL template."),
            (r"ZUL-(?P<id>\d+)", "https://e.com/{hello}", "url_template", "Group 'hello' in URL template is not present in linkifier pattern."),
            (r"ZUL-(?P<id>\d+)-(?P<hello>\d+)", "https://e.com/{hello}", "url_template", "Group 'id' in linkifier pattern is not present in URL template."),
            (r"(?<=x)(?P<id>\d+)", ISSUE_URL, "pattern", ""),
        ];
        for (pattern, template, var, msg) in cases {
            let body = app.post("/realm/filters").as_user(&app.owner)
                .param("pattern", pattern).param("url_template", template)
                .send().await.error(400, "BAD_REQUEST");
            assert_eq!(body["var_name"], var, "{pattern} {template}: {body}");
            if msg.is_empty() {
                assert!(body["msg"].as_str().unwrap().starts_with("Bad regular expression: "), "{body}");
            } else {
                assert_eq!(body["msg"], msg, "{pattern} {template}");
            }
        }
        let long = "a".repeat(1001);
        let body = app.post("/realm/filters").as_user(&app.owner)
            .param("pattern", &long).param("url_template", "https://e.com/")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "pattern is too long (limit: 1000 characters)");
        let body = app.post("/realm/filters").as_user(&app.owner)
            .param("pattern", r"(?P<id>\w{1000}){50}").param("url_template", ISSUE_URL)
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Bad regular expression: pattern is too large");
        let body = app.post("/realm/filters").as_user(&app.owner)
            .param("pattern", ISSUE).send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "url_template");

        // The full RFC 6570 syntax is accepted.
        add(&app, &app.owner,
            r"FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8});(?P<chapter>[0-9]{2,3});(?P<fragment>[a-z]{2,8})",
            "https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}").await;

        let a = add(&app, &app.owner, ISSUE, ISSUE_URL).await;
        let body = app.post("/realm/filters").as_user(&app.owner)
            .param("pattern", format!(" {ISSUE}")).param("url_template", "https://other.example/{id}")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Realm filter with this Realm and Pattern already exists.");
        assert_eq!(body["var_name"], "pattern");
        let b = add(&app, &app.owner, "T(?P<id>[0-9]+)", "https://e.com/{id}").await;
        let body = app.patch(&format!("/realm/filters/{b}")).as_user(&app.owner)
            .param("pattern", ISSUE).param("url_template", ISSUE_URL)
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Realm filter with this Realm and Pattern already exists.");
        let body = app.patch(&format!("/realm/filters/{b}")).as_user(&app.owner)
            .param("pattern", "T(?P<id>[0-9]+)").param("url_template", "{id")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid URL template.");
        let got = list(&app, &app.owner).await;
        assert_eq!(got.as_array().unwrap().len(), 3, "failed requests changed nothing");
        assert_eq!(got[1]["id"], a);
        assert_eq!(got[2]["url_template"], "https://e.com/{id}");
    }
}

backend_test! {
    async fn only_administrators_manage_linkifiers(app) {
        let admin = app.create_user("adm@parley.test", "Adm", Role::Administrator).await;
        let moderator = app.create_user("mod@parley.test", "Mod", Role::Moderator).await;
        let member = app.create_user("mem@parley.test", "Mem", Role::Member).await;
        let guest = app.create_user("gue@parley.test", "Gue", Role::Guest).await;
        let id = add(&app, &admin, ISSUE, ISSUE_URL).await;
        for who in [&moderator, &member, &guest] {
            let body = app.post("/realm/filters").as_user(who)
                .param("pattern", "X(?P<id>[0-9]+)").param("url_template", ISSUE_URL)
                .send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
            assert_eq!(body["msg"], "Must be an organization administrator");
            app.patch(&format!("/realm/filters/{id}")).as_user(who)
                .param("pattern", ISSUE).param("url_template", "https://e.com/{id}")
                .send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
            app.delete(&format!("/realm/filters/{id}")).as_user(who)
                .send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
            app.patch("/realm/linkifiers").as_user(who)
                .json_param("ordered_linkifier_ids", &json!([id]))
                .send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
            // Everyone reads them.
            assert_eq!(ids(&list(&app, who).await), vec![id]);
        }
        assert_eq!(list(&app, &member).await[0]["url_template"], ISSUE_URL);
        app.delete(&format!("/realm/filters/{id}")).as_user(&admin).send().await.success();
        app.get("/realm/linkifiers").send().await.error(401, "UNAUTHORIZED");
    }
}

backend_test! {
    async fn linkifiers_are_reordered(app) {
        reorder(&app, json!([])).await.success();
        let body = reorder(&app, json!([1])).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "The ordered list must enumerate all existing linkifiers exactly once");
        let a = add(&app, &app.owner, "1#(?P<id>[123])", "https://filter.com/foo/{id}").await;
        let b = add(&app, &app.owner, "2#(?P<id>[123])", "https://filter.com/bar/{id}").await;
        let c = add(&app, &app.owner, "3#(?P<id>[123])", "https://filter.com/baz/{id}").await;
        assert_eq!(ids(&list(&app, &app.owner).await), vec![a, b, c]);

        reorder(&app, json!([c, b, a])).await.success();
        assert_eq!(ids(&list(&app, &app.owner).await), vec![c, b, a]);
        let d = add(&app, &app.owner, "3#123", "https://example.com").await;
        assert_eq!(ids(&list(&app, &app.owner).await), vec![c, b, a, d], "new linkifiers go last");
        app.delete(&format!("/realm/filters/{a}")).as_user(&app.owner).send().await.success();
        assert_eq!(ids(&list(&app, &app.owner).await), vec![c, b, d], "deleting keeps the order");

        for (order, msg) in [
            (json!([a, d, c, b]), "The ordered list must enumerate all existing linkifiers exactly once"),
            (json!([d, c, b, d]), "The ordered list must not contain duplicated linkifiers"),
            (json!([d, c]), "The ordered list must enumerate all existing linkifiers exactly once"),
            (json!([]), "The ordered list must enumerate all existing linkifiers exactly once"),
        ] {
            let body = reorder(&app, order).await.error(400, "BAD_REQUEST");
            assert_eq!(body["msg"], msg);
            assert_eq!(body["var_name"], "ordered_linkifier_ids");
        }
        for bad in ["[1,", "\"1\"", "[\"a\"]"] {
            let body = app.patch("/realm/linkifiers").as_user(&app.owner)
                .param("ordered_linkifier_ids", bad).send().await;
            assert_eq!(body.status, 400, "{}", body.text);
            assert_eq!(body.json["var_name"], "ordered_linkifier_ids", "{}", body.text);
        }
        app.patch("/realm/linkifiers").as_user(&app.owner).send().await
            .error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(ids(&list(&app, &app.owner).await), vec![c, b, d], "refused orders changed nothing");
    }
}

backend_test! {
    async fn events_and_snapshots_only_for_clients_with_the_capability(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let first = add(&app, &app.owner, ISSUE, ISSUE_URL).await;
        let types = json!(["realm_linkifiers", "realm_filters"]);
        let modern = app.register(&ann, &[
            ("event_types", types.clone()),
            ("client_capabilities", json!({"linkifier_url_template": true})),
        ]).await;
        assert_eq!(modern["realm_linkifiers"], json!([{"id": first, "pattern": ISSUE, "url_template": ISSUE_URL}]));
        assert_eq!(modern["realm_filters"], json!([]), "the legacy format is always empty");
        let legacy = app.register(&ann, &[("event_types", types.clone())]).await;
        assert_eq!(legacy["realm_linkifiers"], json!([]));
        assert_eq!(legacy["realm_filters"], json!([]));
        let unasked = app.register(&ann, &[
            ("event_types", json!(["message"])),
            ("client_capabilities", json!({"linkifier_url_template": true})),
        ]).await;
        assert!(unasked.get("realm_linkifiers").is_none());
        let mq = modern["queue_id"].as_str().unwrap();
        let lq = legacy["queue_id"].as_str().unwrap();

        let second = add(&app, &app.owner, "T(?P<id>[0-9]+)", "https://e.com/t/{id}").await;
        app.patch(&format!("/realm/filters/{first}")).as_user(&app.owner)
            .param("pattern", ISSUE).param("url_template", "https://e.com/i/{id}").send().await.success();
        reorder(&app, json!([second, first])).await.success();
        app.delete(&format!("/realm/filters/{second}")).as_user(&app.owner).send().await.success();

        let events = app.events_of(&ann, mq, &["realm_linkifiers", "realm_filters"]).await;
        let lists: Vec<Value> = events.iter().map(|e| {
            assert_eq!(e["type"], "realm_linkifiers");
            e["realm_linkifiers"].clone()
        }).collect();
        assert_eq!(lists, vec![
            json!([{"id": first, "pattern": ISSUE, "url_template": ISSUE_URL},
                   {"id": second, "pattern": "T(?P<id>[0-9]+)", "url_template": "https://e.com/t/{id}"}]),
            json!([{"id": first, "pattern": ISSUE, "url_template": "https://e.com/i/{id}"},
                   {"id": second, "pattern": "T(?P<id>[0-9]+)", "url_template": "https://e.com/t/{id}"}]),
            json!([{"id": second, "pattern": "T(?P<id>[0-9]+)", "url_template": "https://e.com/t/{id}"},
                   {"id": first, "pattern": ISSUE, "url_template": "https://e.com/i/{id}"}]),
            json!([{"id": first, "pattern": ISSUE, "url_template": "https://e.com/i/{id}"}]),
        ]);
        assert!(app.events_of(&ann, lq, &["realm_linkifiers", "realm_filters"]).await.is_empty());

        // Refused changes send nothing; the snapshot now equals the last event's list.
        app.delete(&format!("/realm/filters/{second}")).as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
        assert_eq!(app.events_of(&ann, mq, &["realm_linkifiers"]).await.len(), 4);
        let fresh = app.register(&ann, &[
            ("fetch_event_types", json!(["realm_linkifiers"])),
            ("client_capabilities", json!({"linkifier_url_template": true})),
        ]).await;
        assert_eq!(fresh["realm_linkifiers"], lists[3]);
    }
}

backend_test! {
    async fn messages_and_topics_are_linkified(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let before = app.send_to_channel(&ann, "general", "ticket #7", "before #7").await;
        add(&app, &app.owner, ISSUE, ISSUE_URL).await;
        add(&app, &app.owner, "(?P<org>[a-z]+)/(?P<repo>[a-z]+)!(?P<id>[0-9]+)",
            "https://git.example.com/{org}/{repo}/pr{/id}{?org}").await;
        let queue = app.register(&ann, &[("event_types", json!(["message"])), ("apply_markdown", json!(true))]).await;
        let id = app.send_to_channel(&ann, "general", "ticket #45", "see #123 and zulip/web!9, not x#5").await;

        let page = app.get("/messages").as_user(&ann).param("anchor", "newest").param("num_before", 10)
            .json_param("narrow", &json!([["channel", "general"]])).send().await.success();
        let messages = page["messages"].as_array().unwrap();
        let m = messages.iter().find(|m| m["id"] == id).unwrap();
        let content = m["content"].as_str().unwrap();
        assert!(content.contains(r#"<a href="https://github.com/zulip/zulip/issues/123" target="_blank" title="https://github.com/zulip/zulip/issues/123">#123</a>"#)
            || content.contains(r#"href="https://github.com/zulip/zulip/issues/123""#), "{content}");
        assert!(content.contains(r#"href="https://git.example.com/zulip/web/pr/9?org=zulip""#), "{content}");
        assert!(!content.contains("issues/5"), "x#5 is not at a word boundary: {content}");
        assert_eq!(m["topic_links"], json!([{"text": "#45", "url": "https://github.com/zulip/zulip/issues/45"}]));

        // Older messages keep their rendering, but topic links follow the current linkifiers.
        let old = messages.iter().find(|m| m["id"] == before).unwrap();
        assert!(!old["content"].as_str().unwrap().contains("issues/7"));
        assert_eq!(old["topic_links"], json!([{"text": "#7", "url": "https://github.com/zulip/zulip/issues/7"}]));

        let events = app.events_of(&ann, queue["queue_id"].as_str().unwrap(), &["message"]).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["message"]["topic_links"], json!([{"text": "#45", "url": "https://github.com/zulip/zulip/issues/45"}]));
        assert!(events[0]["message"]["content"].as_str().unwrap().contains("issues/123"));

        let rendered = app.post("/messages/render").as_user(&ann).param("content", "fix #8")
            .send().await.success();
        assert!(rendered["rendered"].as_str().unwrap().contains(r#"href="https://github.com/zulip/zulip/issues/8""#), "{rendered}");
    }
}

backend_test! {
    async fn moving_a_topic_sends_the_new_topic_links(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        add(&app, &app.owner, ISSUE, ISSUE_URL).await;
        let id = app.send_to_channel(&ann, "general", "plain", "hello").await;
        let queue = app.register(&ann, &[("event_types", json!(["update_message"]))]).await;
        app.patch(&format!("/messages/{id}")).as_user(&ann)
            .param("topic", "bug #31").param("propagate_mode", "change_all").send().await.success();
        let events = app.events_of(&ann, queue["queue_id"].as_str().unwrap(), &["update_message"]).await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["subject"], "bug #31");
        assert_eq!(events[0]["topic_links"],
            json!([{"text": "#31", "url": "https://github.com/zulip/zulip/issues/31"}]));
    }
}

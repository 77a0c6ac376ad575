//! What each queue receives and how it reads: filters, capabilities, message rendering, the
//! empty topic, flag-event merging.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use parley_domain::UserId;
use parley_events::{Body, Capability, ClientCapabilities, Event, NarrowFilter};
use serde_json::json;
use std::sync::Arc;

#[tokio::test]
async fn event_types_filter() {
    let engine = engine();
    let mut options = opts(1);
    options.event_types = Some(["message".to_owned(), "realm_user".to_owned()].into());
    let (queue, _) = engine.register(options);
    engine.deliver(&json_event(&[1], "presence"));
    engine.deliver(&json_event(&[1], "realm_user"));
    engine.deliver(&Event::message(vec![to(1, &[])], message(Some("a"), "t")));
    let events = poll(&engine, 1, &queue, -1).await;
    assert_eq!(types(&events), ["realm_user", "message"]);
    assert_eq!(ids(&events), [0, 1]);
}

#[tokio::test]
async fn narrow_filters_only_messages() {
    let engine = engine();
    let mut options = opts(1);
    options.narrow = vec![
        NarrowFilter::Channel("design".to_owned()),
        NarrowFilter::Topic("IDEAS".to_owned()),
        NarrowFilter::Sender("sender@EXAMPLE.com".to_owned()),
    ];
    let (queue, _) = engine.register(options);
    engine.deliver(&Event::message(
        vec![to(1, &[])],
        message(Some("Design"), "ideas"),
    ));
    engine.deliver(&Event::message(
        vec![to(1, &[])],
        message(Some("Design"), "other"),
    ));
    engine.deliver(&Event::message(
        vec![to(1, &[])],
        message(Some("general"), "ideas"),
    ));
    engine.deliver(&Event::message(vec![to(1, &[])], message(None, "ideas")));
    engine.deliver(&json_event(&[1], "presence"));
    let events = poll(&engine, 1, &queue, -1).await;
    assert_eq!(types(&events), ["message", "presence"]);
    assert_eq!(events[0]["message"]["subject"], "ideas");
}

#[tokio::test]
async fn narrow_flag_terms() {
    let engine = engine();
    let cases = [
        (NarrowFilter::IsDm, None, vec![], true),
        (NarrowFilter::IsDm, Some("a"), vec![], false),
        (NarrowFilter::IsStarred, Some("a"), vec!["starred"], true),
        (NarrowFilter::IsStarred, Some("a"), vec!["read"], false),
        (
            NarrowFilter::IsMentioned,
            Some("a"),
            vec!["mentioned"],
            true,
        ),
        (
            NarrowFilter::IsMentioned,
            Some("a"),
            vec!["wildcard_mentioned"],
            true,
        ),
        (NarrowFilter::IsMentioned, Some("a"), vec![], false),
        (NarrowFilter::IsUnread, Some("a"), vec![], true),
        (NarrowFilter::IsUnread, Some("a"), vec!["read"], false),
        (
            NarrowFilter::IsAlerted,
            Some("a"),
            vec!["has_alert_word"],
            true,
        ),
        (NarrowFilter::IsAlerted, Some("a"), vec!["mentioned"], false),
    ];
    for (user, (term, channel, flags, expected)) in (1..).zip(cases) {
        let mut options = opts(user);
        options.narrow = vec![term.clone()];
        let (queue, _) = engine.register(options);
        engine.deliver(&Event::message(
            vec![to(user, &flags)],
            message(channel, "t"),
        ));
        let got = poll(&engine, user, &queue, -1).await.len() == 1;
        assert_eq!(got, expected, "{term:?} {channel:?} {flags:?}");
    }
}

#[tokio::test]
async fn capability_branches_and_many() {
    let engine = engine();
    let legacy = register(&engine, 1);
    let mut options = opts(1);
    options.capabilities = ClientCapabilities {
        bulk_message_deletion: true,
        ..ClientCapabilities::default()
    };
    let (modern, _) = engine.register(options);
    let body = Body::by_capability(
        Capability::BulkMessageDeletion,
        Body::json(json!({"type": "delete_message", "message_ids": [1, 2]})),
        Some(Body::Many(vec![
            Body::json(json!({"type": "delete_message", "message_id": 1})),
            Body::json(json!({"type": "delete_message", "message_id": 2})),
        ])),
    );
    engine.deliver(&Event::to_users(vec![UserId(1)], body));
    // Only the capable client gets this one.
    engine.deliver(&Event::to_users(
        vec![UserId(1)],
        Body::by_capability(
            Capability::StreamTypingNotifications,
            Body::json(json!({"type": "typing"})),
            None,
        ),
    ));
    let old = poll(&engine, 1, &legacy, -1).await;
    assert_eq!(
        old,
        [
            json!({"type": "delete_message", "message_id": 1, "id": 0}),
            json!({"type": "delete_message", "message_id": 2, "id": 1}),
        ]
    );
    let new = poll(&engine, 1, &modern, -1).await;
    assert_eq!(
        new,
        [json!({"type": "delete_message", "message_ids": [1, 2], "id": 0})]
    );
}

#[tokio::test]
async fn messages_render_per_client() {
    let engine = engine();
    let mut html = opts(1);
    html.apply_markdown = true;
    html.client_gravatar = true;
    let (html_queue, _) = engine.register(html);
    let mut markdown = opts(1);
    markdown.apply_markdown = false;
    markdown.client_gravatar = false;
    let (markdown_queue, _) = engine.register(markdown);
    let other = register(&engine, 2);

    let mut payload = message(Some("a"), "t");
    payload.local_echo = Some((markdown_queue.clone(), "1.01".to_owned()));
    engine.deliver(&Event::message(
        vec![to(1, &["read", "mentioned"]), to(2, &[])],
        payload,
    ));

    let events = poll(&engine, 1, &html_queue, -1).await;
    let m = &events[0];
    assert_eq!(m["type"], "message");
    assert_eq!(m["id"], 0);
    assert_eq!(m["flags"], json!(["read", "mentioned"]));
    assert_eq!(m["message"]["content"], "<p><strong>hi</strong></p>");
    assert_eq!(m["message"]["content_type"], "text/html");
    assert_eq!(m["message"]["avatar_url"], json!(null));
    assert_eq!(m["message"]["id"], 42);
    assert!(m.get("local_message_id").is_none());

    let events = poll(&engine, 1, &markdown_queue, -1).await;
    let m = &events[0];
    assert_eq!(m["message"]["content"], "**hi**");
    assert_eq!(m["message"]["content_type"], "text/x-markdown");
    assert_eq!(
        m["message"]["avatar_url"],
        "https://secure.gravatar.com/avatar/x"
    );
    assert_eq!(m["local_message_id"], "1.01");

    let events = poll(&engine, 2, &other, -1).await;
    assert_eq!(events[0]["flags"], json!([]));
    assert!(events[0].get("local_message_id").is_none());
}

#[tokio::test]
async fn uploaded_avatars_are_always_sent() {
    let engine = engine();
    let queue = register(&engine, 1);
    let mut payload = message(Some("a"), "t");
    payload.avatar_url = Some("/user_avatars/1.png".to_owned());
    engine.deliver(&Event::message(vec![to(1, &[])], payload));
    let events = poll(&engine, 1, &queue, -1).await;
    assert_eq!(events[0]["message"]["avatar_url"], "/user_avatars/1.png");
}

#[tokio::test]
async fn all_public_streams_queues_get_public_messages() {
    let engine = engine();
    let mut options = opts(5);
    options.all_public_streams = true;
    let (bot, _) = engine.register(options.clone());
    options.user_id = UserId(1);
    let (recipient_bot, _) = engine.register(options);

    engine.deliver(&Event::message(
        vec![to(1, &["read"])],
        message(Some("a"), "t"),
    ));
    let mut private = message(Some("secret"), "t");
    private.public_channel = false;
    engine.deliver(&Event::message(vec![to(1, &[])], private));
    engine.deliver(&Event::message(vec![to(1, &[])], message(None, "")));

    let events = poll(&engine, 5, &bot, -1).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["flags"], json!([]));
    // A recipient's all_public_streams queue gets the message once, with its flags.
    let events = poll(&engine, 1, &recipient_bot, -1).await;
    assert_eq!(events.len(), 3);
    assert_eq!(events[0]["flags"], json!(["read"]));
}

#[tokio::test]
async fn the_empty_topic_is_named_for_older_clients() {
    let engine = engine();
    let mut old = opts(1);
    old.empty_topic_display_name = "general chat".to_owned();
    let (old_queue, _) = engine.register(old.clone());
    old.capabilities.empty_topic_name = true;
    let (new_queue, _) = engine.register(old);

    engine.deliver(&Event::json(
        vec![UserId(1)],
        json!({"type": "update_message", "subject": "", "orig_subject": "", "topic_name": "x", "topic": ""}),
    ));
    engine.deliver(&Event::message(vec![to(1, &[])], message(Some("a"), "")));

    let events = poll(&engine, 1, &old_queue, -1).await;
    assert_eq!(events[0]["subject"], "general chat");
    assert_eq!(events[0]["orig_subject"], "general chat");
    assert_eq!(events[0]["topic"], "general chat");
    assert_eq!(events[0]["topic_name"], "x");
    assert_eq!(events[1]["message"]["subject"], "general chat");

    let events = poll(&engine, 1, &new_queue, -1).await;
    assert_eq!(events[0]["subject"], "");
    assert_eq!(events[1]["message"]["subject"], "");
}

fn flags_event(op: &str, flag: &str, messages: &[i64]) -> Event {
    Event::json(
        vec![UserId(1)],
        json!({"type": "update_message_flags", "op": op, "operation": op, "flag": flag, "messages": messages, "all": false}),
    )
}

#[tokio::test]
async fn pending_flag_events_are_merged() {
    let engine = engine();
    let queue = register(&engine, 1);
    engine.deliver(&flags_event("add", "read", &[1, 2]));
    engine.deliver(&flags_event("add", "read", &[2, 3]));
    engine.deliver(&flags_event("add", "starred", &[1]));
    engine.deliver(&json_event(&[1], "presence"));
    engine.deliver(&flags_event("add", "starred", &[4]));
    engine.deliver(&flags_event("remove", "read", &[4]));
    engine.deliver(&flags_event("remove", "read", &[5]));

    let events = poll(&engine, 1, &queue, -1).await;
    // Consecutive events of one kind merge; nothing moves past an event of another kind, so
    // a client applies changes in the order they happened.
    assert_eq!(ids(&events), [1, 2, 3, 4, 5, 6]);
    assert_eq!(events[0]["flag"], "read");
    assert_eq!(events[0]["messages"], json!([1, 2, 3]));
    assert_eq!(events[1]["flag"], "starred");
    assert_eq!(events[1]["messages"], json!([1]));
    assert_eq!(events[2]["type"], "presence");
    assert_eq!(events[3]["messages"], json!([4]));
    assert_eq!(events[4]["messages"], json!([4]));
    assert_eq!(events[5]["messages"], json!([5]));

    // Handed-out events are no longer merged into.
    engine.deliver(&flags_event("add", "read", &[6]));
    let events = poll(&engine, 1, &queue, 6).await;
    assert_eq!(ids(&events), [7]);
    assert_eq!(events[0]["messages"], json!([6]));
}

#[tokio::test]
async fn one_message_is_shared_not_copied() {
    let engine = engine();
    let queues: Vec<(i64, String)> = (1..=50).map(|u| (u, register(&engine, u))).collect();
    let payload = Arc::new(message(Some("a"), "t"));
    engine.deliver(&Event {
        audience: parley_events::Audience::Message((1..=50).map(|u| to(u, &[])).collect()),
        body: Body::Message(Arc::clone(&payload)),
    });
    // The caller's Arc plus one per queue.
    assert_eq!(Arc::strong_count(&payload), 51);
    for (user, queue) in &queues {
        assert_eq!(poll(&engine, *user, queue, -1).await.len(), 1);
    }
}

//! Helpers shared by the engine's integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use parley_domain::UserId;
use parley_events::{Engine, EngineConfig, Event, MessagePayload, MessageRecipient, QueueOptions};
use serde_json::{json, Value};
use std::time::Duration;

/// An engine whose blocking polls time out quickly.
pub fn engine() -> Engine {
    Engine::new(EngineConfig {
        heartbeat: Duration::from_millis(50),
        ..EngineConfig::default()
    })
}

/// Default options for `user`.
pub fn opts(user: i64) -> QueueOptions {
    QueueOptions::new(UserId(user))
}

/// A queue for `user` with default options.
pub fn register(engine: &Engine, user: i64) -> String {
    engine.register(opts(user)).0
}

/// Reads without blocking.
pub async fn poll(engine: &Engine, user: i64, queue: &str, last: i64) -> Vec<Value> {
    engine
        .get_events(UserId(user), queue, Some(last), true)
        .await
        .unwrap()
}

/// The `id`s of events.
pub fn ids(events: &[Value]) -> Vec<i64> {
    events.iter().map(|e| e["id"].as_i64().unwrap()).collect()
}

/// The `type`s of events.
pub fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect()
}

/// A simple JSON event for `users`.
pub fn json_event(users: &[i64], ty: &str) -> Event {
    Event::json(
        users.iter().copied().map(UserId).collect(),
        json!({"type": ty}),
    )
}

/// A channel message in `channel`/`topic` from sender@example.com.
pub fn message(channel: Option<&str>, topic: &str) -> MessagePayload {
    MessagePayload {
        message: json!({
            "id": 42,
            "sender_id": 9,
            "sender_email": "Sender@example.com",
            "subject": topic,
            "type": if channel.is_some() { "stream" } else { "private" },
        })
        .as_object()
        .unwrap()
        .clone(),
        content_markdown: "**hi**".to_owned(),
        content_html: "<p><strong>hi</strong></p>".to_owned(),
        avatar_url: None,
        gravatar_url: "https://secure.gravatar.com/avatar/x".to_owned(),
        channel_name: channel.map(str::to_owned),
        topic: topic.to_owned(),
        sender_email: "Sender@example.com".to_owned(),
        public_channel: channel.is_some(),
        local_echo: None,
    }
}

/// A recipient with flags.
pub fn to(user: i64, flags: &[&str]) -> MessageRecipient {
    MessageRecipient {
        user_id: UserId(user),
        flags: flags.iter().map(|f| (*f).to_owned()).collect(),
    }
}

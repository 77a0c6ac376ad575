//! Which events a queue accepts: its `event_types` and, for messages, its `narrow`.

use crate::options::{NarrowFilter, QueueOptions};
use crate::MessagePayload;
use serde_json::{Map, Value};

/// Whether a queue wants events of type `ty`. Heartbeats always pass: they are how a client
/// knows its queue is alive. Like the reference server, a client asking for both `user_topic`
/// and the legacy `muted_topics` gets only the former.
pub(crate) fn wants_type(options: &QueueOptions, ty: &str) -> bool {
    if ty == "heartbeat" {
        return true;
    }
    match &options.event_types {
        None => true,
        Some(types) => {
            types.contains(ty) && !(ty == "muted_topics" && types.contains("user_topic"))
        }
    }
}

/// Whether a queue accepts a JSON event (by its `type`).
pub(crate) fn accepts_json(options: &QueueOptions, map: &Map<String, Value>) -> bool {
    wants_type(
        options,
        map.get("type").and_then(Value::as_str).unwrap_or(""),
    )
}

/// Whether a queue accepts a message event whose recipient has `flags`.
pub(crate) fn accepts_message(
    options: &QueueOptions,
    payload: &MessagePayload,
    flags: &[String],
) -> bool {
    wants_type(options, "message")
        && options
            .narrow
            .iter()
            .all(|term| narrow_term_matches(term, payload, flags))
}

fn has_flag(flags: &[String], name: &str) -> bool {
    flags.iter().any(|f| f == name)
}

fn same_text(a: &str, b: &str) -> bool {
    a == b || a.to_lowercase() == b.to_lowercase()
}

fn narrow_term_matches(term: &NarrowFilter, payload: &MessagePayload, flags: &[String]) -> bool {
    match term {
        NarrowFilter::Channel(name) => payload
            .channel_name
            .as_deref()
            .is_some_and(|channel| same_text(channel, name)),
        NarrowFilter::Topic(topic) => {
            payload.channel_name.is_some() && same_text(&payload.topic, topic)
        }
        NarrowFilter::Sender(email) => same_text(&payload.sender_email, email),
        NarrowFilter::IsDm => payload.channel_name.is_none(),
        NarrowFilter::IsStarred => has_flag(flags, "starred"),
        NarrowFilter::IsMentioned => {
            has_flag(flags, "mentioned") || has_flag(flags, "wildcard_mentioned")
        }
        NarrowFilter::IsUnread => !has_flag(flags, "read"),
        NarrowFilter::IsAlerted => has_flag(flags, "has_alert_word"),
    }
}

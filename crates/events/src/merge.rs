//! Compression of repeated `update_message_flags` events, as the reference server does with its
//! "virtual events": while a client has not fetched them, all pending events adding (or
//! removing) the same flag become one event listing every message. Marking messages as read
//! while scrolling otherwise fills queues with hundreds of tiny events.
//!
//! Excluded, as in the reference: events for `all` messages, and `remove`/`read`, whose
//! `message_details` cannot be combined.

use serde_json::{Map, Value};
use std::collections::HashSet;

/// The operation of a flags event; `operation` is the deprecated spelling of `op`.
fn op(map: &Map<String, Value>) -> Option<&str> {
    map.get("op")
        .or_else(|| map.get("operation"))
        .and_then(Value::as_str)
}

fn flag(map: &Map<String, Value>) -> Option<&str> {
    map.get("flag").and_then(Value::as_str)
}

/// Whether this event may be merged with others of its kind.
pub(crate) fn is_mergeable(map: &Map<String, Value>) -> bool {
    if map.get("type").and_then(Value::as_str) != Some("update_message_flags") {
        return false;
    }
    if map.get("all").and_then(Value::as_bool) == Some(true) {
        return false;
    }
    if !map.get("messages").is_some_and(Value::is_array) {
        return false;
    }
    match (op(map), flag(map)) {
        (Some("remove"), Some("read")) => false,
        (Some(_), Some(_)) => true,
        _ => false,
    }
}

/// Whether two mergeable events change the same flag the same way.
pub(crate) fn same_kind(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    is_mergeable(a) && is_mergeable(b) && op(a) == op(b) && flag(a) == flag(b)
}

/// `older` with `newer`'s messages added (each message once, in arrival order) and `newer`'s
/// timestamp.
pub(crate) fn merge(older: &Map<String, Value>, newer: &Map<String, Value>) -> Map<String, Value> {
    let mut merged = older.clone();
    let mut messages: Vec<Value> = older
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut seen: HashSet<Option<i64>> = messages.iter().map(Value::as_i64).collect();
    if let Some(new) = newer.get("messages").and_then(Value::as_array) {
        for m in new {
            if seen.insert(m.as_i64()) {
                messages.push(m.clone());
            }
        }
    }
    merged.insert("messages".to_owned(), Value::Array(messages));
    if let Some(timestamp) = newer.get("timestamp") {
        merged.insert("timestamp".to_owned(), timestamp.clone());
    }
    merged
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn mergeable_kinds() {
        let add_read =
            map(json!({"type":"update_message_flags","op":"add","flag":"read","messages":[1]}));
        let remove_read =
            map(json!({"type":"update_message_flags","op":"remove","flag":"read","messages":[1]}));
        let all = map(
            json!({"type":"update_message_flags","op":"add","flag":"read","all":true,"messages":[]}),
        );
        let legacy = map(
            json!({"type":"update_message_flags","operation":"add","flag":"read","messages":[2]}),
        );
        assert!(is_mergeable(&add_read));
        assert!(!is_mergeable(&remove_read));
        assert!(!is_mergeable(&all));
        assert!(same_kind(&add_read, &legacy));
        let merged = merge(&add_read, &map(json!({"messages":[1,3],"timestamp":5})));
        assert_eq!(merged["messages"], json!([1, 3]));
        assert_eq!(merged["timestamp"], json!(5));
    }
}

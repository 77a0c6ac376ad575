//! Rendering of queued events to the JSON a client reads, at `GET /events` time: per-client
//! choices (Markdown or HTML, gravatar, local echo, the empty topic's name) are applied here, so
//! that delivery never copies or serializes anything per queue.

use crate::options::QueueOptions;
use crate::queue::{Item, QueuedEvent};
use crate::MessagePayload;
use serde_json::{Map, Value};

/// Keys of top-level event fields that hold a topic name.
const TOPIC_KEYS: [&str; 4] = ["subject", "orig_subject", "topic", "topic_name"];

/// The JSON of one queued event for this queue.
pub(crate) fn render(event: &QueuedEvent, options: &QueueOptions, queue_id: &str) -> Value {
    let mut map = match &event.item {
        Item::Json(map) => {
            let mut map = Map::clone(map);
            if !options.capabilities.empty_topic_name {
                for key in TOPIC_KEYS {
                    name_empty_topic(&mut map, key, options);
                }
            }
            map
        }
        Item::Message { payload, flags } => render_message(payload, flags, options, queue_id),
    };
    map.insert("id".to_owned(), Value::from(event.id));
    Value::Object(map)
}

fn name_empty_topic(map: &mut Map<String, Value>, key: &str, options: &QueueOptions) {
    if let Some(value) = map.get_mut(key) {
        if value.as_str() == Some("") {
            *value = Value::String(options.empty_topic_display_name.clone());
        }
    }
}

fn render_message(
    payload: &MessagePayload,
    flags: &[String],
    options: &QueueOptions,
    queue_id: &str,
) -> Map<String, Value> {
    let mut message = payload.message.clone();
    let (content, content_type) = if options.apply_markdown {
        (&payload.content_html, "text/html")
    } else {
        (&payload.content_markdown, "text/x-markdown")
    };
    message.insert("content".to_owned(), Value::String(content.clone()));
    message.insert("content_type".to_owned(), Value::from(content_type));
    let avatar = match (&payload.avatar_url, options.client_gravatar) {
        (Some(url), _) => Value::String(url.clone()),
        (None, true) => Value::Null,
        (None, false) => Value::String(payload.gravatar_url.clone()),
    };
    message.insert("avatar_url".to_owned(), avatar);
    if !options.capabilities.empty_topic_name {
        name_empty_topic(&mut message, "subject", options);
    }

    let mut event = Map::new();
    event.insert("type".to_owned(), Value::from("message"));
    event.insert("message".to_owned(), Value::Object(message));
    event.insert(
        "flags".to_owned(),
        Value::Array(flags.iter().cloned().map(Value::String).collect()),
    );
    if let Some((sender_queue, local_id)) = &payload.local_echo {
        if sender_queue == queue_id {
            // The spec names it `local_id`; the reference server's clients read
            // `local_message_id`. Both carry the same value.
            event.insert("local_id".to_owned(), Value::String(local_id.clone()));
            event.insert(
                "local_message_id".to_owned(),
                Value::String(local_id.clone()),
            );
        }
    }
    event
}

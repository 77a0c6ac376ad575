//! Events about uploaded files and custom emoji, and the API shapes of attachments and
//! custom emoji (defined once here for the events, the snapshot and the `GET` endpoints).

use parley_domain::realm_emoji::image_url;
use parley_domain::UserId;
use parley_events::{Body, Event};
use parley_storage::attachments::Attachment;
use parley_storage::realm_emoji::RealmEmojiRow;
use serde_json::{json, Map, Value};

/// An attachment as the API shows it; `messages` are `(id, date_sent seconds)` pairs.
pub fn attachment_json(attachment: &Attachment, messages: &[(i64, i64)]) -> Value {
    let messages: Vec<Value> = messages
        .iter()
        .map(|(id, date_sent)| json!({"id": id, "date_sent": date_sent * 1000}))
        .collect();
    json!({
        "id": attachment.id,
        "name": attachment.name,
        "path_id": attachment.path_id,
        "size": attachment.size,
        "create_time": attachment.create_time * 1000,
        "messages": messages,
    })
}

/// `attachment` with `op` `add` or `update`, to the owner: the attachment in full and the
/// organization's used upload space.
pub fn attachment_changed(owner: UserId, op: &str, attachment: Value, space_used: i64) -> Event {
    Event::json(
        vec![owner],
        json!({
            "type": "attachment",
            "op": op,
            "attachment": attachment,
            "upload_space_used": space_used,
        }),
    )
}

/// `attachment` `remove`, to the owner.
pub fn attachment_removed(owner: UserId, id: i64, space_used: i64) -> Event {
    Event::json(
        vec![owner],
        json!({
            "type": "attachment",
            "op": "remove",
            "attachment": {"id": id},
            "upload_space_used": space_used,
        }),
    )
}

/// A custom emoji as the API shows it (`still_url` is null unless the image is animated).
pub fn realm_emoji_json(realm_id: i64, emoji: &RealmEmojiRow) -> Value {
    let still_url = emoji
        .is_animated
        .then(|| image_url(realm_id, &format!("still/{}.png", emoji.id)));
    json!({
        "id": emoji.id.to_string(),
        "name": emoji.name,
        "source_url": image_url(realm_id, &emoji.file_name),
        "still_url": still_url,
        "deactivated": emoji.deactivated,
        "author_id": emoji.author_id,
    })
}

/// Every custom emoji (active or not), keyed by ID, as `GET /realm/emoji` and the snapshot's
/// `realm_emoji` show them.
pub fn realm_emoji_map(realm_id: i64, all: &[RealmEmojiRow]) -> Value {
    let map: Map<String, Value> = all
        .iter()
        .map(|e| (e.id.to_string(), realm_emoji_json(realm_id, e)))
        .collect();
    Value::Object(map)
}

/// `realm_emoji` `update`, to everyone: the full set of custom emoji.
pub fn realm_emoji_updated(realm_emoji: Value) -> Event {
    Event::everyone(Body::json(json!({
        "type": "realm_emoji",
        "op": "update",
        "realm_emoji": realm_emoji,
    })))
}

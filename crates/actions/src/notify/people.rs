//! Events about a person's own preferences and presence in others' eyes: `user_status` (to
//! everyone), `alert_words` and `muted_users` (to the person only).

use parley_domain::user_status::StatusChange;
use parley_domain::UserId;
use parley_events::Event;
use serde_json::{json, Map, Value};

/// `user_status` with only the parts that changed, to `audience` (every active user).
pub fn status_changed(user: UserId, change: &StatusChange, audience: Vec<UserId>) -> Event {
    let mut body = Map::new();
    body.insert("type".into(), "user_status".into());
    body.insert("user_id".into(), user.0.into());
    if let Some(text) = &change.status_text {
        body.insert("status_text".into(), text.clone().into());
    }
    if let Some(emoji) = &change.emoji {
        body.insert("emoji_name".into(), emoji.name.clone().into());
        body.insert("emoji_code".into(), emoji.code.clone().into());
        body.insert("reaction_type".into(), emoji.reaction_type.clone().into());
    }
    Event::json(audience, Value::Object(body))
}

/// `alert_words` with the person's whole list, to them.
pub fn alert_words_changed(user: UserId, words: &[String]) -> Event {
    Event::json(
        vec![user],
        json!({"type": "alert_words", "alert_words": words}),
    )
}

/// The `[{id, timestamp}]` list of a person's mutes, as the event and the snapshot show it.
pub fn muted_users_list(mutes: &[(UserId, i64)]) -> Value {
    Value::Array(
        mutes
            .iter()
            .map(|(id, when)| json!({"id": id.0, "timestamp": when}))
            .collect(),
    )
}

/// `muted_users` with the person's whole list, to them.
pub fn muted_users_changed(user: UserId, mutes: &[(UserId, i64)]) -> Event {
    Event::json(
        vec![user],
        json!({"type": "muted_users", "muted_users": muted_users_list(mutes)}),
    )
}

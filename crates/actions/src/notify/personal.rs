//! Events about things only their owner sees: drafts, saved snippets and navigation views. Each
//! goes to the owner's own queues, so that their other clients stay in step. The API shapes of
//! these objects are defined here once, for the events, the snapshot and the `GET` endpoints.

use parley_domain::UserId;
use parley_events::Event;
use parley_storage::drafts::Draft;
use parley_storage::navigation_views::NavigationView;
use parley_storage::saved_snippets::SavedSnippet;
use serde_json::{json, Map, Value};

/// A draft as the API shows it.
pub fn draft_json(draft: &Draft) -> Value {
    json!({
        "id": draft.id,
        "type": draft.draft_type,
        "to": draft.to(),
        "topic": draft.topic,
        "content": draft.content,
        "timestamp": draft.last_edit_time,
    })
}

/// A saved snippet as the API shows it.
pub fn saved_snippet_json(snippet: &SavedSnippet) -> Value {
    json!({
        "id": snippet.id,
        "title": snippet.title,
        "content": snippet.content,
        "date_created": snippet.date_created,
    })
}

/// A navigation view as the API shows it.
pub fn navigation_view_json(view: &NavigationView) -> Value {
    json!({
        "fragment": view.fragment,
        "is_pinned": view.is_pinned,
        "name": view.name,
    })
}

/// `drafts` `add`: drafts were created.
pub fn drafts_added(user: UserId, drafts: &[Draft]) -> Event {
    let list: Vec<Value> = drafts.iter().map(draft_json).collect();
    Event::json(
        vec![user],
        json!({"type": "drafts", "op": "add", "drafts": list}),
    )
}

/// `drafts` `update`: a draft was edited.
pub fn draft_updated(user: UserId, draft: &Draft) -> Event {
    Event::json(
        vec![user],
        json!({"type": "drafts", "op": "update", "draft": draft_json(draft)}),
    )
}

/// `drafts` `remove`: a draft was deleted.
pub fn draft_removed(user: UserId, draft_id: i64) -> Event {
    Event::json(
        vec![user],
        json!({"type": "drafts", "op": "remove", "draft_id": draft_id}),
    )
}

/// `saved_snippets` `add`: a snippet was created.
pub fn saved_snippet_added(user: UserId, snippet: &SavedSnippet) -> Event {
    Event::json(
        vec![user],
        json!({
            "type": "saved_snippets",
            "op": "add",
            "saved_snippet": saved_snippet_json(snippet),
        }),
    )
}

/// `saved_snippets` `update`: a snippet was edited.
pub fn saved_snippet_updated(user: UserId, snippet: &SavedSnippet) -> Event {
    Event::json(
        vec![user],
        json!({
            "type": "saved_snippets",
            "op": "update",
            "saved_snippet": saved_snippet_json(snippet),
        }),
    )
}

/// `saved_snippets` `remove`: a snippet was deleted.
pub fn saved_snippet_removed(user: UserId, saved_snippet_id: i64) -> Event {
    Event::json(
        vec![user],
        json!({"type": "saved_snippets", "op": "remove", "saved_snippet_id": saved_snippet_id}),
    )
}

/// `navigation_view` `add`: a view was added.
pub fn navigation_view_added(user: UserId, view: &NavigationView) -> Event {
    Event::json(
        vec![user],
        json!({
            "type": "navigation_view",
            "op": "add",
            "navigation_view": navigation_view_json(view),
        }),
    )
}

/// `navigation_view` `update`: some properties of a view changed; `data` holds only those.
pub fn navigation_view_updated(user: UserId, fragment: &str, data: Map<String, Value>) -> Event {
    Event::json(
        vec![user],
        json!({
            "type": "navigation_view",
            "op": "update",
            "fragment": fragment,
            "data": data,
        }),
    )
}

/// `navigation_view` `remove`: a view was removed.
pub fn navigation_view_removed(user: UserId, fragment: &str) -> Event {
    Event::json(
        vec![user],
        json!({"type": "navigation_view", "op": "remove", "fragment": fragment}),
    )
}

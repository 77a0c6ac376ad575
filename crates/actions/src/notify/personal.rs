//! Events about things only their owner sees: drafts, saved snippets and navigation views. Each
//! goes to the owner's own queues, so that their other clients stay in step.

use super::emit::to_users;
use crate::present::personal::{draft, navigation_view, saved_snippet};
use parley_domain::UserId;
use parley_events::Event;
use parley_storage::drafts::Draft;
use parley_storage::navigation_views::NavigationView;
use parley_storage::saved_snippets::SavedSnippet;
use parley_wire as wire;
use parley_wire::event::{DraftsEvent, NavigationViewEvent, SavedSnippetsEvent};
use parley_wire::Object;

/// `drafts` `add`: drafts were created.
pub fn drafts_added(user: UserId, drafts: &[Draft]) -> Event {
    let drafts = drafts.iter().map(draft).collect();
    to_users(vec![user], wire::Event::Drafts(DraftsEvent::Add { drafts }))
}

/// `drafts` `update`: a draft was edited.
pub fn draft_updated(user: UserId, edited: &Draft) -> Event {
    let draft = draft(edited);
    to_users(
        vec![user],
        wire::Event::Drafts(DraftsEvent::Update { draft }),
    )
}

/// `drafts` `remove`: a draft was deleted.
pub fn draft_removed(user: UserId, draft_id: i64) -> Event {
    to_users(
        vec![user],
        wire::Event::Drafts(DraftsEvent::Remove { draft_id }),
    )
}

/// `saved_snippets` `add`: a snippet was created.
pub fn saved_snippet_added(user: UserId, snippet: &SavedSnippet) -> Event {
    let saved_snippet = saved_snippet(snippet);
    to_users(
        vec![user],
        wire::Event::SavedSnippets(SavedSnippetsEvent::Add { saved_snippet }),
    )
}

/// `saved_snippets` `update`: a snippet was edited.
pub fn saved_snippet_updated(user: UserId, snippet: &SavedSnippet) -> Event {
    let saved_snippet = saved_snippet(snippet);
    to_users(
        vec![user],
        wire::Event::SavedSnippets(SavedSnippetsEvent::Update { saved_snippet }),
    )
}

/// `saved_snippets` `remove`: a snippet was deleted.
pub fn saved_snippet_removed(user: UserId, saved_snippet_id: i64) -> Event {
    to_users(
        vec![user],
        wire::Event::SavedSnippets(SavedSnippetsEvent::Remove { saved_snippet_id }),
    )
}

/// `navigation_view` `add`: a view was added.
pub fn navigation_view_added(user: UserId, view: &NavigationView) -> Event {
    let navigation_view = navigation_view(view);
    to_users(
        vec![user],
        wire::Event::NavigationView(NavigationViewEvent::Add { navigation_view }),
    )
}

/// `navigation_view` `update`: some properties of a view changed; `data` holds only those.
pub fn navigation_view_updated(user: UserId, fragment: &str, data: Object) -> Event {
    let fragment = fragment.to_owned();
    to_users(
        vec![user],
        wire::Event::NavigationView(NavigationViewEvent::Update { fragment, data }),
    )
}

/// `navigation_view` `remove`: a view was removed.
pub fn navigation_view_removed(user: UserId, fragment: &str) -> Event {
    let fragment = fragment.to_owned();
    to_users(
        vec![user],
        wire::Event::NavigationView(NavigationViewEvent::Remove { fragment }),
    )
}

//! What belongs to one person, as the API shows it: drafts, saved snippets, navigation views.

use parley_storage::drafts::Draft;
use parley_storage::navigation_views::NavigationView;
use parley_storage::saved_snippets::SavedSnippet;
use parley_wire::personal as wire;

/// A draft.
pub fn draft(draft: &Draft) -> wire::Draft {
    wire::Draft {
        id: draft.id,
        draft_type: draft.draft_type.clone(),
        to: draft.to(),
        topic: draft.topic.clone(),
        content: draft.content.clone(),
        timestamp: draft.last_edit_time,
    }
}

/// A saved snippet.
pub fn saved_snippet(snippet: &SavedSnippet) -> wire::SavedSnippet {
    wire::SavedSnippet {
        id: snippet.id,
        title: snippet.title.clone(),
        content: snippet.content.clone(),
        date_created: snippet.date_created,
    }
}

/// A navigation view.
pub fn navigation_view(view: &NavigationView) -> wire::NavigationView {
    wire::NavigationView {
        fragment: view.fragment.clone(),
        is_pinned: view.is_pinned,
        name: view.name.clone(),
    }
}

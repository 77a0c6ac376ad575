//! The personal part of a snapshot: the person's drafts, saved snippets, navigation views,
//! scheduled messages and reminders.
//! Spectators have none of these, so they get empty lists.

use super::input::{put, Snapshot, SnapshotInput, Wanted};
use crate::error::ActionResult;
use parley_storage::DbConn;
use serde_json::Value;

/// Whether `navigation_views` is wanted; its events are of type `navigation_view`, so either
/// name asks for it.
fn wants_navigation_views(wanted: &Wanted) -> bool {
    wanted.wants("navigation_views") || wanted.wants("navigation_view")
}

/// Fills `drafts` (empty while the person does not synchronize drafts), `saved_snippets` and
/// `navigation_views`, each when wanted.
pub(super) fn fill(
    input: &SnapshotInput<'_>,
    wanted: &Wanted,
    conn: &mut DbConn,
    out: &mut Snapshot,
) -> ActionResult<()> {
    if wanted.wants("drafts") {
        put(out, "drafts", crate::drafts::snapshot(conn, input.user)?);
    }
    if wanted.wants("saved_snippets") {
        put(
            out,
            "saved_snippets",
            crate::saved_snippets::snapshot(conn, input.user)?,
        );
    }
    if wants_navigation_views(wanted) {
        put(
            out,
            "navigation_views",
            crate::navigation_views::snapshot(conn, input.user)?,
        );
    }
    if wanted.wants("scheduled_messages") {
        put(
            out,
            "scheduled_messages",
            crate::scheduled_messages::snapshot(conn, input.user)?,
        );
    }
    if wanted.wants("reminders") {
        put(
            out,
            "reminders",
            crate::reminders::snapshot(conn, input.user)?,
        );
    }
    Ok(())
}

/// The same parts for a spectator: empty lists.
pub(super) fn fill_spectator(wanted: &Wanted, out: &mut Snapshot) {
    if wanted.wants("drafts") {
        out.insert("drafts".into(), Value::Array(Vec::new()));
    }
    if wanted.wants("saved_snippets") {
        out.insert("saved_snippets".into(), Value::Array(Vec::new()));
    }
    for part in ["navigation_views", "scheduled_messages", "reminders"] {
        let wanted_part = match part {
            "navigation_views" => wants_navigation_views(wanted),
            other => wanted.wants(other),
        };
        if wanted_part {
            out.insert(part.into(), Value::Array(Vec::new()));
        }
    }
}

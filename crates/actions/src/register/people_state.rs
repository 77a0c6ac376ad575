//! The personal-preferences part of a snapshot: `user_status` (everyone's statuses),
//! `alert_words` and `muted_users` (the caller's own).

use super::input::{put, Snapshot, SnapshotInput, Wanted};
use crate::error::ActionResult;
use parley_storage::DbConn;
use serde_json::{Map, Value};

/// Fills each part that is wanted.
pub(super) fn fill(
    input: &SnapshotInput<'_>,
    wanted: &Wanted,
    conn: &mut DbConn,
    out: &mut Snapshot,
) -> ActionResult<()> {
    if wanted.wants("user_status") {
        out.insert("user_status".into(), crate::user_status::snapshot(conn)?);
    }
    if wanted.wants("alert_words") {
        let words = crate::alert_words::snapshot(conn, input.user.id)?;
        out.insert("alert_words".into(), words.into());
    }
    if wanted.wants("muted_users") {
        put(
            out,
            "muted_users",
            crate::muted_users::snapshot(conn, input.user.id)?,
        );
    }
    Ok(())
}

/// The same parts for a spectator, who has no preferences and sees no statuses.
pub(super) fn fill_spectator(wanted: &Wanted, out: &mut Snapshot) {
    if wanted.wants("user_status") {
        out.insert("user_status".into(), Value::Object(Map::new()));
    }
    if wanted.wants("alert_words") {
        out.insert("alert_words".into(), Value::Array(Vec::new()));
    }
    if wanted.wants("muted_users") {
        out.insert("muted_users".into(), Value::Array(Vec::new()));
    }
}

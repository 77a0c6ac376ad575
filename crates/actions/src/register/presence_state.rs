//! The presence part of a snapshot: `presences`, `server_timestamp` and
//! `presence_last_update_id`.

use super::input::{Snapshot, SnapshotInput, Wanted};
use crate::error::ActionResult;
use crate::presence::{presences, PresenceQuery};
use parley_storage::DbConn;
use serde_json::Value;

/// Fills the presence fields when `presence` is wanted: modern format (keyed by user ID) when
/// the client asked for `slim_presence` or declared `simplified_presence_events`, legacy (keyed
/// by API email) otherwise, going back `presence_history_limit_days` (14 by default).
pub(super) fn fill(
    input: &SnapshotInput<'_>,
    wanted: &Wanted,
    conn: &mut DbConn,
    out: &mut Snapshot,
) -> ActionResult<()> {
    if !wanted.wants("presence") {
        return Ok(());
    }
    let now = ::time::OffsetDateTime::now_utc();
    let request = input.request;
    let query = PresenceQuery {
        slim: request.slim_presence || request.client_capabilities.simplified_presence_events,
        last_update_id: None,
        history_limit_days: request.presence_history_limit_days,
        now: now.unix_timestamp(),
    };
    let (found, last_update_id) = presences(conn, &input.ctx.realm.host, input.user, query)?;
    out.insert("presences".into(), Value::Object(found));
    out.insert(
        "server_timestamp".into(),
        (now.unix_timestamp_nanos() as f64 / 1e9).into(),
    );
    out.insert("presence_last_update_id".into(), last_update_id.into());
    Ok(())
}

//! The organization's configuration objects in a snapshot: `realm_linkifiers` (empty for
//! clients without `linkifier_url_template`, who could not read the templates),
//! `realm_playgrounds` and `realm_emoji`, each when asked for.

use super::input::{put, RegisterRequest, Snapshot, Wanted};
use crate::error::ActionResult;
use crate::present;
use parley_storage::DbConn;

/// Fills each part that is wanted.
pub(super) fn fill(
    conn: &mut DbConn,
    wanted: &Wanted,
    request: &RegisterRequest,
    out: &mut Snapshot,
) -> ActionResult<()> {
    if wanted.wants("realm_linkifiers") {
        let list = if request.client_capabilities.linkifier_url_template {
            present::realm::linkifiers(conn)?
        } else {
            Vec::new()
        };
        put(out, "realm_linkifiers", list);
    }
    if wanted.wants("realm_playgrounds") {
        put(out, "realm_playgrounds", present::realm::playgrounds(conn)?);
    }
    if wanted.wants("realm_emoji") {
        put(out, "realm_emoji", present::realm::realm_emoji(conn)?);
    }
    Ok(())
}

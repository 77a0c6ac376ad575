//! The `realm_user_groups` part of a snapshot: every group as `GET /user_groups` lists it.

use crate::error::ActionResult;
use crate::notify::groups::group_json;
use parley_domain::groups::GroupGraph;
use parley_domain::user::User;
use parley_storage::{groups, DbConn};
use serde_json::Value;

/// Every group as `realm_user_groups` lists it (deactivated ones included; the caller drops
/// them for clients without `include_deactivated_groups`).
pub(crate) fn group_objects(
    conn: &mut DbConn,
    graph: &GroupGraph,
    everyone: &[User],
) -> ActionResult<Vec<Value>> {
    Ok(groups::rows(conn)?
        .iter()
        .map(|row| group_json(row, graph, everyone))
        .collect())
}

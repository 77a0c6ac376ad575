//! The organization's groups and policy, loaded together for permission checks.

use parley_domain::groups::GroupGraph;
use parley_domain::realm::RealmPolicy;
use parley_storage::{groups, realms, DbConn, StorageError};

/// Groups and organization policy as of one transaction.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Every group with members and subgroups.
    pub groups: GroupGraph,
    /// Organization-wide permissions and limits.
    pub realm: RealmPolicy,
}

/// Loads the groups and the organization policy.
pub fn load(conn: &mut DbConn) -> Result<Policy, StorageError> {
    let groups = groups::graph(conn)?;
    let stored = realms::permissions(conn)?;
    let realm = RealmPolicy::from_stored(&stored, &groups);
    Ok(Policy { groups, realm })
}

//! The organization's groups and policy as read from the database, which the organization
//! cache keeps (`crate::policy::load` is how actions ask for them).

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

/// Reads the groups and the organization policy from the database; also answers whether they
/// may be cached: not while full membership is computed from the clock (a waiting period with
/// no announced cutoff yet), which changes without an event.
pub(crate) fn load_uncached(conn: &mut DbConn) -> Result<(Policy, bool), StorageError> {
    let groups = groups::graph(conn)?;
    let stored = realms::permissions(conn)?;
    let threshold =
        parley_domain::realm_settings::stored_or_default("waiting_period_threshold", &stored)
            .as_i64()
            .unwrap_or(0);
    let announced = stored
        .get(groups::FULL_MEMBER_CUTOFF)
        .is_some_and(|text| text.parse::<i64>().is_ok());
    let cacheable = threshold <= 0 || announced;
    let realm = RealmPolicy::from_stored(&stored, &groups);
    Ok((Policy { groups, realm }, cacheable))
}

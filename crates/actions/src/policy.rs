//! The organization's groups and policy, loaded together for permission checks. The
//! organization cache (`crate::realm_cache`) keeps them between changes; the type and its read
//! from the database live there, below every action that checks a permission.

pub use crate::realm_cache::Policy;
use parley_storage::{DbConn, StorageError};
use std::sync::Arc;

/// The groups and the organization policy: from the organization cache inside an action
/// (`crate::realm_cache`), else from the database.
pub fn load(conn: &mut DbConn) -> Result<Arc<Policy>, StorageError> {
    crate::realm_cache::policy(conn)
}

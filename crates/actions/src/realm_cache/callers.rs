//! API callers by address: the user an API request's address names and their API key, kept
//! with the rest of the organization cache so that authenticating a request needs neither a
//! statement nor a trip to the blocking pool (on PostgreSQL, the trip's thread switches cost
//! more than the statement). Only callers who authenticated are kept, so the entries follow the
//! active users and the addresses their clients use, not what strangers try.
//!
//! Whatever changes a user (deactivation, role, name, address, who may see it) announces it with
//! `realm_user` or, for bots and their keys, `realm_bot`; both invalidate the cache as the policy's
//! events do, on this process when recorded and on every process when delivered.

use super::RealmCache;
use parley_domain::user::User;

impl RealmCache {
    /// The user `address` (as [`key`] normalizes it) names and their API key, when kept and the
    /// cache may serve: no change in progress, and the organization known to be active.
    pub(crate) fn api_caller(&self, address: &str) -> Option<(User, String)> {
        if !self.serving() {
            return None;
        }
        let state = self.lock();
        if state.changing > 0 || state.realm_deactivated != Some(false) {
            return None;
        }
        let found = state.api_callers.get(&key(address)).cloned();
        if found.is_some() {
            self.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        found
    }

    /// Where the cache stands before a caller is read from the database: None when nothing
    /// read now may be kept.
    pub(crate) fn caller_mark(&self) -> Option<u64> {
        if !self.serving() {
            return None;
        }
        let state = self.lock();
        (state.changing == 0).then_some(state.generation)
    }

    /// Keeps a caller who authenticated with a key read after `mark`, unless the cache was
    /// invalidated since.
    pub(crate) fn keep_api_caller(&self, mark: u64, address: &str, user: User, api_key: String) {
        let mut state = self.lock();
        if state.generation == mark && state.changing == 0 {
            state.api_callers.insert(key(address), (user, api_key));
        }
    }
}

/// The form an address is kept under: as the lookup reads it (trimmed, lower case).
fn key(address: &str) -> String {
    address.trim().to_lowercase()
}

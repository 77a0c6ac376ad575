//! The pool's connections, and the r2d2 manager that opens and checks them.
//!
//! r2d2 can test a connection each time it is checked out (`SELECT 1`), so that one the
//! database closed (a PostgreSQL restart, an idle timeout) is replaced rather than handed to a
//! request that would then fail. Asked every time, that is one round trip per checkout: four of a
//! PostgreSQL channel send's twenty. Here a connection whose last use succeeded moments ago is
//! vouched for by that use and handed out untested; one idle longer, or whose last use failed
//! (perhaps because the connection broke), is tested as before.

use crate::conn::{establish_with, ConnOptions, DbConn};
use crate::url::DatabaseUrl;
use diesel::connection::SimpleConnection;
use std::time::{Duration, Instant};

/// How long a successful use vouches for a connection. Short: a connection the database closed
/// within this time of its last use fails the one request that takes it next, as a request in
/// flight when the database went away fails anyway.
const VOUCHED_FOR: Duration = Duration::from_secs(1);

/// A pooled connection: the connection, and when a use of it last succeeded.
pub struct PooledConn {
    conn: DbConn,
    last_success: Option<Instant>,
}

impl PooledConn {
    /// Records how the caller's use of the connection ended: a success vouches for it for a
    /// moment; a failure, which may mean the connection broke, has it tested at its next
    /// checkout.
    pub(crate) fn record_use(&mut self, succeeded: bool) {
        self.last_success = succeeded.then(Instant::now);
    }

    fn vouched_for(&self, now: Instant) -> bool {
        self.last_success
            .is_some_and(|at| now.saturating_duration_since(at) < VOUCHED_FOR)
    }
}

impl std::ops::Deref for PooledConn {
    type Target = DbConn;
    fn deref(&self) -> &DbConn {
        &self.conn
    }
}

impl std::ops::DerefMut for PooledConn {
    fn deref_mut(&mut self) -> &mut DbConn {
        &mut self.conn
    }
}

/// The r2d2 manager: opens connections with [`establish_with`].
#[derive(Debug)]
pub struct ConnectionManager {
    url: DatabaseUrl,
    options: ConnOptions,
}

impl ConnectionManager {
    /// A manager for this URL.
    pub fn new(url: DatabaseUrl, options: ConnOptions) -> Self {
        ConnectionManager { url, options }
    }
}

/// r2d2 needs an error type of its own.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ManagerError(String);

impl r2d2::ManageConnection for ConnectionManager {
    type Connection = PooledConn;
    type Error = ManagerError;

    fn connect(&self) -> Result<PooledConn, ManagerError> {
        let conn =
            establish_with(&self.url, self.options).map_err(|e| ManagerError(e.to_string()))?;
        Ok(PooledConn {
            conn,
            last_success: Some(Instant::now()),
        })
    }

    fn is_valid(&self, conn: &mut PooledConn) -> Result<(), ManagerError> {
        if conn.vouched_for(Instant::now()) {
            return Ok(());
        }
        conn.conn
            .batch_execute("SELECT 1")
            .map_err(|e| ManagerError(e.to_string()))?;
        conn.record_use(true);
        Ok(())
    }

    fn has_broken(&self, _conn: &mut PooledConn) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use r2d2::ManageConnection;

    #[test]
    fn a_connection_used_moments_ago_is_not_tested_but_one_idle_or_failed_is() {
        let dir = tempfile::tempdir().unwrap();
        let manager = ConnectionManager::new(
            DatabaseUrl::Sqlite(dir.path().join("pooled.db")),
            ConnOptions::default(),
        );
        let mut conn = manager.connect().unwrap();
        let now = Instant::now();
        assert!(conn.vouched_for(now));
        conn.record_use(false);
        assert!(!conn.vouched_for(now));
        manager.is_valid(&mut conn).unwrap();
        assert!(
            conn.vouched_for(Instant::now()),
            "a passed test vouches too"
        );
        assert!(!conn.vouched_for(Instant::now() + VOUCHED_FOR));
    }
}

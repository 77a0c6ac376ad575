//! The embedded migrations of both backends, applied at start.

use crate::conn::DbConn;
use crate::error::StorageError;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

const SQLITE: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
const POSTGRES: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// Applies every pending migration; returns how many ran.
pub fn run_pending(conn: &mut DbConn) -> Result<usize, StorageError> {
    let applied = match conn {
        DbConn::Sqlite(c) => c.run_pending_migrations(SQLITE).map(|v| v.len()),
        DbConn::Pg(c) => c.run_pending_migrations(POSTGRES).map(|v| v.len()),
    };
    applied.map_err(|e| StorageError::Migration(e.to_string()))
}

/// Whether some embedded migration is not applied yet.
pub fn has_pending(conn: &mut DbConn) -> Result<bool, StorageError> {
    let pending = match conn {
        DbConn::Sqlite(c) => c.pending_migrations(SQLITE).map(|v| !v.is_empty()),
        DbConn::Pg(c) => c.pending_migrations(POSTGRES).map(|v| !v.is_empty()),
    };
    pending.map_err(|e| StorageError::Migration(e.to_string()))
}

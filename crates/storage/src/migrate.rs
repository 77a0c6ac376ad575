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

/// Applies the pending migrations whose version sorts before `version` (digits only, e.g.
/// `20261126000080`), in order; returns how many ran. For tests that seed a database in the
/// schema before a migration and then check what the migration makes of it.
pub fn run_pending_before(conn: &mut DbConn, version: &str) -> Result<usize, StorageError> {
    use diesel::migration::MigrationSource;
    fn before<DB: diesel::backend::Backend>(
        harness: &mut impl MigrationHarness<DB>,
        source: EmbeddedMigrations,
        version: &str,
    ) -> diesel::migration::Result<usize> {
        let applied = harness.applied_migrations()?;
        let mut pending: Vec<_> = MigrationSource::<DB>::migrations(&source)?
            .into_iter()
            .filter(|m| {
                let v = m.name().version().to_string();
                v.as_str() < version && !applied.iter().any(|a| a.to_string() == v)
            })
            .collect();
        pending.sort_by_key(|m| m.name().version().to_string());
        for migration in &pending {
            harness.run_migration(migration.as_ref())?;
        }
        Ok(pending.len())
    }
    let applied = match conn {
        DbConn::Sqlite(c) => before(c, SQLITE, version),
        DbConn::Pg(c) => before(c, POSTGRES, version),
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use diesel::connection::SimpleConnection;

    #[test]
    fn a_missing_migration_is_pending() {
        let dir = std::env::temp_dir().join(format!("parley-pending-{}", std::process::id()));
        let url = crate::url::DatabaseUrl::Sqlite(dir.join("p.db"));
        let mut conn = crate::conn::establish(&url).unwrap();
        assert!(has_pending(&mut conn).unwrap());
        run_pending(&mut conn).unwrap();
        assert!(!has_pending(&mut conn).unwrap());
        conn.batch_execute(
            "DELETE FROM __diesel_schema_migrations \
             WHERE version = (SELECT MAX(version) FROM __diesel_schema_migrations)",
        )
        .unwrap();
        assert!(has_pending(&mut conn).unwrap());
        drop(conn);
        let _ = std::fs::remove_dir_all(dir);
    }
}

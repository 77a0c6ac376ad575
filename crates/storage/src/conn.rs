//! One connection type over both backends, and the r2d2 manager that opens it with the right
//! per-connection settings.

// The derive generates public helper items that cannot carry doc comments.
#![allow(missing_docs)]

use crate::error::StorageError;
use crate::url::DatabaseUrl;
use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use diesel::Connection;

/// A connection to either backend; every query in this crate runs on it.
#[derive(diesel::MultiConnection)]
pub enum DbConn {
    /// The embedded default.
    Sqlite(SqliteConnection),
    /// A PostgreSQL server.
    Pg(PgConnection),
}

/// How long an SQLite writer waits for another's lock before failing.
pub const SQLITE_BUSY_TIMEOUT_MS: u32 = 5_000;

/// Opens a connection of the backend that the URL names, with SQLite's WAL mode, foreign keys and
/// busy timeout switched on.
pub fn establish(url: &DatabaseUrl) -> Result<DbConn, StorageError> {
    match url {
        DatabaseUrl::Sqlite(path) => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| {
                    StorageError::Connect(format!("cannot create {}: {e}", parent.display()))
                })?;
            }
            let path = path.to_str().ok_or_else(|| {
                StorageError::InvalidUrl(format!("{} is not valid UTF-8", path.display()))
            })?;
            let mut conn = SqliteConnection::establish(path)
                .map_err(|e| StorageError::Connect(format!("SQLite {path}: {e}")))?;
            conn.batch_execute(&format!(
                "PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS};
                 PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = NORMAL;
                 PRAGMA foreign_keys = ON;
                 PRAGMA cache_size = -32000;"
            ))?;
            Ok(DbConn::Sqlite(conn))
        }
        DatabaseUrl::Postgres(raw) => PgConnection::establish(raw)
            .map(DbConn::Pg)
            .map_err(|e| StorageError::Connect(format!("PostgreSQL {}: {e}", url.redacted()))),
    }
}

/// The r2d2 manager: opens connections with [`establish`].
#[derive(Debug)]
pub struct ConnectionManager {
    url: DatabaseUrl,
}

impl ConnectionManager {
    /// A manager for this URL.
    pub fn new(url: DatabaseUrl) -> Self {
        ConnectionManager { url }
    }
}

/// r2d2 needs an error type of its own.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ManagerError(String);

impl r2d2::ManageConnection for ConnectionManager {
    type Connection = DbConn;
    type Error = ManagerError;

    fn connect(&self) -> Result<DbConn, ManagerError> {
        establish(&self.url).map_err(|e| ManagerError(e.to_string()))
    }

    fn is_valid(&self, conn: &mut DbConn) -> Result<(), ManagerError> {
        conn.batch_execute("SELECT 1")
            .map_err(|e| ManagerError(e.to_string()))
    }

    fn has_broken(&self, _conn: &mut DbConn) -> bool {
        false
    }
}

/// Runs the same diesel expression on whichever backend `conn` is, with `$c` bound to the
/// concrete connection. For the queries the multi-backend type cannot express (multi-row
/// inserts, dialect-specific SQL), keeping them inside this crate.
#[macro_export]
macro_rules! on_backend {
    ($conn:expr, |$c:ident| $body:expr) => {
        match $conn {
            $crate::conn::DbConn::Sqlite($c) => $body,
            $crate::conn::DbConn::Pg($c) => $body,
        }
    };
}

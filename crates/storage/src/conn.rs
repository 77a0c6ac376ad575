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

impl DbConn {
    /// This connection as PostgreSQL's, for what only PostgreSQL has (the event log, the
    /// cluster's tables, the shared rate-limit buckets); on SQLite an error naming `what`.
    pub(crate) fn postgres_only(&mut self, what: &str) -> Result<&mut PgConnection, StorageError> {
        match self {
            DbConn::Pg(conn) => Ok(conn),
            DbConn::Sqlite(_) => Err(StorageError::Database(
                diesel::result::Error::QueryBuilderError(
                    format!("{what} PostgreSQL's only").into(),
                ),
            )),
        }
    }
}

/// How long an SQLite writer waits for another's lock before failing.
pub const SQLITE_BUSY_TIMEOUT_MS: u32 = 5_000;

/// SQLite's memory budget for the whole process, in KiB: its page caches and everything else it
/// allocates (`PRAGMA soft_heap_limit`, which is process-wide). Each connection's cache may grow
/// to the whole budget, and together they stay near it: when SQLite's memory nears the limit,
/// page caches recycle their pages instead of allocating more. Without it, every pooled
/// connection kept up to its own 32 MB.
pub const SQLITE_MEMORY_BUDGET_KIB: i64 = 48 * 1024;

/// The memory SQLite holds in this process, in bytes: its page caches and everything else it
/// allocated (what [`SQLITE_MEMORY_BUDGET_KIB`] bounds).
pub fn sqlite_memory_used() -> i64 {
    // SAFETY: sqlite3_memory_used only reads SQLite's own counter; it takes no arguments.
    unsafe { libsqlite3_sys::sqlite3_memory_used() }
}

/// PostgreSQL's planner assumes by default that reading a page out of order costs four times
/// reading the next one (`random_page_cost = 4`), a figure for spinning disks. A chat server's
/// working set is in memory or on SSD, where the two cost about the same, and with 4 PostgreSQL
/// reads a channel's newest page by walking every message's primary key backwards, filtering
/// on the channel (3,778 rows for 100, 2.9 ms at 300,000 messages), rather than the channel's
/// own index (100 rows, 0.6 ms). Each connection sets 1.1, the usual figure for SSDs, unless the
/// operator chose a value (in `postgresql.conf`, for the database or role, or in the URL's
/// `options`): only the built-in default is replaced.
const PG_SESSION_SETTINGS: &str = "SELECT set_config('random_page_cost', '1.1', false) \
     WHERE current_setting('random_page_cost') = '4'";

/// When SQLite waits for the disk (`PRAGMA synchronous`, in WAL mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SqliteSynchronous {
    /// Every commit is on the disk before it is acknowledged: nothing acknowledged is lost even
    /// when the machine loses power. One `fsync` of the write-ahead log per commit.
    #[default]
    Full,
    /// The log is synced only at checkpoints: a process crash loses nothing, but a power loss
    /// or kernel crash may lose the last commits before the checkpoint.
    Normal,
}

impl SqliteSynchronous {
    /// Parses `full` or `normal` (any case).
    pub fn parse(text: &str) -> Option<SqliteSynchronous> {
        match text.trim().to_ascii_lowercase().as_str() {
            "full" => Some(SqliteSynchronous::Full),
            "normal" => Some(SqliteSynchronous::Normal),
            _ => None,
        }
    }

    /// The PRAGMA's value.
    pub fn as_str(self) -> &'static str {
        match self {
            SqliteSynchronous::Full => "FULL",
            SqliteSynchronous::Normal => "NORMAL",
        }
    }
}

/// Per-connection settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnOptions {
    /// SQLite's `synchronous` (ignored on PostgreSQL, which syncs every commit by default).
    pub sqlite_synchronous: SqliteSynchronous,
}

/// Opens a connection of the backend that the URL names, with SQLite's WAL mode, foreign keys,
/// busy timeout and `synchronous = FULL` switched on.
pub fn establish(url: &DatabaseUrl) -> Result<DbConn, StorageError> {
    establish_with(url, ConnOptions::default())
}

/// Creates the SQLite file readable by its owner only (it holds password hashes and API keys);
/// SQLite gives its write-ahead log and shared-memory files the database file's mode. Files of an
/// older install are narrowed to the same mode.
fn private_sqlite_files(path: &std::path::Path) -> Result<(), StorageError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let failed = |e: std::io::Error| {
            StorageError::Connect(format!("cannot create {}: {e}", path.display()))
        };
        if !path.exists() {
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(path)
                .map_err(failed)?;
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            let file = std::path::Path::new(&name);
            if let Ok(meta) = std::fs::metadata(file) {
                if meta.permissions().mode() & 0o077 != 0 {
                    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))
                        .map_err(failed)?;
                }
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// [`establish`] with these settings.
pub fn establish_with(url: &DatabaseUrl, options: ConnOptions) -> Result<DbConn, StorageError> {
    match url {
        DatabaseUrl::Sqlite(path) => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| {
                    StorageError::Connect(format!("cannot create {}: {e}", parent.display()))
                })?;
            }
            private_sqlite_files(path)?;
            let path = path.to_str().ok_or_else(|| {
                StorageError::InvalidUrl(format!("{} is not valid UTF-8", path.display()))
            })?;
            let mut conn = SqliteConnection::establish(path)
                .map_err(|e| StorageError::Connect(format!("SQLite {path}: {e}")))?;
            conn.batch_execute(&format!(
                "PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS};
                 PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = {};
                 PRAGMA foreign_keys = ON;
                 PRAGMA cache_size = -{SQLITE_MEMORY_BUDGET_KIB};
                 PRAGMA soft_heap_limit = {};",
                options.sqlite_synchronous.as_str(),
                SQLITE_MEMORY_BUDGET_KIB * 1024
            ))?;
            Ok(DbConn::Sqlite(conn))
        }
        DatabaseUrl::Postgres(raw) => {
            let mut conn = PgConnection::establish(raw).map_err(|e| {
                StorageError::Connect(format!("PostgreSQL {}: {e}", url.redacted()))
            })?;
            conn.batch_execute(PG_SESSION_SETTINGS)?;
            Ok(DbConn::Pg(conn))
        }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use diesel::prelude::*;

    #[derive(QueryableByName)]
    struct Synchronous {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        synchronous: i32,
    }

    fn synchronous(conn: &mut DbConn) -> i32 {
        let DbConn::Sqlite(conn) = conn else {
            unreachable!()
        };
        diesel::sql_query("PRAGMA synchronous")
            .get_result::<Synchronous>(conn)
            .unwrap()
            .synchronous
    }

    #[test]
    fn sqlite_syncs_every_commit_unless_told_otherwise() {
        let dir = std::env::temp_dir().join(format!("parley-sync-{}", std::process::id()));
        let url = DatabaseUrl::Sqlite(dir.join("sync.db"));
        // 2 is FULL, 1 NORMAL.
        assert_eq!(synchronous(&mut establish(&url).unwrap()), 2);
        let normal = ConnOptions {
            sqlite_synchronous: SqliteSynchronous::Normal,
        };
        assert_eq!(synchronous(&mut establish_with(&url, normal).unwrap()), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join("sync.db"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "the database holds password hashes");
        }
        let _ = std::fs::remove_dir_all(dir);
        assert_eq!(
            SqliteSynchronous::parse("Normal"),
            Some(SqliteSynchronous::Normal)
        );
        assert_eq!(
            SqliteSynchronous::parse("full"),
            Some(SqliteSynchronous::Full)
        );
        assert_eq!(SqliteSynchronous::parse("off"), None);
    }

    #[derive(QueryableByName)]
    struct CompileOption {
        #[diesel(sql_type = diesel::sql_types::Text)]
        compile_options: String,
    }

    /// `.cargo/config.toml` builds SQLite without STAT4: with it, statements are prepared again
    /// whenever their bindings change once ANALYZE has run.
    #[test]
    fn sqlite_is_built_without_stat4() {
        let mut conn = diesel::SqliteConnection::establish(":memory:").unwrap();
        let options: Vec<String> = diesel::sql_query("PRAGMA compile_options")
            .load::<CompileOption>(&mut conn)
            .unwrap()
            .into_iter()
            .map(|o| o.compile_options)
            .collect();
        assert!(options.iter().any(|o| o == "ENABLE_FTS5"), "{options:?}");
        assert!(
            !options.iter().any(|o| o.starts_with("ENABLE_STAT")),
            "{options:?}"
        );
    }
}

//! Scratch databases for tests (feature `testing`): a fresh SQLite file, or a fresh database on
//! the PostgreSQL server that `TEST_DATABASE_URL` names, so tests run in parallel without sharing
//! state and clean up after themselves.
//!
//! Migrating a database costs more than most tests, so each backend is migrated once into a
//! template and every scratch database starts as a copy of it: a file copy for SQLite,
//! `CREATE DATABASE ... TEMPLATE` for PostgreSQL.

use crate::url::DatabaseUrl;
use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A backend to run a test on.
#[derive(Debug, Clone)]
pub enum Backend {
    /// A fresh SQLite file.
    Sqlite,
    /// A fresh database on the server of this URL.
    Postgres(String),
}

impl Backend {
    /// SQLite, plus PostgreSQL when `TEST_DATABASE_URL` is set.
    pub fn available() -> Vec<Backend> {
        let mut backends = vec![Backend::Sqlite];
        if let Ok(url) = std::env::var("TEST_DATABASE_URL") {
            if !url.trim().is_empty() {
                backends.push(Backend::Postgres(url));
            }
        }
        backends
    }

    /// PostgreSQL when `TEST_DATABASE_URL` is set, for tests of what only it does (several
    /// processes on one database, its settings).
    pub fn postgres() -> Option<Backend> {
        Backend::available()
            .into_iter()
            .find(|b| matches!(b, Backend::Postgres(_)))
    }

    /// The backend's name, for test output.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres(_) => "PostgreSQL",
        }
    }
}

/// A scratch database; dropped (file or database) when this value is.
pub struct ScratchDatabase {
    /// Where to connect.
    pub url: DatabaseUrl,
    /// The URL as text, for passing to the binary.
    pub url_text: String,
    _dir: Option<tempfile::TempDir>,
    /// The server's URL and the database to drop.
    postgres: Option<(String, String)>,
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        if let Some((base_url, name)) = &self.postgres {
            if let Ok(mut conn) = PgConnection::establish(base_url) {
                // FORCE ends the connections the test's pool may still hold.
                let _ = conn.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        }
    }
}

/// Creates a scratch database of `backend`, migrated. Panics when PostgreSQL was asked for and
/// cannot be reached: a test run that was meant to cover it must not pass without it.
#[allow(clippy::panic, clippy::expect_used)]
pub fn scratch_database(backend: &Backend) -> ScratchDatabase {
    match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().expect("temporary directory");
            let path = dir.path().join("parley.db");
            std::fs::copy(sqlite_template(), &path).expect("copy the SQLite template");
            ScratchDatabase {
                url_text: format!("sqlite://{}", path.display()),
                url: DatabaseUrl::Sqlite(path),
                _dir: Some(dir),
                postgres: None,
            }
        }
        Backend::Postgres(base_url) => {
            let template = postgres_template(base_url);
            let name = format!("t_{}", uuid::Uuid::new_v4().simple());
            let mut conn = connect(base_url);
            conn.batch_execute(&format!("CREATE DATABASE {name} TEMPLATE {template}"))
                .expect("create a test database from the template");
            let url = with_database(base_url, &name);
            ScratchDatabase {
                url: DatabaseUrl::Postgres(url.clone()),
                url_text: url,
                _dir: None,
                postgres: Some((base_url.clone(), name)),
            }
        }
    }
}

/// A scratch database of `backend` with no migration applied, for tests of a migration on a
/// database in an older schema ([`crate::migrate::run_pending_before`]).
#[allow(clippy::expect_used)]
pub fn empty_database(backend: &Backend) -> ScratchDatabase {
    match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().expect("temporary directory");
            let path = dir.path().join("parley.db");
            ScratchDatabase {
                url_text: format!("sqlite://{}", path.display()),
                url: DatabaseUrl::Sqlite(path),
                _dir: Some(dir),
                postgres: None,
            }
        }
        Backend::Postgres(base_url) => {
            let name = format!("t_{}", uuid::Uuid::new_v4().simple());
            let mut conn = connect(base_url);
            conn.batch_execute(&format!("CREATE DATABASE {name}"))
                .expect("create an empty test database");
            let url = with_database(base_url, &name);
            ScratchDatabase {
                url: DatabaseUrl::Postgres(url.clone()),
                url_text: url,
                _dir: None,
                postgres: Some((base_url.clone(), name)),
            }
        }
    }
}

#[allow(clippy::panic)]
fn connect(url: &str) -> PgConnection {
    PgConnection::establish(url).unwrap_or_else(|e| {
        panic!("TEST_DATABASE_URL is set but PostgreSQL cannot be reached: {e}")
    })
}

/// The migrated SQLite file this process copies for each test, made on first use. It lives in a
/// directory named for the process, so concurrent test processes never share one; directories
/// left by earlier processes are removed once they are an hour old.
#[allow(clippy::expect_used)]
fn sqlite_template() -> &'static Path {
    static TEMPLATE: OnceLock<PathBuf> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let root = std::env::temp_dir().join("parley-test-templates");
        remove_stale(&root);
        let dir = root.join(std::process::id().to_string());
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("template directory");
        let path = dir.join("template.db");
        let mut conn = crate::conn::establish(&DatabaseUrl::Sqlite(path.clone()))
            .expect("open the SQLite template");
        crate::migrate::run_pending(&mut conn).expect("migrate the SQLite template");
        // One self-contained file to copy: no write-ahead log beside it.
        conn.batch_execute("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;")
            .expect("checkpoint the SQLite template");
        path
    })
}

fn remove_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let hour = std::time::Duration::from_secs(3600);
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > hour);
        if old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The name of the migrated template database beside the one `base_url` names, brought up to
/// date on first use in this process. An advisory lock keeps concurrent processes from
/// migrating it at once.
#[allow(clippy::expect_used)]
fn postgres_template(base_url: &str) -> &'static str {
    static TEMPLATE: OnceLock<String> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let base_name = database_name(base_url);
        let template = format!("{base_name}_template");
        let mut conn = connect(base_url);
        conn.batch_execute("SELECT pg_advisory_lock(72217)")
            .expect("lock the test template");
        if let Err(e) = conn.batch_execute(&format!("CREATE DATABASE {template}")) {
            // Made by an earlier process: migrating below brings it up to date.
            assert!(
                e.to_string().contains("already exists"),
                "create the test template: {e}"
            );
        }
        {
            let url = with_database(base_url, &template);
            let mut migrating = crate::conn::establish(&DatabaseUrl::Postgres(url))
                .expect("connect to the test template");
            crate::migrate::run_pending(&mut migrating).expect("migrate the test template");
        }
        conn.batch_execute("SELECT pg_advisory_unlock(72217)")
            .expect("unlock the test template");
        template
    })
}

/// The database name in a PostgreSQL URL (`postgres` when it names none).
fn database_name(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .map(|u| u.path().trim_start_matches('/').to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "postgres".to_owned())
}

/// `url` with its database replaced by `name`, keeping user, host and options.
#[allow(clippy::expect_used)]
fn with_database(url: &str, name: &str) -> String {
    let mut parsed = url::Url::parse(url).expect("TEST_DATABASE_URL is a URL");
    parsed.set_path(&format!("/{name}"));
    parsed.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_database_of_a_url() {
        assert_eq!(
            with_database("postgres://root@127.0.0.1/ci?sslmode=disable", "t_1"),
            "postgres://root@127.0.0.1/t_1?sslmode=disable"
        );
        assert_eq!(database_name("postgres://root@127.0.0.1/ci"), "ci");
        assert_eq!(database_name("postgres://root@127.0.0.1"), "postgres");
    }
}

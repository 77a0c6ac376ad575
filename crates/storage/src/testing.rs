//! Scratch databases for tests (feature `testing`): a fresh SQLite file, or a fresh schema in the
//! PostgreSQL database that `TEST_DATABASE_URL` names, so tests run in parallel without sharing
//! state and clean up after themselves.

use crate::url::DatabaseUrl;
use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection};

/// A backend to run a test on.
#[derive(Debug, Clone)]
pub enum Backend {
    /// A fresh SQLite file.
    Sqlite,
    /// A fresh schema in the database this URL names.
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

    /// The backend's name, for test output.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres(_) => "PostgreSQL",
        }
    }
}

/// A scratch database; dropped (file or schema) when this value is.
pub struct ScratchDatabase {
    /// Where to connect.
    pub url: DatabaseUrl,
    /// The URL as text, for passing to the binary.
    pub url_text: String,
    _dir: Option<tempfile::TempDir>,
    schema: Option<(String, String)>,
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        if let Some((base_url, schema)) = &self.schema {
            if let Ok(mut conn) = PgConnection::establish(base_url) {
                let _ = conn.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
            }
        }
    }
}

/// Creates a scratch database of `backend`. Panics when PostgreSQL was asked for and cannot be
/// reached: a test run that was meant to cover it must not pass without it.
#[allow(clippy::panic, clippy::expect_used)]
pub fn scratch_database(backend: &Backend) -> ScratchDatabase {
    match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().expect("temporary directory");
            let path = dir.path().join("parley.db");
            ScratchDatabase {
                url_text: format!("sqlite://{}", path.display()),
                url: DatabaseUrl::Sqlite(path),
                _dir: Some(dir),
                schema: None,
            }
        }
        Backend::Postgres(base_url) => {
            let schema = format!("t_{}", uuid::Uuid::new_v4().simple());
            let mut conn = PgConnection::establish(base_url).unwrap_or_else(|e| {
                panic!("TEST_DATABASE_URL is set but PostgreSQL cannot be reached: {e}")
            });
            conn.batch_execute(&format!("CREATE SCHEMA {schema}"))
                .expect("create test schema");
            let separator = if base_url.contains('?') { '&' } else { '?' };
            let url = format!("{base_url}{separator}options=-csearch_path%3D{schema}");
            ScratchDatabase {
                url: DatabaseUrl::Postgres(url.clone()),
                url_text: url,
                _dir: None,
                schema: Some((base_url.clone(), schema)),
            }
        }
    }
}

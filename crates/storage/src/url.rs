//! Database URLs: the scheme chooses the backend, and a wrong URL is reported plainly rather than
//! by trying every backend in turn.

use crate::error::StorageError;
use std::path::PathBuf;

/// A parsed database URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// An SQLite database file (created when missing).
    Sqlite(PathBuf),
    /// A PostgreSQL connection string, passed to libpq as given.
    Postgres(String),
}

impl DatabaseUrl {
    /// Parses `sqlite://PATH` (relative), `sqlite:///ABS/PATH`, `sqlite:PATH`, or
    /// `postgres://...` / `postgresql://...`.
    pub fn parse(url: &str) -> Result<DatabaseUrl, StorageError> {
        let url = url.trim();
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(DatabaseUrl::Postgres(url.to_owned()));
        }
        if let Some(rest) = url.strip_prefix("sqlite:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            let path = path.split('?').next().unwrap_or_default();
            if path.is_empty() {
                return Err(StorageError::InvalidUrl(format!(
                    "'{url}' names no file; write sqlite://PATH, e.g. sqlite://data/parley.db"
                )));
            }
            let decoded = percent_encoding::percent_decode_str(path)
                .decode_utf8()
                .map_err(|_| StorageError::InvalidUrl(format!("'{url}' is not valid UTF-8")))?;
            return Ok(DatabaseUrl::Sqlite(PathBuf::from(decoded.as_ref())));
        }
        let scheme = url.split_once("://").map(|(s, _)| s).unwrap_or("");
        let hint = "use sqlite://PATH for SQLite or postgres://USER@HOST/DATABASE for PostgreSQL";
        if scheme.is_empty() {
            Err(StorageError::InvalidUrl(format!(
                "'{url}' has no scheme; {hint}"
            )))
        } else {
            Err(StorageError::InvalidUrl(format!(
                "unsupported scheme '{scheme}' in '{}'; {hint}",
                redact(url)
            )))
        }
    }

    /// The URL with any password hidden, for logs and messages.
    pub fn redacted(&self) -> String {
        match self {
            DatabaseUrl::Sqlite(path) => format!("sqlite://{}", path.display()),
            DatabaseUrl::Postgres(url) => redact(url),
        }
    }

    /// The backend's name.
    pub fn backend_name(&self) -> &'static str {
        match self {
            DatabaseUrl::Sqlite(_) => "SQLite",
            DatabaseUrl::Postgres(_) => "PostgreSQL",
        }
    }
}

/// Hides the password of `scheme://user:password@host`.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.split_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chooses_backend_by_scheme() {
        assert_eq!(
            DatabaseUrl::parse("sqlite://data/parley.db").unwrap(),
            DatabaseUrl::Sqlite("data/parley.db".into())
        );
        assert_eq!(
            DatabaseUrl::parse("sqlite:///var/lib/p.db").unwrap(),
            DatabaseUrl::Sqlite("/var/lib/p.db".into())
        );
        assert_eq!(
            DatabaseUrl::parse("postgresql://root@localhost/x").unwrap(),
            DatabaseUrl::Postgres("postgresql://root@localhost/x".into())
        );
    }

    #[test]
    fn wrong_urls_say_what_is_wrong() {
        let err = DatabaseUrl::parse("mysql://u:secret@h/db")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unsupported scheme 'mysql'"), "{err}");
        assert!(!err.contains("secret"), "{err}");
        let err = DatabaseUrl::parse("parley.db").unwrap_err().to_string();
        assert!(err.contains("no scheme"), "{err}");
        assert!(DatabaseUrl::parse("sqlite://").is_err());
    }

    #[test]
    fn redacts_passwords() {
        let url = DatabaseUrl::parse("postgres://me:pw@host/db").unwrap();
        assert_eq!(url.redacted(), "postgres://me:***@host/db");
    }
}

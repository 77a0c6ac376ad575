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
            return Ok(DatabaseUrl::Postgres(without_local_tls(url)));
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

/// A PostgreSQL URL with `sslmode=disable` added when it names no `sslmode` and the server is on
/// this machine (a Unix socket, `localhost`, `127.0.0.1` or `::1`): libpq's default, `prefer`,
/// negotiates TLS whenever the server offers it, which costs a handshake per connection and
/// encryption of every query on a link that never leaves the machine. Any other host keeps
/// libpq's default, and an explicit `sslmode` is always kept.
fn without_local_tls(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let params: Vec<(&str, &str)> = query
        .unwrap_or_default()
        .split('&')
        .filter_map(|p| p.split_once('='))
        .collect();
    if params.iter().any(|(k, _)| *k == "sslmode") {
        return url.to_owned();
    }
    let authority = base
        .split_once("://")
        .map(|(_, rest)| rest)
        .unwrap_or_default()
        .split('/')
        .next()
        .unwrap_or_default();
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(bracketed) = hostport.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default()
    } else {
        hostport.split(':').next().unwrap_or_default()
    };
    let host = params
        .iter()
        .rev()
        .find(|(k, _)| *k == "host")
        .map_or(host, |(_, v)| *v);
    let host = percent_encoding::percent_decode_str(host).decode_utf8_lossy();
    let local = host.is_empty()
        || host.starts_with('/')
        || host.eq_ignore_ascii_case("localhost")
        || host == "::1"
        || host.starts_with("127.");
    if !local {
        return url.to_owned();
    }
    match query {
        Some(q) if !q.is_empty() => format!("{url}&sslmode=disable"),
        Some(_) => format!("{url}sslmode=disable"),
        None => format!("{url}?sslmode=disable"),
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
            DatabaseUrl::Postgres("postgresql://root@localhost/x?sslmode=disable".into())
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
    fn local_postgres_goes_without_tls_unless_asked() {
        let pg = |url: &str| match DatabaseUrl::parse(url).unwrap() {
            DatabaseUrl::Postgres(text) => text,
            DatabaseUrl::Sqlite(_) => unreachable!(),
        };
        for (given, expected) in [
            (
                "postgres://root@127.0.0.1/x",
                "postgres://root@127.0.0.1/x?sslmode=disable",
            ),
            (
                "postgres://u:p@localhost:5433/x?connect_timeout=5",
                "postgres://u:p@localhost:5433/x?connect_timeout=5&sslmode=disable",
            ),
            ("postgres:///x", "postgres:///x?sslmode=disable"),
            (
                "postgres://u@[::1]:5432/x",
                "postgres://u@[::1]:5432/x?sslmode=disable",
            ),
            (
                "postgres://u@/x?host=%2Frun%2Fpostgresql",
                "postgres://u@/x?host=%2Frun%2Fpostgresql&sslmode=disable",
            ),
            // Another machine, or a mode chosen by the operator: as given.
            (
                "postgres://u@db.example.com/x",
                "postgres://u@db.example.com/x",
            ),
            ("postgres://u@10.0.0.5/x", "postgres://u@10.0.0.5/x"),
            (
                "postgres://u@127.0.0.1/x?sslmode=require",
                "postgres://u@127.0.0.1/x?sslmode=require",
            ),
            (
                "postgres://u@localhost/x?host=db.example.com",
                "postgres://u@localhost/x?host=db.example.com",
            ),
        ] {
            assert_eq!(pg(given), expected, "{given}");
        }
    }

    #[test]
    fn redacts_passwords() {
        let url = DatabaseUrl::parse("postgres://me:pw@host/db").unwrap();
        assert_eq!(url.redacted(), "postgres://me:***@host/db");
    }
}

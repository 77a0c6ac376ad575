//! The clock, in one place so that every stored time uses the same unit (Unix seconds).

/// Now, in Unix seconds.
pub fn now() -> i64 {
    ::time::OffsetDateTime::now_utc().unix_timestamp()
}

/// A Unix time as ISO 8601 text in UTC (`2026-11-26T14:00:00Z`), as the `<time:...>` syntax
/// of messages reads it.
pub fn iso8601(unix: i64) -> String {
    ::time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| {
            t.format(&::time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| unix.to_string())
}

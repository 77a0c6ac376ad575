//! The clock, in one place so that every stored time uses the same unit (Unix seconds).

/// Now, in Unix seconds.
pub fn now() -> i64 {
    ::time::OffsetDateTime::now_utc().unix_timestamp()
}

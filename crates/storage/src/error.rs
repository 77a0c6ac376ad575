//! The storage layer's one error type.

/// Why a storage operation failed. Callers treat everything but [`StorageError::UniqueViolation`]
/// as an infrastructure failure.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The database URL is not one Parley can use.
    #[error("invalid database URL: {0}")]
    InvalidUrl(String),
    /// Connecting to the database failed.
    #[error("cannot connect to the database: {0}")]
    Connect(String),
    /// No connection could be taken from the pool in time.
    #[error("database connection pool: {0}")]
    Pool(#[from] r2d2::Error),
    /// Applying the embedded migrations failed.
    #[error("database migration failed: {0}")]
    Migration(String),
    /// A row with the same unique key exists already.
    #[error("a row with the same unique key exists: {0}")]
    UniqueViolation(String),
    /// Any other database error.
    #[error("database error: {0}")]
    Database(diesel::result::Error),
    /// The blocking task running a query was cancelled or panicked.
    #[error("database task failed: {0}")]
    Task(String),
}

impl From<diesel::result::Error> for StorageError {
    fn from(err: diesel::result::Error) -> Self {
        use diesel::result::{DatabaseErrorKind, Error};
        match err {
            Error::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
                StorageError::UniqueViolation(info.message().to_owned())
            }
            other => StorageError::Database(other),
        }
    }
}

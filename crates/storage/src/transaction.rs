//! One transaction on a connection the caller already holds, with the caller's own error type:
//! the pool's transactions, SQLite's writer and the event log's writers all run through it.

use crate::conn::DbConn;
use crate::error::StorageError;

/// Runs `f` in one transaction on this connection, for code that already holds one.
pub fn transaction<F, R, E>(conn: &mut DbConn, f: F) -> Result<R, E>
where
    F: FnOnce(&mut DbConn) -> Result<R, E>,
    E: From<StorageError>,
{
    use diesel::Connection;
    enum Failure<E> {
        Caller(E),
        Database(diesel::result::Error),
    }
    impl<E> From<diesel::result::Error> for Failure<E> {
        fn from(err: diesel::result::Error) -> Self {
            Failure::Database(err)
        }
    }
    conn.transaction::<R, Failure<E>, _>(|conn| f(conn).map_err(Failure::Caller))
        .map_err(|failure| match failure {
            Failure::Caller(err) => err,
            Failure::Database(err) => E::from(StorageError::from(err)),
        })
}

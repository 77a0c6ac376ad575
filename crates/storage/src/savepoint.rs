//! Nested transactions (savepoints) inside the caller's transaction.

use crate::conn::DbConn;
use crate::error::StorageError;
use diesel::Connection;

/// Why a savepoint ended: the work's own outcome, or the database's error.
enum End<T, E> {
    Rollback(Result<T, E>),
    Db(diesel::result::Error),
}

impl<T, E> From<diesel::result::Error> for End<T, E> {
    fn from(e: diesel::result::Error) -> Self {
        End::Db(e)
    }
}

/// Runs `f` in a savepoint and rolls everything it wrote back, whatever it returns: a dry run
/// that checks a change exactly as it would be made.
pub fn rolled_back<T, E>(
    conn: &mut DbConn,
    f: impl FnOnce(&mut DbConn) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<StorageError>,
{
    match conn.transaction::<(), End<T, E>, _>(|conn| Err(End::Rollback(f(conn)))) {
        Err(End::Rollback(outcome)) => outcome,
        Err(End::Db(e)) => Err(StorageError::from(e).into()),
        Ok(()) => unreachable!("the savepoint always rolls back"),
    }
}

/// Runs `f` in a savepoint: kept when it succeeds, rolled back when it fails, so the caller's
/// transaction can go on either way.
pub fn savepoint<T, E>(
    conn: &mut DbConn,
    f: impl FnOnce(&mut DbConn) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<StorageError>,
{
    match conn.transaction::<T, End<T, E>, _>(|conn| f(conn).map_err(|e| End::Rollback(Err(e)))) {
        Ok(value) => Ok(value),
        Err(End::Rollback(outcome)) => outcome,
        Err(End::Db(e)) => Err(StorageError::from(e).into()),
    }
}

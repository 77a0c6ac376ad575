//! Two connections reading one snapshot at once, so that a long read (a register's) is split
//! between them and takes the time of its longer half, not of both.
//!
//! PostgreSQL lets a `REPEATABLE READ` transaction export its snapshot (`pg_export_snapshot`)
//! and another transaction adopt it (`SET TRANSACTION SNAPSHOT`): both then see exactly the
//! same committed data, so a snapshot read at an event-log position stays one snapshot however
//! it is split. The exported snapshot lives as long as the exporting transaction, which waits
//! for the other half before it ends. SQLite has no such thing, and there both halves run one
//! after the other on the first connection, as they do when no idle connection is at hand:
//! a spare is only taken when the pool has one idle, never waited for, so two registers cannot
//! each hold one connection and wait for a second.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::pool::Db;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::Text;

/// Runs `main` on `conn` (inside a `REPEATABLE READ` transaction) and `side` at the same time
/// on an idle connection of `db` that sees the same snapshot; both run on `conn`, `main` first,
/// when the database cannot share snapshots or no connection is idle.
pub fn both<A, B, E>(
    db: &Db,
    conn: &mut DbConn,
    main: impl FnOnce(&mut DbConn) -> Result<A, E>,
    side: impl FnOnce(&mut DbConn) -> Result<B, E> + Send,
) -> Result<(A, B), E>
where
    B: Send,
    E: From<StorageError> + Send,
{
    let shared = match conn {
        DbConn::Pg(pg) => match db.try_conn() {
            Some(spare) => Some((export(pg)?, spare)),
            None => None,
        },
        DbConn::Sqlite(_) => None,
    };
    let Some((id, mut spare)) = shared else {
        let a = main(conn)?;
        return Ok((a, side(conn)?));
    };
    std::thread::scope(|scope| {
        let other = scope.spawn(move || {
            let result = crate::transaction::transaction(&mut spare, |other| {
                adopt(other, &id)?;
                side(other)
            });
            spare.record_use(result.is_ok());
            result
        });
        let a = main(conn);
        let b = match other.join() {
            Ok(b) => b,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        Ok((a?, b?))
    })
}

/// The ID of this transaction's snapshot, valid until it ends.
fn export(conn: &mut PgConnection) -> Result<String, StorageError> {
    #[derive(QueryableByName)]
    struct Exported {
        #[diesel(sql_type = Text)]
        id: String,
    }
    Ok(diesel::sql_query("SELECT pg_export_snapshot() AS id")
        .get_result::<Exported>(conn)?
        .id)
}

/// Makes this new transaction read the exported snapshot `id` (read-only).
fn adopt(conn: &mut DbConn, id: &str) -> Result<(), StorageError> {
    // The ID is PostgreSQL's own (hex digits and dashes); quoted as a literal all the same.
    let literal = id.replace('\'', "''");
    conn.batch_execute(&format!(
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; \
         SET TRANSACTION SNAPSHOT '{literal}'"
    ))?;
    Ok(())
}

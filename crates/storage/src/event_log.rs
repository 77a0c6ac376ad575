//! The event log of record on PostgreSQL (several server processes on one database; see
//! `docs/scaling.md`). Every action appends the events it caused in its own transaction; every
//! node reads the log in order and delivers it to its own queues.
//!
//! **Order.** [`append`] takes the next sequence number by updating the one row of
//! `event_log_head`, whose lock is held until the transaction ends. The transaction that takes
//! `n + 1` therefore waits until the one that took `n` has committed (and become visible), so
//! sequence order is commit order: a reader that sees entry `n + 1` also sees entry `n`, and
//! reading `seq > position` never skips an entry. The lock is taken last in a transaction, so
//! it is held for the commit alone.
//!
//! **Snapshots.** [`at_snapshot`] reads the head and then runs the caller's reads in one
//! `REPEATABLE READ` transaction: the data read is exactly the data of the entries up to the
//! head read (a later entry's transaction also updated the head, so it cannot be in the
//! snapshot without the head saying so).
//!
//! SQLite has none of this: a SQLite database is served by one process, which publishes in
//! memory. The functions here fail with [`StorageError::Database`] on SQLite.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::pg_listen::PgListen;
use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Text};
use std::time::Duration;

/// The channel of `NOTIFY` that wakes the nodes when entries are appended.
pub const CHANNEL: &str = "parley_events";

fn pg(conn: &mut DbConn) -> Result<&mut PgConnection, StorageError> {
    conn.postgres_only("the event log is")
}

#[derive(QueryableByName)]
struct Seq {
    #[diesel(sql_type = BigInt)]
    seq: i64,
}

/// One entry of the log: the events of one transaction, as JSON.
#[derive(Debug, Clone, QueryableByName)]
pub struct Entry {
    /// Its position.
    #[diesel(sql_type = BigInt)]
    pub seq: i64,
    /// The events, serialized by the caller.
    #[diesel(sql_type = Text)]
    pub events: String,
}

/// Appends one entry in the caller's transaction and returns its position; wakes every node
/// (`NOTIFY`, sent when the transaction commits, its payload `origin`: the appending node,
/// which delivers its own entries without reading them back, see [`Listener::wait`]). Call it
/// last in the transaction: from here to the commit, other appending transactions wait.
pub fn append(
    conn: &mut DbConn,
    events: &str,
    now: i64,
    origin: &str,
) -> Result<i64, StorageError> {
    let conn = pg(conn)?;
    Ok(Append {
        events,
        now,
        origin,
    }
    .get_result::<i64>(conn)?)
}

/// [`append`]'s statement. One statement, one round trip: the head's lock is held from here to
/// the commit, so every round trip after taking it would lengthen every writer's wait. Its own
/// query type rather than `sql_query`, which diesel never keeps prepared: this way PostgreSQL
/// parses and plans it once per connection instead of on every write.
#[derive(Debug, Clone, Copy)]
struct Append<'a> {
    events: &'a str,
    now: i64,
    origin: &'a str,
}

crate::prepared::prepared_pg_statement!(Append<'_>, BigInt);

impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for Append<'_> {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> QueryResult<()> {
        out.push_sql(
            "WITH head AS (UPDATE event_log_head SET seq = seq + 1 WHERE id = 1 RETURNING seq), \
             entry AS (INSERT INTO event_log (seq, events, created_at) SELECT seq, ",
        );
        out.push_bind_param::<Text, _>(&self.events)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.now)?;
        out.push_sql(" FROM head RETURNING seq) SELECT entry.seq FROM entry, pg_notify('");
        out.push_sql(CHANNEL);
        out.push_sql("', ");
        out.push_bind_param::<Text, _>(&self.origin)?;
        out.push_sql(") AS notified");
        Ok(())
    }
}

/// A transaction's events for the event log (PostgreSQL), appended when it commits.
#[derive(Debug, Clone)]
pub struct LogEntry {
    /// The events, serialized.
    pub events: String,
    /// The appending node ([`append`]).
    pub origin: String,
    /// When, in Unix seconds.
    pub now: i64,
}

/// Work run right after a commit ([`OnCommit::Run`]).
pub type CommitHook = Box<dyn FnOnce() + Send>;

/// What a logged transaction hands to its commit (`Db::logged_transaction`).
pub enum OnCommit {
    /// An entry for the event log (PostgreSQL), appended last in the transaction; its
    /// position comes back with the result.
    Append(LogEntry),
    /// Work run right after the commit and before any later write of the process commits
    /// (SQLite, whose writes take turns: inside the turn), so that such work runs in commit
    /// order: publishing the transaction's events, which clients expect in that order. Run
    /// from the task that commits, it must not block.
    Run(CommitHook),
}

impl std::fmt::Debug for OnCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OnCommit::Append(entry) => f.debug_tuple("Append").field(entry).finish(),
            OnCommit::Run(_) => f.write_str("Run"),
        }
    }
}

/// Appends one entry per element of `entries`, in order, in the caller's transaction (a batch
/// of the writer's, `writer.rs`), and returns their positions: [`append`] for many
/// transactions committed together, in one statement, so the head is taken once and last.
pub fn append_all(conn: &mut DbConn, entries: &[LogEntry]) -> Result<Vec<i64>, StorageError> {
    let conn = pg(conn)?;
    let events: Vec<&str> = entries.iter().map(|e| e.events.as_str()).collect();
    let mut origins: Vec<&str> = entries.iter().map(|e| e.origin.as_str()).collect();
    origins.dedup();
    let now = entries.iter().map(|e| e.now).max().unwrap_or_default();
    Ok(AppendAll {
        events: &events,
        now,
        origins: &origins,
    }
    .load::<i64>(conn)?)
}

/// [`append_all`]'s statement: the head moves by the number of entries, which take the
/// positions up to it in the order given; one notification per appending node (counted in the
/// final `WHERE`, so that PostgreSQL runs them: a plain `SELECT` in a `WITH` runs only when
/// something reads it).
#[derive(Debug, Clone, Copy)]
struct AppendAll<'a> {
    events: &'a [&'a str],
    now: i64,
    origins: &'a [&'a str],
}

crate::prepared::prepared_pg_statement!(AppendAll<'_>, BigInt);

impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for AppendAll<'_> {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> QueryResult<()> {
        use diesel::sql_types::Array;
        out.push_sql("WITH given AS (SELECT e.events, e.n FROM unnest(");
        out.push_bind_param::<Array<Text>, _>(&self.events)?;
        out.push_sql(
            "::text[]) WITH ORDINALITY AS e(events, n)), \
             head AS (UPDATE event_log_head SET seq = seq + (SELECT COUNT(*) FROM given) \
             WHERE id = 1 RETURNING seq), \
             entry AS (INSERT INTO event_log (seq, events, created_at) \
             SELECT head.seq - (SELECT COUNT(*) FROM given) + given.n, given.events, ",
        );
        out.push_bind_param::<BigInt, _>(&self.now)?;
        out.push_sql(
            " FROM head, given RETURNING seq), \
             notified AS (SELECT pg_notify('",
        );
        out.push_sql(CHANNEL);
        out.push_sql("', o) FROM unnest(");
        out.push_bind_param::<Array<Text>, _>(&self.origins)?;
        out.push_sql(
            "::text[]) AS o) \
             SELECT entry.seq FROM entry WHERE (SELECT COUNT(*) FROM notified) >= 0 \
             ORDER BY entry.seq",
        );
        Ok(())
    }
}

/// The position of the newest entry (0 when none was ever appended).
pub fn head(conn: &mut DbConn) -> Result<i64, StorageError> {
    let conn = pg(conn)?;
    Ok(
        diesel::sql_query("SELECT seq FROM event_log_head WHERE id = 1")
            .get_result::<Seq>(conn)?
            .seq,
    )
}

/// Up to `limit` entries after `position`, in order.
pub fn read_after(
    conn: &mut DbConn,
    position: i64,
    limit: i64,
) -> Result<Vec<Entry>, StorageError> {
    let conn = pg(conn)?;
    Ok(
        diesel::sql_query("SELECT seq, events FROM event_log WHERE seq > $1 ORDER BY seq LIMIT $2")
            .bind::<BigInt, _>(position)
            .bind::<BigInt, _>(limit)
            .load(conn)?,
    )
}

/// The oldest position still in the log (None when it is empty).
pub fn oldest(conn: &mut DbConn) -> Result<Option<i64>, StorageError> {
    let conn = pg(conn)?;
    #[derive(QueryableByName)]
    struct Oldest {
        #[diesel(sql_type = diesel::sql_types::Nullable<BigInt>)]
        seq: Option<i64>,
    }
    Ok(diesel::sql_query("SELECT MIN(seq) AS seq FROM event_log")
        .get_result::<Oldest>(conn)?
        .seq)
}

/// Deletes the entries at or below `position` appended before `before` (Unix seconds);
/// returns how many.
pub fn prune_delivered(
    conn: &mut DbConn,
    position: i64,
    before: i64,
) -> Result<usize, StorageError> {
    let conn = pg(conn)?;
    Ok(
        diesel::sql_query("DELETE FROM event_log WHERE seq <= $1 AND created_at < $2")
            .bind::<BigInt, _>(position)
            .bind::<BigInt, _>(before)
            .execute(conn)?,
    )
}

/// Runs `f` in one `REPEATABLE READ`, read-only transaction that first reads the log's head:
/// `f` gets that position and sees exactly the data of the entries up to it.
pub fn at_snapshot<R, E>(
    conn: &mut DbConn,
    f: impl FnOnce(&mut DbConn, i64) -> Result<R, E>,
) -> Result<R, E>
where
    E: From<StorageError>,
{
    crate::transaction::transaction(conn, |conn| {
        pg(conn)?
            .batch_execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .map_err(StorageError::from)?;
        let position = head(conn)?;
        f(conn, position)
    })
}

/// Tries to take the transaction-scoped advisory lock `key`: true when this transaction holds
/// it (until it ends), false when another does. Work guarded by it runs on one node at a time.
pub fn try_job_lock(conn: &mut DbConn, key: i64) -> Result<bool, StorageError> {
    let conn = pg(conn)?;
    #[derive(QueryableByName)]
    struct Taken {
        #[diesel(sql_type = Bool)]
        taken: bool,
    }
    Ok(
        diesel::sql_query("SELECT pg_try_advisory_xact_lock($1) AS taken")
            .bind::<BigInt, _>(key)
            .get_result::<Taken>(conn)?
            .taken,
    )
}

/// A connection listening for appended entries; it sleeps until one is notified.
pub struct Listener {
    conn: PgListen,
}

impl Listener {
    /// Connects to `url` (a PostgreSQL URL) and listens on [`CHANNEL`].
    pub fn connect(url: &str) -> Result<Listener, StorageError> {
        Ok(Listener {
            conn: PgListen::connect(url, CHANNEL)?,
        })
    }

    /// Waits up to `timeout` for appends and says whether a node other than `me` appended;
    /// `false` when only `me` did or the time passed. An error means the connection is lost.
    /// A notification without an origin (from an earlier version) counts as another node's.
    pub fn wait(&mut self, me: &str, timeout: Duration) -> Result<bool, StorageError> {
        Ok(self.conn.wait(timeout)?.iter().any(|origin| origin != me))
    }
}

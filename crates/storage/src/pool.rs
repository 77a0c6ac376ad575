//! The connection pool, and the one way the async layers run blocking queries: on tokio's blocking
//! threads, never on the executor.

use crate::conn::{ConnOptions, DbConn, SqliteSynchronous};
use crate::error::StorageError;
use crate::event_log::{CommitHook, OnCommit};
use crate::migrate;
use crate::pooled::ConnectionManager;
use crate::transaction::transaction;
use crate::url::DatabaseUrl;
use crate::writer::Writer;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A pooled database handle; cheap to clone.
#[derive(Clone)]
pub struct Db {
    pool: r2d2::Pool<ConnectionManager>,
    url: DatabaseUrl,
    /// SQLite has one writer at a time; taking turns here, rather than in SQLite's lock, means a
    /// transaction never fails with "database is locked" when it upgrades from reading to writing.
    sqlite_writer: Option<Arc<Mutex<()>>>,
    /// The writing threads that commit concurrent transactions together (group commit): all
    /// writing transactions on SQLite, those that append to the event log on PostgreSQL.
    group_writer: Option<Arc<Writer>>,
}

/// Pool sizing.
#[derive(Debug, Clone, Copy)]
pub struct PoolOptions {
    /// The most connections open at once.
    pub max_size: u32,
    /// How long a caller waits for a free connection.
    pub connection_timeout: Duration,
    /// SQLite's `synchronous`: `Full` (the default) keeps every acknowledged commit through a
    /// power loss.
    pub sqlite_synchronous: SqliteSynchronous,
    /// Whether SQLite's writing transactions go to the writer that commits them in batches (the
    /// default; see `writer.rs`), or each commits on a pooled connection.
    pub sqlite_group_commit: bool,
    /// Whether PostgreSQL's transactions that append to the event log go to the writer (not
    /// the default): one flush commits a batch, but its transactions run one after another, so
    /// it sends faster only where a commit's flush is slow (`docs/benchmarks.md`, stop 38).
    pub postgres_group_commit: bool,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            max_size: 8,
            connection_timeout: Duration::from_secs(10),
            sqlite_synchronous: SqliteSynchronous::Full,
            sqlite_group_commit: true,
            postgres_group_commit: false,
        }
    }
}

/// How the pool is used right now, for the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUse {
    /// The most connections the pool opens.
    pub max_size: u32,
    /// Connections open.
    pub open: u32,
    /// Open connections that are idle.
    pub idle: u32,
}

impl Db {
    /// Opens a pool on `url` and applies pending migrations. Fails with a clear message when the
    /// database cannot be reached.
    pub fn open(url: DatabaseUrl, options: PoolOptions) -> Result<Db, StorageError> {
        // Connect once up front, so that a wrong URL or a server that is down is reported as such
        // rather than as a pool timeout.
        let conn_options = ConnOptions {
            sqlite_synchronous: options.sqlite_synchronous,
        };
        let mut first = crate::conn::establish_with(&url, conn_options)?;
        let applied = migrate::run_pending(&mut first)?;
        drop(first);
        tracing::debug!(
            backend = url.backend_name(),
            max_connections = options.max_size,
            sqlite_synchronous = ?options.sqlite_synchronous,
            migrations_applied = applied,
            "database opened"
        );
        let pool = r2d2::Pool::builder()
            .max_size(options.max_size)
            .min_idle(Some(1))
            .connection_timeout(options.connection_timeout)
            .build(ConnectionManager::new(url.clone(), conn_options))?;
        let sqlite_writer = matches!(url, DatabaseUrl::Sqlite(_)).then(|| Arc::new(Mutex::new(())));
        // One thread on SQLite (one writer at a time); two on PostgreSQL, so that a batch runs
        // while the one before it commits.
        let threads = if sqlite_writer.is_some() { 1 } else { 2 };
        let group_commit = match sqlite_writer {
            Some(_) => options.sqlite_group_commit,
            None => options.postgres_group_commit,
        };
        let group_writer = match group_commit {
            true => Some(Arc::new(Writer::start(
                url.clone(),
                conn_options,
                sqlite_writer.clone(),
                threads,
            )?)),
            false => None,
        };
        Ok(Db {
            pool,
            url,
            sqlite_writer,
            group_writer,
        })
    }

    /// Whether writing transactions take turns in this process (SQLite's one writer): then
    /// work read before a transaction can be checked inside it against what committed since,
    /// and moved out of the turn (`actions::messages_send`). Not on PostgreSQL, where another
    /// node's change between the reading and the turn would go unseen by that check.
    pub fn writes_in_turn(&self) -> bool {
        self.sqlite_writer.is_some()
    }

    /// Whether writes go to the writer that commits them in batches (`writer.rs`): on
    /// PostgreSQL those that append to the event log, whose work then runs one batch at a time.
    pub fn commits_in_batches(&self) -> bool {
        self.group_writer.is_some()
    }

    /// The URL this pool connects to.
    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    /// Empties the page caches of the idle SQLite connections (`PRAGMA shrink_memory`), which
    /// otherwise keep what they read up to the memory budget for as long as the process runs;
    /// returns how many connections it shrank. For a server gone idle: the next requests read
    /// their pages again (from the operating system's cache, usually). Nothing on PostgreSQL,
    /// whose caches are the server's. Blocking; connections in use are left alone.
    pub fn shrink_idle_caches(&self) -> Result<usize, StorageError> {
        if !matches!(self.url, DatabaseUrl::Sqlite(_)) {
            return Ok(0);
        }
        let mut idle = Vec::new();
        while let Some(conn) = self.pool.try_get() {
            idle.push(conn);
        }
        for conn in &mut idle {
            diesel::connection::SimpleConnection::batch_execute(
                &mut ***conn,
                "PRAGMA shrink_memory",
            )?;
        }
        Ok(idle.len())
    }

    /// How many connections are open and idle.
    pub fn pool_use(&self) -> PoolUse {
        let state = self.pool.state();
        PoolUse {
            max_size: self.pool.max_size(),
            open: state.connections,
            idle: state.idle_connections,
        }
    }

    /// Whether some migration is pending, waiting at most `timeout` for a connection (a
    /// readiness probe must answer quickly even when the pool is exhausted or the server down).
    pub async fn migrations_pending(&self, timeout: Duration) -> Result<bool, StorageError> {
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = pool.get_timeout(timeout)?;
            migrate::has_pending(&mut conn)
        })
        .await
        .map_err(|e| StorageError::Task(e.to_string()))?
    }

    /// Takes a connection, blocking; for start-up code and the command line.
    pub fn conn(&self) -> Result<r2d2::PooledConnection<ConnectionManager>, StorageError> {
        Ok(self.pool.get()?)
    }

    /// An idle connection, if the pool has one, without waiting or opening one: for work that
    /// can also be done without it (`shared_snapshot::both`), from a thread that already holds
    /// a connection and so must never wait for a second.
    pub fn try_conn(&self) -> Option<r2d2::PooledConnection<ConnectionManager>> {
        self.pool.try_get()
    }

    /// Runs `f` with a connection on a blocking thread and returns its result.
    pub async fn run<F, R, E>(&self, f: F) -> Result<R, E>
    where
        F: FnOnce(&mut DbConn) -> Result<R, E> + Send + 'static,
        R: Send + 'static,
        E: From<StorageError> + Send + 'static,
    {
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || {
            let asked = Instant::now();
            let got = pool.get();
            metrics::histogram!("parley_db_pool_wait_seconds").record(asked.elapsed());
            let mut conn = got.map_err(|e| {
                metrics::counter!("parley_db_pool_timeouts_total").increment(1);
                StorageError::from(e)
            })?;
            let result = f(&mut conn);
            conn.record_use(result.is_ok());
            result
        })
        .await
        .map_err(|e| StorageError::Task(e.to_string()))?
    }

    /// Runs `f` in one transaction on a blocking thread: committed when it returns `Ok`, rolled
    /// back otherwise. On SQLite it runs on the writing thread, in a savepoint of a transaction
    /// shared with the other transactions waiting at the time (group commit, `writer.rs`); its
    /// result comes back once that transaction has committed.
    pub async fn transaction<F, R, E>(&self, f: F) -> Result<R, E>
    where
        F: FnOnce(&mut DbConn) -> Result<R, E> + Send + 'static,
        R: Send + 'static,
        E: From<StorageError> + Send + 'static,
    {
        match (&self.group_writer, &self.sqlite_writer) {
            (Some(writer), Some(_)) => writer.transaction(f).await,
            _ => {
                self.pooled_transaction(move |conn| f(conn).map(|r| (r, None)))
                    .await
            }
        }
    }

    /// [`Db::transaction`] for work with something for its commit ([`OnCommit`]): an entry
    /// for the event log (PostgreSQL), appended last in the transaction, its position coming
    /// back with the result; or work run right after the commit, in commit order (SQLite).
    /// With group commit the transaction runs on the writer, and its entry is appended with its
    /// batch's (`writer.rs`).
    pub async fn logged_transaction<F, R, E>(&self, f: F) -> Result<(R, Option<i64>), E>
    where
        F: FnOnce(&mut DbConn) -> Result<(R, Option<OnCommit>), E> + Send + 'static,
        R: Send + 'static,
        E: From<StorageError> + Send + 'static,
    {
        if let Some(writer) = &self.group_writer {
            return writer.logged_transaction(f).await;
        }
        self.pooled_transaction(move |conn| match f(conn)? {
            (result, Some(OnCommit::Append(e))) => {
                let position = crate::event_log::append(conn, &e.events, e.now, &e.origin)?;
                Ok(((result, Some(position)), None))
            }
            (result, Some(OnCommit::Run(run))) => Ok(((result, None), Some(run))),
            (result, None) => Ok(((result, None), None)),
        })
        .await
    }

    /// A transaction on a pooled connection (on SQLite, in turn with the process's other
    /// writers): `f` returns its result and what to run right after the commit, still in the
    /// turn.
    async fn pooled_transaction<F, R, E>(&self, f: F) -> Result<R, E>
    where
        F: FnOnce(&mut DbConn) -> Result<(R, Option<CommitHook>), E> + Send + 'static,
        R: Send + 'static,
        E: From<StorageError> + Send + 'static,
    {
        let writer = self.sqlite_writer.clone();
        self.run(move |conn| {
            let asked = Instant::now();
            let _turn = writer
                .as_ref()
                .map(|lock| lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
            if writer.is_some() {
                metrics::histogram!("parley_db_writer_wait_seconds").record(asked.elapsed());
            }
            let (result, after) = transaction(conn, f)?;
            if let Some(run) = after {
                run();
            }
            Ok(result)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{Db, PoolOptions};
    use crate::conn::sqlite_memory_used;
    use crate::url::DatabaseUrl;
    use diesel::connection::SimpleConnection;

    /// A connection that read 8 MB keeps them in its page cache until it is shrunk. (SQLite's
    /// memory counter is the process's, shared with tests running beside this one, hence the
    /// margin.)
    #[test]
    fn shrinking_idle_caches_hands_sqlite_memory_back() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(
            DatabaseUrl::Sqlite(dir.path().join("cache.db")),
            PoolOptions::default(),
        )
        .unwrap();
        {
            let mut conn = db.conn().unwrap();
            conn.batch_execute(
                "CREATE TABLE filler (x BLOB);
                 WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
                 INSERT INTO filler SELECT randomblob(2000) FROM n;
                 SELECT SUM(LENGTH(x)) FROM filler;",
            )
            .unwrap();
        }
        let before = sqlite_memory_used();
        assert!(db.shrink_idle_caches().unwrap() >= 1);
        let after = sqlite_memory_used();
        assert!(
            after < before - 4 * 1024 * 1024,
            "SQLite held {before} bytes before shrinking, {after} after"
        );
        // Still usable afterwards.
        db.conn()
            .unwrap()
            .batch_execute("SELECT COUNT(*) FROM filler")
            .unwrap();
    }
}

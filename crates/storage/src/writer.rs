//! One writer per process, with group commit: SQLite's writes, and the logged writes on
//! PostgreSQL.
//!
//! SQLite lets one connection write at a time, and with `synchronous = FULL` every commit waits
//! for an `fsync` of the write-ahead log. Taking turns commit by commit caps concurrent writers at
//! one `fsync` each. Here one thread owns the writing connection; transactions are queued to it,
//! and it runs whatever is waiting as one batch: one database transaction holding a savepoint
//! per queued transaction, then one commit and one `fsync` for all of them.
//!
//! PostgreSQL shares WAL flushes among concurrent commits by itself, but not among the
//! transactions that append to the event log (`event_log.rs`): each holds the log's head row
//! from its append through its commit, so they commit one flush after another. Those
//! transactions come here: a batch appends the entries of all its transactions in one
//! statement, last, and commits them with one flush. Two threads take turns: the next batch
//! is taken while this one commits, and its work begins once that commit ends (at the message
//! ID lock below), never beside this one's transactions, whose locks it could otherwise wait
//! for while they wait for its own; and since the head is still taken last, a batch holding it
//! waits for nothing but its commit.
//!
//! On PostgreSQL a batch takes the message ID lock (`message_ids.rs`) before its first
//! transaction: it would hold that lock from its first send's insert to its commit while its
//! later sends take their channels' locks, so that two nodes' batches, or a batch and another
//! node's move posting its notices, could each wait for the other. Taken first, it orders every
//! batch of every node; the next batch of this process then waits there for this one's commit,
//! which its first send did anyway.
//!
//! Each queued transaction keeps its own outcome: one that fails is rolled back to its savepoint
//! (or, alone in its batch, with the batch's transaction) and reports its own error, while the
//! others of the batch commit. Only a failure of the commit
//! itself (the disk, say) fails every transaction of the batch, none of which is then kept.
//! A transaction is acknowledged only after its batch has committed, so nothing acknowledged can
//! be lost. In a batch, transactions run in the order they were queued, each seeing the ones
//! before it.

use crate::conn::{establish_with, ConnOptions, DbConn};
use crate::error::StorageError;
use crate::event_log::{CommitHook, OnCommit};
use crate::url::DatabaseUrl;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// The most transactions committed together; a bound on how long the first of a batch waits.
const MAX_BATCH: usize = 64;

/// Called once the batch's fate is known: the transaction's log position (if it appended)
/// when the batch committed, else why it did not.
type Finish = Box<dyn FnOnce(Result<Option<i64>, &StorageError>) + Send>;

/// What running a queued transaction left: what it hands to the commit (its log entry, or
/// work to run right after it), if it has something and succeeded, how to report the outcome,
/// and whether it failed.
type Ran = (Option<OnCommit>, Finish, bool);

/// A queued transaction: runs its work, in a savepoint when told (when it shares its batch),
/// and says what it left.
type Job = Box<dyn FnOnce(&mut DbConn, bool) -> Ran + Send>;

/// The queue of the writing threads (a `Sender` is shared between threads as it is); dropping
/// the last handle ends them.
pub(crate) struct Writer {
    queue: mpsc::Sender<(Instant, Job)>,
}

/// What the writing threads share.
struct Shared {
    url: DatabaseUrl,
    options: ConnOptions,
    /// The lock every other writer of the process takes (SQLite's one writer), held through
    /// each batch's commit; none on PostgreSQL.
    turn: Option<Arc<Mutex<()>>>,
    /// Held by the thread taking and running a batch until the batch has appended: the next
    /// batch runs during this one's commit, never beside its transactions, so two batches of
    /// the process never wait for each other's locks (a deadlock).
    running: Mutex<()>,
    jobs: Mutex<mpsc::Receiver<(Instant, Job)>>,
}

impl Writer {
    /// Starts `threads` writing threads, each with its own connection to `url` (opened again
    /// after a failure), taking turns to run a batch. `turn` is the lock every other writer of
    /// the process takes (SQLite), held from taking a batch through its commit.
    pub(crate) fn start(
        url: DatabaseUrl,
        options: ConnOptions,
        turn: Option<Arc<Mutex<()>>>,
        threads: usize,
    ) -> Result<Writer, StorageError> {
        let (queue, jobs) = mpsc::channel::<(Instant, Job)>();
        let shared = Arc::new(Shared {
            url,
            options,
            turn,
            running: Mutex::new(()),
            jobs: Mutex::new(jobs),
        });
        for i in 0..threads.max(1) {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(format!("parley-writer-{i}"))
                .spawn(move || run(&shared))
                .map_err(|e| StorageError::Task(format!("cannot start the writer: {e}")))?;
        }
        Ok(Writer { queue })
    }

    /// Runs `f` in the next batch's transaction (in a savepoint of its own when it shares the
    /// batch); returns its result once the batch has committed (or the error that kept it
    /// from committing).
    pub(crate) async fn transaction<F, R, E>(&self, f: F) -> Result<R, E>
    where
        F: FnOnce(&mut DbConn) -> Result<R, E> + Send + 'static,
        R: Send + 'static,
        E: From<StorageError> + Send + 'static,
    {
        self.logged_transaction(|conn| f(conn).map(|r| (r, None)))
            .await
            .map(|(r, _)| r)
    }

    /// [`Writer::transaction`] for work with something for its commit: its log entry is
    /// appended with the batch's, last, and its position comes back with the result; work to
    /// run after the commit runs once the batch has committed, in the batch's order, before the
    /// next batch can commit.
    pub(crate) async fn logged_transaction<F, R, E>(&self, f: F) -> Result<(R, Option<i64>), E>
    where
        F: FnOnce(&mut DbConn) -> Result<(R, Option<OnCommit>), E> + Send + 'static,
        R: Send + 'static,
        E: From<StorageError> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel::<Result<(R, Option<i64>), E>>();
        let job: Job = Box::new(move |conn: &mut DbConn, in_savepoint: bool| {
            let outcome = match in_savepoint {
                true => crate::savepoint::savepoint(conn, f),
                false => f(conn),
            };
            let (result, entry) = match outcome {
                Ok((r, entry)) => (Ok(r), entry),
                Err(e) => (Err(e), None),
            };
            let failed = result.is_err();
            let finish: Finish = Box::new(move |outcome: Result<Option<i64>, &StorageError>| {
                let result = match (result, outcome) {
                    (Ok(r), Ok(position)) => Ok((r, position)),
                    (Ok(_), Err(cause)) => Err(E::from(StorageError::Task(format!(
                        "the transaction's batch did not commit: {cause}"
                    )))),
                    (Err(e), _) => Err(e),
                };
                let _ = reply.send(result);
            });
            (entry, finish, failed)
        });
        self.queue
            .send((Instant::now(), job))
            .map_err(|_| StorageError::Task("the writer has stopped".into()))?;
        answer.await.unwrap_or_else(|_| {
            Err(E::from(StorageError::Task(
                "the writer dropped the transaction".into(),
            )))
        })
    }
}

/// A writing thread: waits for its turn and a transaction, takes every other one waiting (up
/// to [`MAX_BATCH`]), and commits them together.
fn run(shared: &Shared) {
    let mut conn: Option<DbConn> = None;
    loop {
        let running = lock(&shared.running);
        let Some(batch) = next_batch(shared) else {
            return;
        };
        let turn = shared.turn.as_deref().map(lock);
        let writing = match conn.as_mut() {
            Some(c) => c,
            None => match establish_with(&shared.url, shared.options) {
                Ok(c) => conn.insert(c),
                Err(e) => {
                    tracing::error!(error = %e, "the writer cannot connect");
                    // Dropping the batch answers each transaction with an error.
                    continue;
                }
            },
        };
        let started = Instant::now();
        metrics::histogram!("parley_db_writer_batch_size").record(batch.len() as f64);
        for (queued, _) in &batch {
            metrics::histogram!("parley_db_writer_wait_seconds")
                .record(started.duration_since(*queued));
        }
        if commit_batch(writing, batch, running).is_err() {
            conn = None;
        }
        drop(turn);
    }
}

fn lock(mutex: &Mutex<()>) -> MutexGuard<'_, ()> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The next batch: the first transaction waiting (blocking until there is one) and every other
/// one waiting behind it, up to [`MAX_BATCH`]; None once every handle is gone.
fn next_batch(shared: &Shared) -> Option<Vec<(Instant, Job)>> {
    let jobs = shared
        .jobs
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // Blocks until a transaction is queued.
    let mut batch = vec![jobs.recv().ok()?];
    while batch.len() < MAX_BATCH {
        match jobs.try_recv() {
            Ok(job) => batch.push(job),
            Err(_) => break,
        }
    }
    Some(batch)
}

/// How a batch's transaction ended without committing.
enum Uncommitted {
    /// Its one transaction failed and was rolled back, as it would have been alone.
    RolledBack,
    /// The database failed (the connection is then suspect).
    Failed(StorageError),
}

impl From<StorageError> for Uncommitted {
    fn from(e: StorageError) -> Self {
        Uncommitted::Failed(e)
    }
}

/// Runs a batch as one transaction: each job in its savepoint (a job alone in its batch needs
/// none: its failure rolls the transaction back), then their log entries, then the commit, and
/// reports to every job. `running` is released once the entries are appended, before the
/// commit. Fails when the batch did not commit for another reason than its one job's failure.
fn commit_batch(
    conn: &mut DbConn,
    batch: Vec<(Instant, Job)>,
    running: MutexGuard<'_, ()>,
) -> Result<(), ()> {
    // Each job's report, with its log entry's index or the work to run once committed.
    let mut finishers: Vec<(Option<usize>, Option<CommitHook>, Finish)> =
        Vec::with_capacity(batch.len());
    let mut running = Some(running);
    let shared = batch.len() > 1;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        crate::transaction::transaction(conn, |c| {
            crate::message_ids::hold(c)?;
            let mut entries = Vec::new();
            for (_, job) in batch {
                let (on_commit, finish, failed) = job(c, shared);
                let (index, after) = match on_commit {
                    Some(OnCommit::Append(entry)) => {
                        entries.push(entry);
                        (Some(entries.len() - 1), None)
                    }
                    Some(OnCommit::Run(run)) => (None, Some(run)),
                    None => (None, None),
                };
                finishers.push((index, after, finish));
                if failed && !shared {
                    return Err(Uncommitted::RolledBack);
                }
            }
            let positions = match entries.is_empty() {
                true => Vec::new(),
                false => crate::event_log::append_all(c, &entries)?,
            };
            running.take();
            Ok::<_, Uncommitted>(positions)
        })
    }));
    drop(running);
    match outcome {
        Ok(Ok(positions)) => {
            // In the batch's order, and (on SQLite) in the turn: before the next commit.
            for (index, after, finish) in finishers {
                // Committed whatever it does: a panic there must not end the writer.
                if let Some(run) = after {
                    if catch_unwind(AssertUnwindSafe(run)).is_err() {
                        tracing::error!("the work after a commit panicked");
                    }
                }
                finish(Ok(index.and_then(|i| positions.get(i).copied())));
            }
            Ok(())
        }
        Ok(Err(Uncommitted::RolledBack)) => {
            // The job's own error is what it reports.
            finishers
                .into_iter()
                .for_each(|(_, _, finish)| finish(Ok(None)));
            Ok(())
        }
        Ok(Err(Uncommitted::Failed(e))) => {
            tracing::error!(error = %e, "a batch of writes failed to commit");
            finishers
                .into_iter()
                .for_each(|(_, _, finish)| finish(Err(&e)));
            Err(())
        }
        Err(_) => {
            // A transaction panicked: the connection's transaction state is unknown, so it
            // is closed (rolling back) and every transaction of the batch fails.
            tracing::error!("a transaction panicked in the writer; its batch is lost");
            let e = StorageError::Task("a transaction of the batch panicked".into());
            finishers
                .into_iter()
                .for_each(|(_, _, finish)| finish(Err(&e)));
            Err(())
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use diesel::connection::SimpleConnection;
    use diesel::prelude::*;

    #[derive(QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }

    fn count(conn: &mut DbConn) -> i64 {
        diesel::sql_query("SELECT COUNT(*) AS n FROM t")
            .get_result::<N>(conn)
            .unwrap()
            .n
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_transaction_does_not_undo_its_batch() {
        let dir = tempfile::tempdir().unwrap();
        let url = DatabaseUrl::Sqlite(dir.path().join("w.db"));
        let mut conn = establish_with(&url, ConnOptions::default()).unwrap();
        conn.batch_execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BIGINT NOT NULL UNIQUE)")
            .unwrap();
        let writer = Arc::new(Writer::start(url, ConnOptions::default(), None, 1).unwrap());
        // Many at once, so that batches form; every third fails after writing.
        let tasks: Vec<_> = (0..60)
            .map(|i: i64| {
                let writer = writer.clone();
                tokio::spawn(async move {
                    writer
                        .transaction(move |c| {
                            c.batch_execute(&format!("INSERT INTO t (v) VALUES ({i})"))?;
                            if i % 3 == 0 {
                                return Err(StorageError::Task("refused".into()));
                            }
                            Ok(i)
                        })
                        .await
                })
            })
            .collect();
        let mut kept = 0;
        for (i, task) in tasks.into_iter().enumerate() {
            match task.await.unwrap() {
                Ok(v) => {
                    assert_eq!(v, i as i64);
                    kept += 1;
                }
                Err(e) => assert!(i % 3 == 0, "{i}: {e}"),
            }
        }
        assert_eq!(kept, 40);
        assert_eq!(
            count(&mut conn),
            40,
            "exactly the successful ones are stored"
        );
        // A unique-key clash is the failing transaction's own error, rolled back alone.
        let clash = writer
            .transaction(|c| {
                c.batch_execute("INSERT INTO t (v) VALUES (1000)")?;
                c.batch_execute("INSERT INTO t (v) VALUES (1)")?;
                Ok::<_, StorageError>(())
            })
            .await;
        assert!(matches!(clash, Err(StorageError::UniqueViolation(_))));
        assert_eq!(count(&mut conn), 40);
    }

    /// Two nodes with group commit (two writers on one PostgreSQL database): node 1's batch
    /// sends to channel X (its insert takes the message ID lock) and then to channel Y, while
    /// node 2 moves messages within Y (Y's lock, exclusively) and posts a notice (the ID lock).
    /// Were the ID lock first taken at node 1's insert, each would wait for the other until
    /// PostgreSQL failed one (after `deadlock_timeout`); every batch takes it first, so node 2
    /// waits for node 1's commit and all three commit.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn two_nodes_batches_never_wait_for_each_other() {
        use crate::spans::CHANNEL_LOCKS;
        use std::time::Duration;
        let Some(backend) = crate::testing::Backend::postgres() else {
            return;
        };
        let db = crate::testing::scratch_database(&backend);
        let start = || Writer::start(db.url.clone(), ConnOptions::default(), None, 2).unwrap();
        let (node1, node2) = (Arc::new(start()), start());
        let (x, y) = (CHANNEL_LOCKS + 1, CHANNEL_LOCKS + 2);
        // Node 1's writer is held busy until both sends are queued, so that they share a batch.
        let (release, held) = mpsc::channel::<()>();
        let blocker = {
            let node1 = node1.clone();
            tokio::spawn(async move {
                node1
                    .transaction(move |_| {
                        let _ = held.recv_timeout(Duration::from_secs(10));
                        Ok::<_, StorageError>(())
                    })
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (first_sent, first) = tokio::sync::oneshot::channel::<()>();
        let (moving, moved) = mpsc::channel::<()>();
        let send_x = {
            let node1 = node1.clone();
            tokio::spawn(async move {
                node1
                    .transaction(move |c| {
                        c.batch_execute(&format!(
                            "SELECT pg_advisory_xact_lock_shared({x}); \
                             SELECT parley_next_message_id();"
                        ))?;
                        let _ = first_sent.send(());
                        Ok::<_, StorageError>(())
                    })
                    .await
            })
        };
        let send_y = {
            let node1 = node1.clone();
            tokio::spawn(async move {
                node1
                    .transaction(move |c| {
                        // Until node 2's move holds Y, if it can get that far.
                        let _ = moved.recv_timeout(Duration::from_secs(1));
                        c.batch_execute(&format!("SELECT pg_advisory_xact_lock_shared({y})"))?;
                        Ok::<_, StorageError>(())
                    })
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        release.send(()).unwrap();
        first.await.unwrap();
        let move_y = node2.transaction(move |c| {
            c.batch_execute(&format!("SELECT pg_advisory_xact_lock({y})"))?;
            let _ = moving.send(());
            c.batch_execute("SELECT parley_next_message_id()")?;
            Ok::<_, StorageError>(())
        });
        move_y.await.unwrap();
        blocker.await.unwrap().unwrap();
        send_x.await.unwrap().unwrap();
        send_y.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_panicking_transaction_fails_alone_and_the_writer_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let url = DatabaseUrl::Sqlite(dir.path().join("p.db"));
        let mut conn = establish_with(&url, ConnOptions::default()).unwrap();
        conn.batch_execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
            .unwrap();
        let writer = Writer::start(url, ConnOptions::default(), None, 1).unwrap();
        let failed = writer
            .transaction(|_| -> Result<(), StorageError> { panic!("a bug") })
            .await;
        assert!(failed.is_err());
        writer
            .transaction(|c| {
                c.batch_execute("INSERT INTO t DEFAULT VALUES")?;
                Ok::<_, StorageError>(())
            })
            .await
            .unwrap();
        assert_eq!(count(&mut conn), 1);
    }
}

//! SQLite's one writer, with group commit.
//!
//! SQLite lets one connection write at a time, and with `synchronous = FULL` every commit waits
//! for an `fsync` of the write-ahead log. Taking turns commit by commit caps concurrent writers at
//! one `fsync` each. Here one thread owns the writing connection; transactions are queued to it,
//! and it runs whatever is waiting as one batch: one database transaction holding a savepoint
//! per queued transaction, then one commit and one `fsync` for all of them.
//!
//! Each queued transaction keeps its own outcome: one that fails is rolled back to its savepoint
//! and reports its own error, while the others of the batch commit. Only a failure of the commit
//! itself (the disk, say) fails every transaction of the batch, none of which is then kept.
//! A transaction is acknowledged only after its batch has committed, so nothing acknowledged can
//! be lost. Transactions run in the order they were queued, each seeing the ones before it.
//!
//! PostgreSQL needs none of this: its own group commit shares WAL flushes among concurrent
//! transactions on separate connections.

use crate::conn::{establish_with, ConnOptions, DbConn};
use crate::error::StorageError;
use crate::url::DatabaseUrl;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The most transactions committed together; a bound on how long the first of a batch waits.
const MAX_BATCH: usize = 64;

/// Called once the batch's fate is known: `None` when it committed, else why it did not.
type Finish = Box<dyn FnOnce(Option<&StorageError>) + Send>;

/// A queued transaction: runs its work in a savepoint and returns how to report the outcome.
type Job = Box<dyn FnOnce(&mut DbConn) -> Finish + Send>;

/// The queue of the writing thread; dropping the last handle ends the thread.
pub(crate) struct Writer {
    queue: Mutex<mpsc::Sender<(Instant, Job)>>,
}

impl Writer {
    /// Starts the writing thread, which opens its own connection to `url` (and opens it again
    /// after a failure). `turn` is the lock every other SQLite writer of the process takes.
    pub(crate) fn start(
        url: DatabaseUrl,
        options: ConnOptions,
        turn: Arc<Mutex<()>>,
    ) -> Result<Writer, StorageError> {
        let (queue, jobs) = mpsc::channel::<(Instant, Job)>();
        std::thread::Builder::new()
            .name("parley-sqlite-writer".into())
            .spawn(move || run(&url, options, &turn, &jobs))
            .map_err(|e| StorageError::Task(format!("cannot start the SQLite writer: {e}")))?;
        Ok(Writer {
            queue: Mutex::new(queue),
        })
    }

    /// Runs `f` in the next batch, in a savepoint of the batch's transaction; returns its result
    /// once the batch has committed (or the error that kept it from committing).
    pub(crate) async fn transaction<F, R, E>(&self, f: F) -> Result<R, E>
    where
        F: FnOnce(&mut DbConn) -> Result<R, E> + Send + 'static,
        R: Send + 'static,
        E: From<StorageError> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel::<Result<R, E>>();
        let job: Job = Box::new(move |conn: &mut DbConn| {
            let result = crate::savepoint::savepoint(conn, f);
            Box::new(move |failed: Option<&StorageError>| {
                let result = match (result, failed) {
                    (Ok(_), Some(cause)) => Err(E::from(StorageError::Task(format!(
                        "the transaction's batch did not commit: {cause}"
                    )))),
                    (result, _) => result,
                };
                let _ = reply.send(result);
            })
        });
        self.queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .send((Instant::now(), job))
            .map_err(|_| StorageError::Task("the SQLite writer has stopped".into()))?;
        answer.await.unwrap_or_else(|_| {
            Err(E::from(StorageError::Task(
                "the SQLite writer dropped the transaction".into(),
            )))
        })
    }
}

/// The writing thread: waits for a transaction, takes every other one waiting (up to
/// [`MAX_BATCH`]), and commits them together.
fn run(
    url: &DatabaseUrl,
    options: ConnOptions,
    turn: &Mutex<()>,
    jobs: &mpsc::Receiver<(Instant, Job)>,
) {
    let mut conn: Option<DbConn> = None;
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let writing = match conn.as_mut() {
            Some(c) => c,
            None => match establish_with(url, options) {
                Ok(c) => conn.insert(c),
                Err(e) => {
                    tracing::error!(error = %e, "the SQLite writer cannot connect");
                    // Dropping the batch answers each transaction with an error.
                    continue;
                }
            },
        };
        let _turn = turn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let started = Instant::now();
        metrics::histogram!("parley_db_sqlite_batch_size").record(batch.len() as f64);
        for (queued, _) in &batch {
            metrics::histogram!("parley_db_sqlite_writer_wait_seconds")
                .record(started.duration_since(*queued));
        }
        let mut finishers: Vec<Finish> = Vec::with_capacity(batch.len());
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            crate::transaction::transaction(writing, |c| {
                for (_, job) in batch {
                    finishers.push(job(c));
                }
                Ok::<(), StorageError>(())
            })
        }));
        match outcome {
            Ok(Ok(())) => finishers.into_iter().for_each(|finish| finish(None)),
            Ok(Err(e)) => {
                tracing::error!(error = %e, "an SQLite batch failed to commit");
                finishers.into_iter().for_each(|finish| finish(Some(&e)));
                conn = None;
            }
            Err(_) => {
                // A transaction panicked: the connection's transaction state is unknown, so it
                // is closed (rolling back) and every transaction of the batch fails.
                tracing::error!("a transaction panicked in the SQLite writer; its batch is lost");
                let e = StorageError::Task("a transaction of the batch panicked".into());
                finishers.into_iter().for_each(|finish| finish(Some(&e)));
                conn = None;
            }
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
        let writer = Arc::new(Writer::start(url, ConnOptions::default(), Arc::default()).unwrap());
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

    #[tokio::test]
    async fn a_panicking_transaction_fails_alone_and_the_writer_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let url = DatabaseUrl::Sqlite(dir.path().join("p.db"));
        let mut conn = establish_with(&url, ConnOptions::default()).unwrap();
        conn.batch_execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
            .unwrap();
        let writer = Writer::start(url, ConnOptions::default(), Arc::default()).unwrap();
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

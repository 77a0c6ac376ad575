//! Group commit of the writes that append to the event log (PostgreSQL only): concurrent
//! logged transactions commit together, each keeps its own outcome, and their entries take
//! consecutive positions in the order they ran, exactly as when each commits alone. Without
//! `TEST_DATABASE_URL` these tests do nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::connection::SimpleConnection;
use diesel::sql_types::{BigInt, Text};
use diesel::{QueryableByName, RunQueryDsl};
use parley_storage::testing::scratch_database;
use parley_storage::{Db, LogEntry, PoolOptions, StorageError};
use parley_tests::Backend;
use std::collections::BTreeMap;

#[derive(QueryableByName)]
struct Stored {
    #[diesel(sql_type = BigInt)]
    seq: i64,
    #[diesel(sql_type = Text)]
    events: String,
    #[diesel(sql_type = Text)]
    tx: String,
}

/// Runs 48 logged transactions at once on a fresh database: each inserts its number into a
/// table with a unique column and appends an entry naming it; every fourth fails after its
/// insert, every sixth clashes on the unique column. Checks every outcome and the log, and
/// returns how many transactions the stored entries came from.
async fn run_concurrently(group_commit: bool) -> Option<usize> {
    let backend = Backend::postgres()?;
    let scratch = scratch_database(&backend);
    let options = PoolOptions {
        postgres_group_commit: group_commit,
        ..PoolOptions::default()
    };
    let db = Db::open(scratch.url.clone(), options).unwrap();
    db.run(|c| {
        c.batch_execute("CREATE TABLE batch_test (v BIGINT NOT NULL UNIQUE); INSERT INTO batch_test VALUES (-1)")
            .map_err(StorageError::from)
    })
    .await
    .unwrap();
    let tasks: Vec<_> = (0..48i64)
        .map(|i| {
            let db = db.clone();
            tokio::spawn(async move {
                db.logged_transaction(move |c| {
                    let v = if i % 6 == 5 { -1 } else { i };
                    c.batch_execute(&format!("INSERT INTO batch_test VALUES ({v})"))?;
                    if i % 4 == 3 {
                        return Err(StorageError::Task("refused".into()));
                    }
                    let entry = LogEntry {
                        events: format!("[{i}]"),
                        origin: "test".into(),
                        now: 0,
                    };
                    Ok::<_, StorageError>((i, Some(parley_storage::OnCommit::Append(entry))))
                })
                .await
            })
        })
        .collect();
    let mut positions = BTreeMap::new();
    for (i, task) in tasks.into_iter().enumerate() {
        let i = i as i64;
        match task.await.unwrap() {
            Ok((value, position)) => {
                assert_eq!(value, i);
                assert!(i % 4 != 3 && i % 6 != 5, "{i} should have failed");
                positions.insert(position.expect("an appended entry has a position"), i);
            }
            Err(StorageError::Task(_)) => assert_eq!(i % 4, 3, "{i} failed"),
            Err(StorageError::UniqueViolation(_)) => assert_eq!(i % 6, 5, "{i} clashed"),
            Err(other) => panic!("{i}: {other}"),
        }
    }
    let kept: Vec<i64> = (0..48).filter(|i| i % 4 != 3 && i % 6 != 5).collect();
    assert_eq!(positions.len(), kept.len(), "one position per success");
    let stored: Vec<Stored> = db
        .run(|c| {
            diesel::sql_query("SELECT seq, events, xmin::text AS tx FROM event_log ORDER BY seq")
                .load::<Stored>(c)
                .map_err(StorageError::from)
        })
        .await
        .unwrap();
    let seqs: Vec<i64> = stored.iter().map(|s| s.seq).collect();
    let expected: Vec<i64> = (1..=kept.len() as i64).collect();
    assert_eq!(
        seqs, expected,
        "the entries take consecutive positions, none lost"
    );
    for entry in &stored {
        let i = positions[&entry.seq];
        assert_eq!(
            entry.events,
            format!("[{i}]"),
            "position {} is {i}'s",
            entry.seq
        );
    }
    let mut values: Vec<i64> = db
        .run(|c| {
            #[derive(QueryableByName)]
            struct V {
                #[diesel(sql_type = BigInt)]
                v: i64,
            }
            diesel::sql_query("SELECT v FROM batch_test WHERE v >= 0 ORDER BY v")
                .load::<V>(c)
                .map(|rows| rows.into_iter().map(|r| r.v).collect::<Vec<_>>())
                .map_err(StorageError::from)
        })
        .await
        .unwrap();
    values.sort_unstable();
    assert_eq!(
        values, kept,
        "exactly the successful transactions' rows are kept"
    );
    let mut transactions: Vec<&str> = stored.iter().map(|s| s.tx.as_str()).collect();
    transactions.sort_unstable();
    transactions.dedup();
    Some(transactions.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_logged_writes_commit_together_in_order() {
    let Some(transactions) = run_concurrently(true).await else {
        return;
    };
    let entries = (0..48).filter(|i| i % 4 != 3 && i % 6 != 5).count();
    assert!(
        transactions < entries,
        "{entries} entries from {transactions} transactions: no batch formed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_group_commit_each_logged_write_commits_alone() {
    let Some(transactions) = run_concurrently(false).await else {
        return;
    };
    let entries = (0..48).filter(|i| i % 4 != 3 && i % 6 != 5).count();
    assert_eq!(transactions, entries);
}

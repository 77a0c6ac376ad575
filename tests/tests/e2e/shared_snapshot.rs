//! A long read split between two connections that see one snapshot (`storage::shared_snapshot`,
//! used by register on PostgreSQL): the second connection reads exactly what the first one's
//! transaction sees, not what committed after it began, and with no idle connection at hand
//! both halves run on the first. PostgreSQL only: without `TEST_DATABASE_URL` these tests do
//! nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::prelude::*;
use parley_storage::{event_log, shared_snapshot, Db, DbConn, PoolOptions, StorageError};
use parley_tests::{Backend, TestApp};

/// This connection's server process.
fn backend_pid(conn: &mut DbConn) -> Result<i32, StorageError> {
    #[derive(QueryableByName)]
    struct Pid {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        pid: i32,
    }
    let DbConn::Pg(pg) = conn else {
        panic!("PostgreSQL only");
    };
    Ok(diesel::sql_query("SELECT pg_backend_pid() AS pid")
        .get_result::<Pid>(pg)?
        .pid)
}

/// Opens a snapshot on `db`, commits a log entry through `writer`, then reads the log's head in
/// both halves: `(snapshot's head, (main half's head and process, side half's))`.
async fn split_after_a_later_commit(db: Db, writer: Db) -> (i64, ((i64, i32), (i64, i32))) {
    db.clone()
        .run(move |conn| {
            event_log::at_snapshot(conn, |conn, position| {
                {
                    let mut other = writer.conn()?;
                    parley_storage::transaction(&mut other, |c| {
                        event_log::append(c, "[]", 0, "test")
                    })?;
                }
                let read = |conn: &mut DbConn| {
                    Ok::<_, StorageError>((event_log::head(conn)?, backend_pid(conn)?))
                };
                let halves = shared_snapshot::both(&db, conn, read, read)?;
                Ok::<_, StorageError>((position, halves))
            })
        })
        .await
        .unwrap()
}

#[actix_web::test]
async fn the_second_connection_reads_the_first_ones_snapshot() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let app = TestApp::start(backend).await;
    // A pool of the test's own, which the app's background tasks do not use: the later
    // commit's connection goes back to it, idle, before the read splits.
    let db = Db::open(app.ctx.db.url().clone(), PoolOptions::default()).unwrap();
    let (position, ((main, main_pid), (side, side_pid))) =
        split_after_a_later_commit(db.clone(), db).await;
    assert_ne!(main_pid, side_pid, "the halves ran on two connections");
    assert_eq!(
        (main, side),
        (position, position),
        "neither half sees the entry committed after the snapshot began"
    );
    let now = app.ctx.db.run(event_log::head).await.unwrap();
    assert_eq!(now, position + 1, "the entry did commit");
}

#[actix_web::test]
async fn without_an_idle_connection_both_halves_run_on_the_first() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let app = TestApp::start(backend).await;
    // Two connections at most: one held here, the other the snapshot's; the later commit
    // goes through the app's own pool.
    let db = Db::open(
        app.ctx.db.url().clone(),
        PoolOptions {
            max_size: 2,
            ..PoolOptions::default()
        },
    )
    .unwrap();
    let held = {
        let db = db.clone();
        tokio::task::spawn_blocking(move || db.conn().unwrap())
            .await
            .unwrap()
    };
    let (position, ((main, main_pid), (side, side_pid))) =
        split_after_a_later_commit(db, app.ctx.db.clone()).await;
    drop(held);
    assert_eq!(main_pid, side_pid, "one connection read both halves");
    assert_eq!((main, side), (position, position));
}

//! The event log's listener (PostgreSQL only): it sleeps on its connection until an append is
//! notified, tells another process's appends from its own, and reports a lost connection so
//! that its thread reconnects. Without `TEST_DATABASE_URL` these tests do nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::RunQueryDsl;
use parley_storage::event_log::{self, Listener};
use parley_storage::{DatabaseUrl, DbConn, StorageError};
use parley_tests::{Backend, TestApp};
use std::time::{Duration, Instant};

/// Far longer than a notification takes to arrive: a wait that returns well before it was woken.
const LONG: Duration = Duration::from_secs(30);

/// Starts a listener on the test app's database.
async fn listener() -> Option<(TestApp, Listener)> {
    let app = TestApp::start(Backend::postgres()?).await;
    let DatabaseUrl::Postgres(url) = app.ctx.db.url().clone() else {
        panic!("a PostgreSQL app has a PostgreSQL URL");
    };
    let listener = Listener::connect(&url).unwrap();
    Some((app, listener))
}

/// Appends an empty entry as `origin`, committed.
async fn append(app: &TestApp, origin: &'static str) {
    app.ctx
        .db
        .transaction(move |conn| event_log::append(conn, "[]", 0, origin))
        .await
        .unwrap();
}

/// Waits on another thread for up to [`LONG`]; returns what the wait said and how long it took.
fn wait_in_thread(
    mut listener: Listener,
    me: &'static str,
) -> std::thread::JoinHandle<(bool, Duration, Listener)> {
    std::thread::spawn(move || {
        let start = Instant::now();
        let other = listener.wait(me, LONG).unwrap();
        (other, start.elapsed(), listener)
    })
}

#[actix_web::test]
async fn a_sleeping_listener_wakes_for_another_process_append() {
    let Some((app, mut listener)) = listener().await else {
        return;
    };
    assert!(
        !listener.wait("me", Duration::from_millis(50)).unwrap(),
        "nothing was appended: the wait times out"
    );
    let waiting = wait_in_thread(listener, "me");
    tokio::time::sleep(Duration::from_millis(100)).await;
    append(&app, "another").await;
    let (other, took, _) = waiting.join().unwrap();
    assert!(other, "another process appended");
    assert!(
        took < LONG / 2,
        "woken by the notification, not the timeout ({took:?})"
    );
}

#[actix_web::test]
async fn its_own_appends_wake_it_without_counting_as_another_process() {
    let Some((app, listener)) = listener().await else {
        return;
    };
    let waiting = wait_in_thread(listener, "me");
    tokio::time::sleep(Duration::from_millis(100)).await;
    append(&app, "me").await;
    let (other, took, mut listener) = waiting.join().unwrap();
    assert!(!other, "only this process appended");
    assert!(
        took < LONG / 2,
        "woken by the notification, not the timeout ({took:?})"
    );
    append(&app, "me").await;
    append(&app, "another").await;
    let mut seen = false;
    let start = Instant::now();
    while !seen && start.elapsed() < LONG {
        seen = listener.wait("me", LONG).unwrap();
    }
    assert!(seen, "another's append after two of its own is seen");
}

#[actix_web::test]
async fn a_lost_connection_is_an_error_not_a_silent_sleep() {
    let Some((app, mut listener)) = listener().await else {
        return;
    };
    let ended = app
        .ctx
        .db
        .run(|conn| {
            let DbConn::Pg(pg) = conn else {
                panic!("PostgreSQL only");
            };
            diesel::sql_query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = current_database() AND query = 'LISTEN parley_events'",
            )
            .execute(pg)
            .map_err(StorageError::from)
        })
        .await
        .unwrap();
    assert!(ended >= 1, "the listener's backend was ended");
    let start = Instant::now();
    let mut result = Ok(false);
    while matches!(result, Ok(false)) && start.elapsed() < LONG {
        result = listener.wait("me", LONG);
    }
    assert!(
        result.is_err(),
        "the lost connection is reported: {result:?}"
    );
}

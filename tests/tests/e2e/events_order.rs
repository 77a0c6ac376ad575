//! A reader's `message` events come in the order of the messages' IDs, as the clients assume:
//! zulip-flutter appends a new message's event to the end of its list and finds messages there
//! by binary search on their IDs, so a message delivered after one with a higher ID sits out of
//! place until the list is fetched again. Concurrent sends to one channel (its send lock is
//! shared), to two channels and in direct messages all race here; on PostgreSQL without the
//! lock under which IDs are taken (migration 000110; `docs/architecture.md`, "Message IDs in
//! commit order") 32–54 of the 240 events came after a higher ID's; on SQLite, with each
//! action's task publishing its events after the commit, one pair in about one run in eight.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{busy_backend_test, Account, TestApp};
use serde_json::json;

busy_backend_test! {
    async fn concurrent_sends_deliver_message_events_in_id_order(app) {
        sends_in_id_order(&app).await;
    }
}

/// The same with PostgreSQL's logged writes committed in batches (the writer,
/// `--postgres-group-commit on`).
#[actix_web::test]
async fn concurrent_sends_in_batches_deliver_message_events_in_id_order() {
    let Some(app) = TestApp::start_with_group_commit().await else {
        return;
    };
    sends_in_id_order(&app).await;
}

/// One send of the race: to a channel (`read_by_sender` or not) or a direct message to the reader.
async fn send(app: &TestApp, who: &Account, reader: &Account, k: usize, n: usize) -> i64 {
    let content = format!("m {n} {k}");
    let request = match k % 4 {
        3 => app
            .post("/messages")
            .param("type", "direct")
            .json_param("to", &json!([reader.user_id.0])),
        _ => app
            .post("/messages")
            .param("type", "stream")
            .param(
                "to",
                if k.is_multiple_of(2) {
                    "north"
                } else {
                    "south"
                },
            )
            .param("topic", "t")
            .param("read_by_sender", k % 4 == 2),
    };
    request
        .as_user(who)
        .param("content", content)
        .send()
        .await
        .success()["id"]
        .as_i64()
        .unwrap()
}

/// 240 sends by four senders, eight at a time; the reader's events name each exactly once, in
/// ascending ID order.
async fn sends_in_id_order(app: &TestApp) {
    let reader = app
        .create_user("reader@parley.test", "Reader", Role::Member)
        .await;
    let mut senders = Vec::new();
    for name in ["ann", "bob", "cat", "dan"] {
        let email = format!("{name}@parley.test");
        senders.push(app.create_user(&email, name, Role::Member).await);
    }
    let everyone: Vec<&Account> = senders.iter().chain([&reader]).collect();
    for channel in ["north", "south"] {
        app.create_channel(&app.owner, channel, &everyone, &[])
            .await;
    }
    let registered = app
        .register(&reader, &[("event_types", json!(["message"]))])
        .await;
    let queue = registered["queue_id"].as_str().unwrap().to_owned();
    let mut sent = Vec::new();
    for n in 0..30 {
        let round: Vec<_> = (0..8)
            .map(|k| send(app, &senders[k % senders.len()], &reader, k, n))
            .collect();
        sent.extend(futures_util::future::join_all(round).await);
    }
    let delivered: Vec<i64> = app
        .events_of(&reader, &queue, &["message"])
        .await
        .iter()
        .map(|e| e["message"]["id"].as_i64().unwrap())
        .collect();
    let out_of_order: Vec<(i64, i64)> = delivered
        .windows(2)
        .filter(|pair| pair[0] >= pair[1])
        .map(|pair| (pair[0], pair[1]))
        .collect();
    assert!(
        out_of_order.is_empty(),
        "{}: {} of {} events came after a higher ID's: {out_of_order:?}",
        app.backend.name(),
        out_of_order.len(),
        delivered.len()
    );
    sent.sort_unstable();
    assert_eq!(delivered, sent, "each message once");
}

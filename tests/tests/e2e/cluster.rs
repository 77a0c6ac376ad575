//! Several server processes on one PostgreSQL database (`docs/scaling.md`): the event log's
//! order under concurrent writers, the snapshot-plus-events oracle with actions and queues on
//! every node, forwarding of long-polls to the node holding the queue, and the hand-over of
//! queues when a node stops. PostgreSQL only: without `TEST_DATABASE_URL` these tests do
//! nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::events_oracle::{random_action, State, CHANNELS};
use parley_domain::Role;
use parley_storage::event_log;
use parley_tests::{Backend, Lcg, TestApp};
use serde_json::{json, Value};
use std::time::Duration;

fn postgres() -> Option<Backend> {
    Backend::available()
        .into_iter()
        .find(|b| matches!(b, Backend::Postgres(_)))
}

/// A transaction that takes its log position and then lingers before committing holds back
/// every later writer, and a reader in the meantime sees neither: no reader can skip an entry
/// by seeing a later one commit first.
#[actix_web::test]
async fn the_log_never_shows_a_later_entry_before_an_earlier_one() {
    let Some(backend) = postgres() else { return };
    let app = TestApp::start(backend).await;
    let db = app.ctx.db.clone();
    let start = db.run(event_log::head).await.unwrap();
    // A: appends, then takes 300 ms to commit.
    let slow = {
        let db = db.clone();
        tokio::spawn(async move {
            db.transaction(|conn| {
                let seq = event_log::append(conn, "[]", 0)?;
                std::thread::sleep(Duration::from_millis(300));
                Ok::<_, parley_storage::StorageError>(seq)
            })
            .await
            .unwrap()
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    // B: starts later, must wait for A and come after it.
    let fast = {
        let db = db.clone();
        tokio::spawn(async move {
            db.transaction(|conn| event_log::append(conn, "[]", 0))
                .await
                .unwrap()
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let meanwhile = db
        .run(move |conn| event_log::read_after(conn, start, 10))
        .await
        .unwrap();
    assert!(meanwhile.is_empty(), "nothing is visible before A commits");
    let (a, b) = (slow.await.unwrap(), fast.await.unwrap());
    assert_eq!(
        (a, b),
        (start + 1, start + 2),
        "positions follow commit order"
    );
    let after = db
        .run(move |conn| event_log::read_after(conn, start, 10))
        .await
        .unwrap();
    assert_eq!(after.iter().map(|e| e.seq).collect::<Vec<_>>(), [a, b]);
}

/// Concurrent senders on three nodes: every queue, on every node, receives every message
/// exactly once and in the same order (the log's).
#[actix_web::test]
async fn concurrent_writers_on_several_nodes_are_seen_in_one_order_everywhere() {
    let Some(backend) = postgres() else { return };
    let nodes = TestApp::start_cluster(backend, 3).await;
    let first = &nodes[0];
    let mut people = Vec::new();
    for i in 0..3 {
        people.push(
            first
                .create_user(
                    &format!("writer{i}@parley.test"),
                    &format!("Writer {i}"),
                    Role::Member,
                )
                .await,
        );
    }
    let refs: Vec<&parley_tests::Account> = people.iter().collect();
    first
        .create_channel(&first.owner, "storm", &refs, &[])
        .await;
    // One message each first: a user's first message in a topic also sets their topic
    // policy, and two such first messages at once collide on it (a race of the send path,
    // not of the log).
    for who in &people {
        first.send_to_channel(who, "storm", "t", "hello").await;
    }
    let watcher = &people[0];
    let mut queues = Vec::new();
    for node in &nodes {
        for _ in 0..2 {
            let snapshot = node
                .register(watcher, &[("event_types", json!(["message"]))])
                .await;
            queues.push(snapshot["queue_id"].as_str().unwrap().to_owned());
        }
    }
    // 3 nodes × 3 writers × 10 messages, all at once.
    let mut sends = Vec::new();
    for (n, node) in nodes.iter().enumerate() {
        for who in &people {
            sends.push(async move {
                let mut ids = Vec::new();
                for i in 0..10 {
                    ids.push(
                        node.send_to_channel(who, "storm", "t", &format!("node {n} message {i}"))
                            .await,
                    );
                }
                ids
            });
        }
    }
    let mut sent: Vec<i64> = futures_util::future::join_all(sends)
        .await
        .into_iter()
        .flatten()
        .collect();
    sent.sort_unstable();
    let mut orders = Vec::new();
    for queue in &queues {
        // Any node answers: the poll is forwarded to the queue's own.
        let node = &nodes[orders.len() % nodes.len()];
        let ids = wait_for_messages(node, watcher, queue, sent.len()).await;
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, sent, "queue {queue}: each message exactly once");
        orders.push(ids);
    }
    for order in &orders[1..] {
        assert_eq!(order, &orders[0], "every queue sees the log's order");
    }
}

/// The message IDs of a queue, polled through `node`, once `count` have arrived.
async fn wait_for_messages(
    node: &TestApp,
    who: &parley_tests::Account,
    queue: &str,
    count: usize,
) -> Vec<i64> {
    let mut ids = Vec::new();
    for _ in 0..200 {
        let events = node.events(who, queue, -1).await;
        ids = events
            .iter()
            .filter(|e| e["type"] == "message")
            .map(|e| e["message"]["id"].as_i64().unwrap())
            .collect();
        if ids.len() >= count {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    ids
}

/// The oracle across nodes: queues registered on every node, random actions sent to random
/// nodes, each queue read through a random node; each queue's snapshot plus its events equals
/// a fresh snapshot.
#[actix_web::test]
async fn snapshot_plus_events_holds_with_actions_and_queues_on_every_node() {
    let Some(backend) = postgres() else { return };
    let nodes = TestApp::start_cluster(backend, 3).await;
    let first = &nodes[0];
    let watcher = first
        .create_user("watcher@parley.test", "Watcher", Role::Member)
        .await;
    let ann = first
        .create_user("ann@parley.test", "Ann", Role::Member)
        .await;
    let bob = first
        .create_user("bob@parley.test", "Bob", Role::Member)
        .await;
    let people = vec![watcher.clone(), ann, bob];
    for name in CHANNELS {
        first
            .create_channel(
                &first.owner,
                name,
                &[&people[0], &people[1], &people[2]],
                &[],
            )
            .await;
    }
    let params = [
        ("include_subscribers", json!(true)),
        (
            "client_capabilities",
            json!({"user_settings_object": true, "empty_topic_name": true}),
        ),
    ];
    for seed in [3u64, 11, 2026] {
        let mut rng = Lcg(seed);
        let mut queues: Vec<(String, State)> = Vec::new();
        for node in &nodes {
            let snapshot = node.register(&watcher, &params).await;
            queues.push((
                snapshot["queue_id"].as_str().unwrap().to_owned(),
                State::from_snapshot(&snapshot),
            ));
        }
        let mut sent = Vec::new();
        for step in 0..60 {
            let node = &nodes[rng.next(nodes.len())];
            random_action(node, &mut rng, &people, &mut sent).await;
            // A queue registered mid-way, on a random node.
            if step == 30 {
                let node = &nodes[rng.next(nodes.len())];
                let snapshot = node.register(&watcher, &params).await;
                queues.push((
                    snapshot["queue_id"].as_str().unwrap().to_owned(),
                    State::from_snapshot(&snapshot),
                ));
            }
        }
        let fresh = State::from_snapshot(&first.register(&watcher, &params).await);
        for (queue, state) in &mut queues {
            let reader = &nodes[rng.next(nodes.len())];
            // Everything is delivered to the queue's node within moments of the commit.
            let mut settled: Option<Vec<Value>> = None;
            for _ in 0..100 {
                let events = reader.events(&watcher, queue, -1).await;
                if settled.as_ref().is_some_and(|s| s.len() == events.len()) {
                    break;
                }
                settled = Some(events);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            for event in settled.unwrap() {
                state.apply(watcher.user_id.0, &event);
            }
            assert_eq!(*state, fresh, "seed {seed}, queue {queue}");
        }
    }
}

/// A poll for a queue whose node is gone is answered BAD_EVENT_QUEUE_ID by any node.
#[actix_web::test]
async fn a_queue_of_a_node_that_is_gone_is_a_bad_queue() {
    let Some(backend) = postgres() else { return };
    let nodes = TestApp::start_cluster(backend, 2).await;
    let owner = nodes[0].owner.clone();
    nodes[0]
        .get("/events")
        .as_user(&owner)
        .param("queue_id", "nosuchnode:1234")
        .param("dont_block", "true")
        .send()
        .await
        .error(400, "BAD_EVENT_QUEUE_ID");
}

/// A node stopping gracefully hands its queues over: a client keeps its queue ID and misses
/// no event, whichever node it reaches next.
#[actix_web::test]
async fn a_stopping_node_hands_its_queues_over() {
    let Some(backend) = postgres() else { return };
    let mut nodes = TestApp::start_cluster(backend, 3).await;
    let owner = nodes[0].owner.clone();
    let doomed = nodes.remove(2);
    let queue = doomed
        .register(&owner, &[("event_types", json!(["message"]))])
        .await["queue_id"]
        .as_str()
        .unwrap()
        .to_owned();
    nodes[0]
        .create_channel(&owner, "handover", &[&owner], &[])
        .await;
    let before = nodes[0]
        .send_to_channel(&owner, "handover", "t", "before")
        .await;
    // Read through another node (forwarded), acknowledging nothing.
    let seen = wait_for_messages(&nodes[1], &owner, &queue, 1).await;
    assert_eq!(seen, [before]);
    let log = doomed.ctx.events.log().unwrap();
    log.mark_stopping().await.unwrap();
    doomed.ctx.events.engine().close();
    // Sent while the node stops: delivered to the queue before or after the hand-over.
    let during = nodes[1]
        .send_to_channel(&owner, "handover", "t", "during")
        .await;
    assert!(log.hand_off().await.unwrap() >= 1);
    drop(doomed);
    let after = nodes[0]
        .send_to_channel(&owner, "handover", "t", "after")
        .await;
    let seen = wait_for_messages(&nodes[1], &owner, &queue, 3).await;
    assert_eq!(seen, [before, during, after], "same queue, nothing missed");
    // Now held by nodes[1]; nodes[0] forwards to it.
    let seen = wait_for_messages(&nodes[0], &owner, &queue, 3).await;
    assert_eq!(seen, [before, during, after]);
}

/// A poll forwarded to a node that has stopped listening but not yet said it is stopping (the
/// moment a rolling restart closes its listener) looks the queue up again and waits for the
/// hand-over, rather than telling the client its queue is gone.
#[actix_web::test]
async fn a_poll_that_cannot_reach_a_stopping_node_waits_for_the_hand_over() {
    let Some(backend) = postgres() else { return };
    let mut nodes = TestApp::start_cluster(backend, 3).await;
    let owner = nodes[0].owner.clone();
    let doomed = nodes.remove(2);
    let queue = doomed
        .register(&owner, &[("event_types", json!(["message"]))])
        .await["queue_id"]
        .as_str()
        .unwrap()
        .to_owned();
    nodes[0]
        .create_channel(&owner, "handover", &[&owner], &[])
        .await;
    let sent = nodes[0]
        .send_to_channel(&owner, "handover", "t", "before")
        .await;
    assert_eq!(
        wait_for_messages(&nodes[1], &owner, &queue, 1).await,
        [sent]
    );
    doomed.stop_serving().await;
    let poll = nodes[1]
        .get("/events")
        .as_user(&owner)
        .param("queue_id", &queue)
        .param("last_event_id", "-1")
        .param("dont_block", "true")
        .send();
    let stop = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let log = doomed.ctx.events.log().unwrap();
        log.mark_stopping().await.unwrap();
        doomed.ctx.events.engine().close();
        assert_eq!(log.hand_off().await.unwrap(), 1);
    };
    let (answer, ()) = tokio::join!(poll, stop);
    let events = answer.success()["events"].as_array().unwrap().clone();
    let ids: Vec<i64> = events
        .iter()
        .filter(|e| e["type"] == "message")
        .map(|e| e["message"]["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [sent], "the queue was adopted, not lost");
}

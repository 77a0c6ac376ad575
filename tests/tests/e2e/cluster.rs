//! Several server processes on one PostgreSQL database (`docs/scaling.md`): the event log's
//! order under concurrent writers, the snapshot-plus-events oracle with actions and queues on
//! every node, forwarding of long-polls to the node holding the queue, the hand-over of queues
//! when a node stops, and scheduled messages and reminders sent exactly once while every node's
//! scheduler ticks at once. PostgreSQL only: without `TEST_DATABASE_URL` these tests do
//! nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::events_oracle::{random_action, State, CHANNELS};
use parley_actions::scheduler::do_deliver_due;
use parley_domain::Role;
use parley_storage::event_log;
use parley_tests::{Backend, Lcg, TestApp};
use serde_json::{json, Value};
use std::time::Duration;

/// A transaction that takes its log position and then lingers before committing holds back
/// every later writer, and a reader in the meantime sees neither: no reader can skip an entry
/// by seeing a later one commit first.
#[actix_web::test]
async fn the_log_never_shows_a_later_entry_before_an_earlier_one() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let app = TestApp::start(backend).await;
    let db = app.ctx.db.clone();
    let start = db.run(event_log::head).await.unwrap();
    // A: appends, then takes 300 ms to commit.
    let slow = {
        let db = db.clone();
        tokio::spawn(async move {
            db.transaction(|conn| {
                let seq = event_log::append(conn, "[]", 0, "test")?;
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
            db.transaction(|conn| event_log::append(conn, "[]", 0, "test"))
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
    let Some(backend) = Backend::postgres() else {
        return;
    };
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
    let Some(backend) = Backend::postgres() else {
        return;
    };
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
    let Some(backend) = Backend::postgres() else {
        return;
    };
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

/// A queue of `owner`'s message events registered on `node`.
async fn message_queue(node: &TestApp, owner: &parley_tests::Account) -> String {
    node.register(owner, &[("event_types", json!(["message"]))])
        .await["queue_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A node stopping gracefully hands its queues over: a client keeps its queue ID and misses
/// no event, whichever node it reaches next.
#[actix_web::test]
async fn a_stopping_node_hands_its_queues_over() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let mut nodes = TestApp::start_cluster(backend, 3).await;
    let owner = nodes[0].owner.clone();
    let doomed = nodes.remove(2);
    let queue = message_queue(&doomed, &owner).await;
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

/// Every node runs the scheduler: 90 scheduled messages, direct messages and reminders, all due
/// at the same second, with three ticks at once on each of three nodes. Each is sent exactly
/// once: the ticks handle 90 in all, the messages are there once each, a watcher's queue gets
/// each message event once, and nothing is left to send. Six more are cancelled by their
/// sender while the ticks run: each is either cancelled (and never sent) or sent (and the
/// cancel answers that it does not exist).
#[actix_web::test]
async fn scheduled_messages_and_reminders_are_sent_once_with_every_node_ticking() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let nodes = TestApp::start_cluster(backend, 3).await;
    let first = &nodes[0];
    let watcher = first
        .create_user("watcher@parley.test", "Watcher", Role::Member)
        .await;
    let mut senders = Vec::new();
    for i in 0..3 {
        senders.push(
            first
                .create_user(
                    &format!("sender{i}@parley.test"),
                    &format!("Sender {i}"),
                    Role::Member,
                )
                .await,
        );
    }
    let mut everyone: Vec<&parley_tests::Account> = senders.iter().collect();
    everyone.push(&watcher);
    first
        .create_channel(&first.owner, "due", &everyone, &[])
        .await;
    // Each conversation once by hand first: a user's first message in a topic also sets their
    // topic policy, and two first messages at once collide on it (a race of the send path that
    // the scheduler survives by trying again at its next tick, but not what is tested here).
    let mut targets = Vec::new();
    for who in &senders {
        targets.push(first.send_to_channel(who, "due", "t", "first").await);
        first
            .post("/messages")
            .as_user(who)
            .param("type", "direct")
            .json_param("to", &json!([watcher.user_id.0]))
            .param("content", "first DM")
            .send()
            .await
            .success();
    }
    let at = now() + 3600;
    let (per_sender_channel, per_sender_direct, per_sender_reminders) = (20, 5, 5);
    for (s, who) in senders.iter().enumerate() {
        for i in 0..per_sender_channel {
            let node = &nodes[i % nodes.len()];
            node.post("/scheduled_messages")
                .as_user(who)
                .param("type", "channel")
                .param("to", "due")
                .param("topic", "t")
                .param("content", format!("due {s} {i}"))
                .param("scheduled_delivery_timestamp", at)
                .send()
                .await
                .success();
        }
        for i in 0..per_sender_direct {
            let node = &nodes[(s + i) % nodes.len()];
            node.post("/scheduled_messages")
                .as_user(who)
                .param("type", "direct")
                .json_param("to", &json!([watcher.user_id.0]))
                .param("content", format!("dm {s} {i}"))
                .param("scheduled_delivery_timestamp", at)
                .send()
                .await
                .success();
        }
        for i in 0..per_sender_reminders {
            let node = &nodes[(s + 2 * i) % nodes.len()];
            node.post("/reminders")
                .as_user(who)
                .param("message_id", targets[s])
                .param("note", format!("note {s} {i}"))
                .param("scheduled_delivery_timestamp", at)
                .send()
                .await
                .success();
        }
    }
    // Scheduled messages their sender cancels while the ticks run: each is sent or cancelled,
    // never both.
    let mut contested = Vec::new();
    for i in 0..6 {
        let id = nodes[i % nodes.len()]
            .post("/scheduled_messages")
            .as_user(&senders[0])
            .param("type", "channel")
            .param("to", "due")
            .param("topic", "t")
            .param("content", format!("contested {i}"))
            .param("scheduled_delivery_timestamp", at)
            .send()
            .await
            .success()["scheduled_message_id"]
            .as_i64()
            .unwrap();
        contested.push(id);
    }
    let total = senders.len() * (per_sender_channel + per_sender_direct + per_sender_reminders);
    let queue = nodes[1]
        .register(&watcher, &[("event_types", json!(["message"]))])
        .await["queue_id"]
        .as_str()
        .unwrap()
        .to_owned();

    // Three ticks at once on each node, and the cancels meanwhile.
    let ticks = nodes
        .iter()
        .flat_map(|node| (0..3).map(move |_| do_deliver_due(&node.ctx, at)));
    let cancels = contested.iter().enumerate().map(|(i, id)| {
        nodes[(i + 1) % nodes.len()]
            .delete(&format!("/scheduled_messages/{id}"))
            .as_user(&senders[0])
            .send()
    });
    let (handled, cancelled) = futures_util::future::join(
        futures_util::future::join_all(ticks),
        futures_util::future::join_all(cancels),
    )
    .await;
    let handled: Vec<usize> = handled
        .into_iter()
        .map(|r| r.expect("a tick succeeds"))
        .collect();
    let cancelled: Vec<bool> = cancelled
        .into_iter()
        .map(|r| match r.status {
            200 => true,
            _ => {
                r.error(404, "BAD_REQUEST");
                false
            }
        })
        .collect();
    let contested_sent = cancelled.iter().filter(|c| !**c).count();
    assert_eq!(
        handled.iter().sum::<usize>(),
        total + contested_sent,
        "ticks: {handled:?}, cancelled: {cancelled:?}"
    );
    assert!(
        handled.iter().filter(|n| **n > 0).count() >= 2,
        "the ticks shared the work (else nothing was contested): {handled:?}"
    );
    let again =
        futures_util::future::join_all(nodes.iter().map(|n| do_deliver_due(&n.ctx, at))).await;
    assert!(again.into_iter().all(|r| r.unwrap() == 0), "nothing twice");

    // The watcher's view: every channel message and DM once.
    let contents = |messages: &Value| -> Vec<String> {
        messages
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .collect()
    };
    let channel = contents(
        &read(&nodes[2], &watcher, json!([["channel", "due"]]))
            .await
            .success()["messages"],
    );
    let direct = contents(
        &read(&nodes[0], &watcher, json!([["is", "dm"]]))
            .await
            .success()["messages"],
    );
    for s in 0..senders.len() {
        for i in 0..per_sender_channel {
            let text = format!("<p>due {s} {i}</p>");
            let count = channel.iter().filter(|c| **c == text).count();
            assert_eq!(count, 1, "{text} sent {count} times");
        }
        for i in 0..per_sender_direct {
            let text = format!("<p>dm {s} {i}</p>");
            let count = direct.iter().filter(|c| **c == text).count();
            assert_eq!(count, 1, "{text} sent {count} times");
        }
    }
    for (i, was_cancelled) in cancelled.iter().enumerate() {
        let text = format!("<p>contested {i}</p>");
        let count = channel.iter().filter(|c| **c == text).count();
        assert_eq!(
            count,
            usize::from(!was_cancelled),
            "contested {i}: cancelled {was_cancelled}, sent {count} times"
        );
    }
    assert_eq!(
        channel.len(),
        senders.len() * (per_sender_channel + 1) + contested_sent,
        "no other channel message"
    );
    assert_eq!(
        direct.len(),
        senders.len() * (per_sender_direct + 1),
        "no other DM"
    );
    // Each sender's reminders: from the notification bot, once each.
    for (s, who) in senders.iter().enumerate() {
        let mine = read(&nodes[s % nodes.len()], who, json!([["is", "dm"]]))
            .await
            .success();
        let reminders: Vec<&Value> = mine["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["sender_email"] == "notification-bot@zulip.com")
            .collect();
        assert_eq!(
            reminders.len(),
            per_sender_reminders,
            "sender {s}: {reminders:?}"
        );
        for i in 0..per_sender_reminders {
            let note = format!("note {s} {i}");
            let count = reminders
                .iter()
                .filter(|m| m["content"].as_str().unwrap().contains(&note))
                .count();
            assert_eq!(count, 1, "reminder {note} sent {count} times");
        }
        let left = first
            .get("/scheduled_messages")
            .as_user(who)
            .send()
            .await
            .success();
        assert_eq!(left["scheduled_messages"], json!([]), "sender {s}");
        let left = first.get("/reminders").as_user(who).send().await.success();
        assert_eq!(left["reminders"], json!([]), "sender {s}");
    }
    // The watcher's queue, on another node than most senders: each message event once.
    let expected = senders.len() * (per_sender_channel + per_sender_direct) + contested_sent;
    wait_for_messages(&nodes[0], &watcher, &queue, expected).await;
    // A little longer, for any second copy.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ids = wait_for_messages(&nodes[0], &watcher, &queue, expected).await;
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(ids.len(), expected, "message events: {}", ids.len());
    assert_eq!(unique.len(), ids.len(), "no message event twice");
}

/// A cancel that reaches a scheduled message while a node's scheduler holds it (sending it,
/// its transaction not yet committed) waits for that transaction, then finds it sent: it
/// answers that the message does not exist rather than claiming to have cancelled a message
/// that went out.
#[actix_web::test]
async fn a_cancel_racing_the_send_is_refused_once_the_message_went_out() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let nodes = TestApp::start_cluster(backend, 2).await;
    let owner = nodes[0].owner.clone();
    nodes[0]
        .create_channel(&owner, "race", &[&owner], &[])
        .await;
    let stand_in = nodes[0].send_to_channel(&owner, "race", "t", "sent").await;
    let at = now() + 3600;
    for (path, extra) in [
        ("/scheduled_messages", ("content", "later".to_owned())),
        ("/reminders", ("message_id", stand_in.to_string())),
    ] {
        let mut request = nodes[0]
            .post(path)
            .as_user(&owner)
            .param("scheduled_delivery_timestamp", at)
            .param(extra.0, &extra.1);
        if path == "/scheduled_messages" {
            request = request
                .param("type", "channel")
                .param("to", "race")
                .param("topic", "t");
        }
        let body = request.send().await.success();
        let id = body["scheduled_message_id"]
            .as_i64()
            .or(body["reminder_id"].as_i64())
            .unwrap();
        // Node 0's scheduler takes it and lingers before committing.
        let db = nodes[0].ctx.db.clone();
        let sending = tokio::spawn(async move {
            db.transaction(move |conn| {
                let row = parley_storage::scheduled_messages::next_due(conn, at)?.unwrap();
                assert_eq!(row.id, id);
                parley_storage::scheduled_messages::mark_delivered(conn, row.id, stand_in)?;
                std::thread::sleep(Duration::from_millis(400));
                Ok::<_, parley_storage::StorageError>(())
            })
            .await
            .unwrap()
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        let body = nodes[1]
            .delete(&format!("{path}/{id}"))
            .as_user(&owner)
            .send()
            .await
            .error(404, "BAD_REQUEST");
        assert!(
            body["msg"].as_str().unwrap().ends_with("does not exist"),
            "{body}"
        );
        sending.await.unwrap();
    }
}

/// The newest 1000 messages `who` sees in `narrow`, read through `node`.
async fn read(
    node: &TestApp,
    who: &parley_tests::Account,
    narrow: Value,
) -> parley_tests::Response {
    node.get("/messages")
        .as_user(who)
        .param("anchor", "newest")
        .param("num_before", 1000)
        .param("num_after", 0)
        .json_param("narrow", &narrow)
        .send()
        .await
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A poll forwarded to a node that has stopped listening but not yet said it is stopping (the
/// moment a rolling restart closes its listener) looks the queue up again and waits for the
/// hand-over, rather than telling the client its queue is gone.
#[actix_web::test]
async fn a_poll_that_cannot_reach_a_stopping_node_waits_for_the_hand_over() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let mut nodes = TestApp::start_cluster(backend, 3).await;
    let owner = nodes[0].owner.clone();
    let doomed = nodes.remove(2);
    let queue = message_queue(&doomed, &owner).await;
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

/// Polls reaching other nodes while a node hands its queues over: each poll looks for the
/// handed-over queue and for the node holding it until one of them turns up, and every poll
/// must find its queue. (A poll once looked for the hand-over first and the holder second: a
/// hand-over committed between the two looks made the queue seem held by no live node, and
/// the client was told its queue was gone. One client of six lost its queue that way in a
/// rolling restart of three nodes.) The polls are spread over the wait so that their looks
/// fall at every point of it.
#[actix_web::test]
async fn polls_racing_a_hand_over_all_find_their_queues() {
    const QUEUES: usize = 240;
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let mut nodes = TestApp::start_cluster(backend, 3).await;
    let owner = nodes[0].owner.clone();
    let doomed = nodes.remove(2);
    let mut queues = Vec::new();
    for _ in 0..QUEUES {
        queues.push(message_queue(&doomed, &owner).await);
    }
    doomed.stop_serving().await;
    let log = doomed.ctx.events.log().unwrap();
    log.mark_stopping().await.unwrap();
    doomed.ctx.events.engine().close();
    let polls = queues.iter().enumerate().map(|(i, queue)| {
        let node = &nodes[i % 2];
        let owner = &owner;
        async move {
            // Spread over the 100 ms between a waiting poll's looks.
            tokio::time::sleep(Duration::from_micros((i as u64 * 100_000) / QUEUES as u64)).await;
            node.get("/events")
                .as_user(owner)
                .param("queue_id", queue)
                .param("last_event_id", "-1")
                .param("dont_block", "true")
                .send()
                .await
        }
    });
    let hand_off = async {
        tokio::time::sleep(Duration::from_millis(450)).await;
        assert_eq!(log.hand_off().await.unwrap(), QUEUES);
    };
    let (answers, ()) = tokio::join!(futures_util::future::join_all(polls), hand_off);
    let lost: Vec<String> = answers
        .into_iter()
        .filter(|answer| answer.status != 200)
        .map(|answer| format!("{} {}", answer.status, answer.text))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {QUEUES} polls lost their queue: {lost:?}",
        lost.len()
    );
}

/// A process delivers the entries it appended from memory, without reading them back from the
/// log (a send's entry names every recipient); and a request dropped while its transaction
/// runs still hands its entry over, so the event is not left for the follower's next read of
/// the log (up to a second later).
#[actix_web::test]
async fn a_process_delivers_its_own_entries_without_reading_them_back() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let app = TestApp::start(backend).await;
    let reader = app
        .create_user("reader@parley.test", "Reader", Role::Member)
        .await;
    app.create_channel(&app.owner, "quiet", &[&reader], &[])
        .await;
    let queue = message_queue(&app, &reader).await;
    let log = app.ctx.events.log().unwrap();
    let before = log.entries_read_from_log();
    let mut sent = Vec::new();
    for i in 0..20 {
        sent.push(
            app.send_to_channel(&app.owner, "quiet", "t", &format!("m{i}"))
                .await,
        );
    }
    assert_eq!(wait_for_messages(&app, &reader, &queue, 20).await, sent);
    let read = log.entries_read_from_log() - before;
    // The follower's periodic read can come between a commit and its hand-over, rarely.
    assert!(
        read <= 2,
        "{read} of 20 entries were read back from the log"
    );

    // Requests dropped after ever longer delays, until one was dropped with its message
    // committed: that message's event still comes from memory.
    let before = log.entries_read_from_log();
    let mut dropped = None;
    for delay in (0..40).map(|i| Duration::from_micros(250 * (i + 1))) {
        let content = format!("dropped after {delay:?}");
        let request = app
            .post("/messages")
            .as_user(&app.owner)
            .param("type", "stream")
            .param("to", "quiet")
            .param("topic", "t")
            .param("content", &content)
            .send();
        if tokio::time::timeout(delay, request).await.is_ok() {
            continue;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let newest = app.newest_message(&app.owner).await;
        if newest["content"].as_str().unwrap_or("").contains(&content) {
            dropped = newest["id"].as_i64();
            break;
        }
    }
    let dropped = dropped.expect("no request was dropped with its message committed");
    let mut arrived = false;
    for _ in 0..100 {
        let events = app.events(&reader, &queue, -1).await;
        arrived = events.iter().any(|e| e["message"]["id"] == dropped);
        if arrived {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(arrived, "the dropped request's event arrived");
    let read = log.entries_read_from_log() - before;
    assert_eq!(read, 0, "entries read back from the log");
}

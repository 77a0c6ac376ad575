//! Sends racing the changes that decide their recipients: every message must reach, by event
//! and in its readers' history alike, exactly the users subscribed when it committed. On SQLite
//! a send reads its channel, recipients and flags before its writing turn
//! (`messages_send::prepare`) and reads them again in the turn when such a change was recorded
//! in between; on PostgreSQL sends and span changes are ordered by an advisory lock
//! (`spans::recipients_for_send`). The test fails on each backend without its mechanism.
//! Concurrent sends to one channel must leave each sender's own copy read and nothing else: on
//! PostgreSQL their messages take IDs in commit order (migration 000110), which that test fails
//! without.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::RunQueryDsl;
use parley_domain::{ChannelId, Role};
use parley_storage::messages::{self, NewMessage};
use parley_storage::{spans, DbConn, StorageError};
use parley_tests::pages::page;
use parley_tests::{busy_backend_test, lifted_api_limit, Account, Backend, TestApp};
use serde_json::json;
use std::collections::BTreeSet;
use std::time::Duration;

/// The IDs of the channel's messages that `who` received (their own history, not the channel's).
async fn received(app: &TestApp, who: &Account, channel: &str) -> BTreeSet<i64> {
    let page = app
        .get("/messages")
        .as_user(who)
        .param("anchor", "newest")
        .param("num_before", 1000)
        .param("num_after", 0)
        .send()
        .await
        .success();
    page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["display_recipient"] == channel)
        .map(|m| m["id"].as_i64().unwrap())
        .collect()
}

/// The IDs of the `message` events in a queue.
async fn delivered(app: &TestApp, who: &Account, queue: &str) -> BTreeSet<i64> {
    app.events_of(who, queue, &["message"])
        .await
        .iter()
        .map(|e| e["message"]["id"].as_i64().unwrap())
        .collect()
}

async fn set_subscribed(app: &TestApp, who: &Account, channel: &str, subscribed: bool) {
    let request = if subscribed {
        app.post("/users/me/subscriptions")
            .json_param("subscriptions", &json!([{ "name": channel }]))
    } else {
        app.delete("/users/me/subscriptions")
            .json_param("subscriptions", &json!([channel]))
    };
    request
        .as_user(&app.owner)
        .json_param("principals", &json!([who.user_id.0]))
        .send()
        .await
        .success();
}

busy_backend_test! {
    async fn sends_racing_subscription_changes_reach_exactly_the_subscribers_at_commit(app) {
        race_sends_and_subscription_changes(&app).await;
    }
}

/// The same race with PostgreSQL's event-producing writes committed in batches (the writer,
/// `--postgres-group-commit on`): a batch holds the locks of all its writes, and two batches
/// run side by side deadlocked here on the channel's lock.
#[actix_web::test]
async fn sends_racing_subscription_changes_in_batches_reach_exactly_the_subscribers() {
    let Some(app) = TestApp::start_with_group_commit().await else {
        return;
    };
    race_sends_and_subscription_changes(&app).await;
}

/// 180 sends, three at a time, while four readers are subscribed and unsubscribed: each
/// reader's events and history must name the same messages.
async fn race_sends_and_subscription_changes(app: &TestApp) {
    let sender = app
        .create_user("sender@parley.test", "Sender", Role::Member)
        .await;
    let mut readers = Vec::new();
    for i in 0..4 {
        let email = format!("reader{i}@parley.test");
        readers.push(
            app.create_user(&email, &format!("Reader {i}"), Role::Member)
                .await,
        );
    }
    // Private, history not shared: a reader sees exactly the messages sent while subscribed.
    app.create_channel(
        &app.owner,
        "race",
        &[&sender],
        &[
            ("invite_only", json!(true)),
            ("history_public_to_subscribers", json!(false)),
        ],
    )
    .await;
    let mut queues = Vec::new();
    for reader in &readers {
        let registered = app
            .register(reader, &[("event_types", json!(["message"]))])
            .await;
        queues.push(registered["queue_id"].as_str().unwrap().to_owned());
    }
    let sends = async {
        let mut ids = Vec::new();
        for n in 0..60 {
            let texts: Vec<String> = (0..3).map(|k| format!("m {n} {k}")).collect();
            let sends: Vec<_> = texts
                .iter()
                .map(|text| app.send_to_channel(&sender, "race", "t", text))
                .collect();
            ids.extend(futures_util::future::join_all(sends).await);
        }
        ids
    };
    let changes = async {
        for round in 0..30 {
            let changes: Vec<_> = readers
                .iter()
                .enumerate()
                .map(|(i, reader)| set_subscribed(app, reader, "race", (round + i) % 2 == 0))
                .collect();
            futures_util::future::join_all(changes).await;
        }
    };
    let (ids, ()) = futures_util::join!(sends, changes);
    assert_eq!(ids.len(), 180);
    for (reader, queue) in readers.iter().zip(&queues) {
        let by_event = delivered(app, reader, queue).await;
        let in_history = received(app, reader, "race").await;
        assert_eq!(
            by_event, in_history,
            "{}: events and history differ",
            reader.email
        );
    }
    if app.ctx.db.writes_in_turn() {
        // The race this test is about happened (else it proves nothing here).
        let again = app.ctx.events.realm_cache().sends_prepared_again();
        assert!(again > 0, "no send was prepared again");
    }
}

/// The IDs of the messages of "busy" that `who` has not read.
async fn unread_in_busy(app: &TestApp, who: &Account) -> BTreeSet<i64> {
    let narrow = json!([["channel", "busy"], ["is", "unread"]]);
    page(app, who, &narrow, "newest", 1000, 0)
        .await
        .into_iter()
        .collect()
}

busy_backend_test! {
    async fn concurrent_sends_to_one_channel_mark_only_the_senders_own_copies_read(app) {
        // Ann's and Bob's copies of their own messages are read (`read_by_sender`): each joins
        // the sender's read range that ends at the channel's previous message. On PostgreSQL a
        // send that took a lower ID and committed later would end up inside that range, read
        // for someone who never saw it: IDs are taken in commit order (migration 000110), and
        // this fails without it. Cat's sends (an API client's) write no read copy.
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let cat = app.create_user("cat@parley.test", "Cat", Role::Member).await;
        app.create_channel(&ann, "busy", &[&ann, &bob, &cat], &[]).await;
        let send = |who: &Account, text: String| {
            let mut request = app.post("/messages").as_user(who).param("type", "stream")
                .param("to", "busy").param("topic", "t").param("content", text);
            if who.user_id != cat.user_id {
                request = request.param("read_by_sender", true);
            }
            async move { request.send().await.success()["id"].as_i64().unwrap() }
        };
        let mut sent: Vec<(i64, &Account)> = Vec::new();
        for n in 0..40 {
            let sends: Vec<_> = [&ann, &bob, &cat, &ann, &bob, &cat]
                .into_iter()
                .enumerate()
                .map(|(k, who)| {
                    let done = send(who, format!("m {n} {k}"));
                    async move { (done.await, who) }
                })
                .collect();
            sent.extend(futures_util::future::join_all(sends).await);
        }
        let by = |keep: &dyn Fn(&Account) -> bool| -> BTreeSet<i64> {
            sent.iter().filter(|(_, who)| keep(who)).map(|(id, _)| *id).collect()
        };
        for reader in [&ann, &bob] {
            let others = by(&|who| who.user_id != reader.user_id);
            assert_eq!(unread_in_busy(&app, reader).await, others, "{}'s unread messages", reader.email);
        }
        assert_eq!(unread_in_busy(&app, &cat).await, by(&|_| true), "cat's unread messages");
    }
}

/// Marks `ids` read for `who` through the API.
async fn mark_read(app: &TestApp, who: &Account, ids: &[i64]) {
    app.post("/messages/flags")
        .as_user(who)
        .json_param("messages", &json!(ids))
        .param("op", "add")
        .param("flag", "read")
        .send()
        .await
        .success();
}

/// On PostgreSQL (None without it): Ann and Cat in channel `busy` (its ID is the last), Ann
/// having read its first message, sent by Cat.
async fn reader_and_sender() -> Option<(TestApp, Account, Account, i64)> {
    let app = TestApp::start_with_limits(Backend::postgres()?, lifted_api_limit()).await;
    let ann = app
        .create_user("ann@parley.test", "Ann", Role::Member)
        .await;
    let cat = app
        .create_user("cat@parley.test", "Cat", Role::Member)
        .await;
    let busy = app.create_channel(&ann, "busy", &[&ann, &cat], &[]).await;
    let first = app.send_to_channel(&cat, "busy", "t", "first").await;
    mark_read(&app, &ann, &[first]).await;
    Some((app, ann, cat, busy))
}

/// Marking a message read joins the reader's read ranges when no message of the channel lies
/// between; a send that has its ID but has not committed yet lies between unseen, and must
/// not end up inside the joined range. PostgreSQL only (on SQLite writes take turns): the send
/// in progress is held open here, inside the channel's send lock as every send is, while
/// another send commits above it and the reader marks that one read.
#[actix_web::test]
async fn marking_read_does_not_join_ranges_across_a_send_in_progress() {
    let Some((app, ann, cat, channel)) = reader_and_sender().await else {
        return;
    };

    let (taken, id) = tokio::sync::oneshot::channel();
    let db = app.ctx.db.clone();
    let sender = cat.user_id;
    let slow = tokio::task::spawn_blocking(move || {
        let mut conn = db.conn().unwrap();
        parley_storage::transaction(&mut conn, |conn| {
            let channel = ChannelId(channel);
            let recipients = spans::recipients_for_send(conn, channel)?;
            let message = NewMessage {
                sender_id: sender,
                channel_id: Some(channel),
                topic: "t".into(),
                dm_key: None,
                dm_group_id: None,
                recipient_user_id: None,
                content: "slow".into(),
                rendered_content: "<p>slow</p>".into(),
                date_sent: 0,
                has_link: false,
                has_image: false,
                has_attachment: false,
                client: "test".into(),
            };
            let flags: Vec<_> = recipients.into_iter().map(|u| (u, 0)).collect();
            let id = messages::insert(conn, &message, &flags)?;
            taken.send(id.0).unwrap();
            std::thread::sleep(Duration::from_millis(400));
            Ok::<_, StorageError>(id.0)
        })
        .unwrap()
    });
    let slow_id = id.await.unwrap();
    let second = app.send_to_channel(&cat, "busy", "t", "second").await;
    assert!(second > slow_id, "the later send takes a higher ID");
    mark_read(&app, &ann, &[second]).await;
    assert_eq!(slow.await.unwrap(), slow_id);
    assert_eq!(
        unread_in_busy(&app, &ann).await,
        BTreeSet::from([slow_id]),
        "the message that committed late is still unread"
    );
}

/// The same for a move: a message moved into the channel keeps its old ID, so until the move
/// commits it lies unseen between the reader's ranges there, and marking a later message read
/// must not join them across it (the move starts first and is still in progress when the
/// message is marked read). Both are held just before their commits, their writes done, by a
/// lock on the event log's head (each one's last statement appends its event), taken here
/// before either starts.
#[actix_web::test]
async fn marking_read_does_not_join_ranges_across_a_move_in_progress() {
    mark_read_racing_a_move(First::Move).await;
}

/// And the other way round: the mark-as-read starts first and joins the ranges (the message is
/// not in the channel yet), and the move, started while it is in progress, must see the joined
/// range and keep its message unread.
#[actix_web::test]
async fn a_move_waits_for_a_mark_as_read_in_progress() {
    mark_read_racing_a_move(First::MarkRead).await;
}

/// Which of the two starts first, 150 ms before the other.
#[derive(PartialEq)]
enum First {
    Move,
    MarkRead,
}

/// Ann's unread message `moving` in channel `other` is moved into `busy` while she marks the
/// later `second` there read, both held before their commits; `moving` must stay unread.
async fn mark_read_racing_a_move(first: First) {
    let Some((app, ann, cat, busy)) = reader_and_sender().await else {
        return;
    };
    app.create_channel(&ann, "other", &[&ann, &cat], &[]).await;
    let moving = app.send_to_channel(&cat, "other", "t", "moving").await;
    let second = app.send_to_channel(&cat, "busy", "t", "second").await;

    let (locked, head_held) = tokio::sync::oneshot::channel();
    let db = app.ctx.db.clone();
    let holder = tokio::task::spawn_blocking(move || {
        let mut conn = db.conn().unwrap();
        parley_storage::transaction(&mut conn, |conn| {
            let DbConn::Pg(pg) = conn else {
                unreachable!("PostgreSQL only")
            };
            diesel::sql_query("SELECT seq FROM event_log_head WHERE id = 1 FOR UPDATE")
                .execute(pg)
                .map_err(StorageError::from)?;
            locked.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(600));
            Ok::<_, StorageError>(())
        })
        .unwrap()
    });
    head_held.await.unwrap();
    let later = || tokio::time::sleep(Duration::from_millis(150));
    let move_it = async {
        if first == First::MarkRead {
            later().await;
        }
        app.patch(&format!("/messages/{moving}"))
            .as_user(&app.owner)
            .param("stream_id", busy)
            .param("propagate_mode", "change_one")
            .param("send_notification_to_old_thread", "false")
            .param("send_notification_to_new_thread", "false")
            .send()
            .await
            .success();
    };
    let read_it = async {
        if first == First::Move {
            later().await;
        }
        mark_read(&app, &ann, &[second]).await;
    };
    futures_util::join!(move_it, read_it);
    holder.await.unwrap();
    assert_eq!(
        unread_in_busy(&app, &ann).await,
        BTreeSet::from([moving]),
        "the moved message is still unread"
    );
}

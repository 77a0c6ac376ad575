//! `is:unread` pages, read from the reader's unread messages nearest the anchor in ID windows
//! that grow outwards (`storage::unread_nearest`): with unread messages far apart (long runs of
//! IDs nobody received between them), direct messages among them, some read, and anchors
//! anywhere, every page must be exactly the unread messages nearest the anchor, as the list
//! computed from what was sent and read says; and `anchor=first_unread` resolves to the first of
//! them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::connection::SimpleConnection;
use parley_storage::{DbConn, StorageError};
use parley_tests::pages::{assert_pages, expected, page, SHAPES};
use parley_tests::statements::{count_statements, fewest_statements};
use parley_tests::{busy_backend_test, lifted_api_limit, Backend, TestApp};
use serde_json::json;

/// Makes the next message's ID `n` higher than it would have been: a run of IDs no one
/// received (as another organization's traffic, or deleted messages, leave).
async fn skip_message_ids(app: &TestApp, n: i64) {
    app.ctx
        .db
        .transaction(move |conn| {
            let sql = match conn {
                DbConn::Sqlite(_) => {
                    format!("UPDATE sqlite_sequence SET seq = seq + {n} WHERE name = 'messages'")
                }
                DbConn::Pg(_) => format!(
                    "SELECT setval(pg_get_serial_sequence('messages', 'id'), \
                     (SELECT MAX(id) FROM messages) + {n})"
                ),
            };
            conn.batch_execute(&sql).map_err(StorageError::from)
        })
        .await
        .unwrap();
}

/// The anchor `anchor=first_unread` resolves to in `narrow`, as `reader` asks.
async fn first_unread(
    app: &TestApp,
    reader: &parley_tests::Account,
    narrow: &serde_json::Value,
) -> i64 {
    let body = app
        .get("/messages")
        .as_user(reader)
        .param("anchor", "first_unread")
        .param("num_before", 0)
        .param("num_after", 1)
        .json_param("narrow", narrow)
        .send()
        .await
        .success();
    body["anchor"].as_i64().expect("anchor")
}

busy_backend_test! {
    async fn unread_pages_are_the_unread_messages_nearest_the_anchor(app) {
        let (ann, bob, _) = app.ann_and_bob_in("near").await;
        app.create_channel(&ann, "far", &[&ann, &bob], &[]).await;
        // Bob's messages, unread for Ann: groups far apart, each with a direct message.
        let mut sent: Vec<(i64, &str)> = Vec::new();
        for (group, skip) in [(0, 3_000), (1, 700), (2, 20_000), (3, 0)] {
            for i in 0..4 {
                let channel = if (group + i) % 2 == 0 { "near" } else { "far" };
                let id = app.send_to_channel(&bob, channel, "t", &format!("g{group} m{i}")).await;
                sent.push((id, channel));
            }
            sent.push((app.send_direct(&bob, json!([ann.user_id.0]), &format!("g{group} dm")).await, "dm"));
            skip_message_ids(&app, skip).await;
        }
        // Ann reads one stretch and single messages, a direct message among them.
        let read: Vec<i64> = [1, 5, 6, 7, 8, 14].iter().map(|&i| sent[i].0).collect();
        app.post("/messages/flags").as_user(&ann).json_param("messages", &json!(read))
            .param("op", "add").param("flag", "read").send().await.success();
        let unread_in = |place: Option<&str>| -> Vec<i64> {
            sent.iter()
                .filter(|(id, at)| !read.contains(id) && place.is_none_or(|p| p == *at))
                .map(|(id, _)| *id)
                .collect()
        };
        let unread = unread_in(None);
        assert_eq!(unread.len(), 14);

        let anchors = |list: &[i64]| (list[0], list[list.len() / 2], *list.last().unwrap());
        for (narrow, matches) in [
            (json!([["is", "unread"]]), unread.clone()),
            (json!([["channel", "far"], ["is", "unread"]]), unread_in(Some("far"))),
            (json!([["is", "dm"], ["is", "unread"]]), unread_in(Some("dm"))),
        ] {
            assert_pages(&app, &ann, &narrow, &matches, anchors(&matches), &SHAPES).await;
            assert_eq!(first_unread(&app, &ann, &narrow).await, matches[0], "first unread of {narrow}");
        }
        // Without `is:unread` too: the first unread message of the channel, of everything.
        assert_eq!(first_unread(&app, &ann, &json!([["channel", "near"]])).await, unread_in(Some("near"))[0]);
        assert_eq!(first_unread(&app, &ann, &json!([])).await, unread[0]);
        // From every message sent, read or not, and from inside the runs between the groups.
        let narrow = json!([["is", "unread"]]);
        let mut from: Vec<i64> = sent.iter().map(|(id, _)| *id).collect();
        from.extend(sent.iter().map(|(id, _)| id + 350));
        for anchor in from {
            for (before, after) in [(1, 1), (2, 0), (0, 2), (3, 3)] {
                assert_eq!(
                    page(&app, &ann, &narrow, &anchor.to_string(), before, after).await,
                    expected(&unread, anchor, before, after),
                    "anchor {anchor}, {before} before, {after} after"
                );
            }
        }
        // Bob's own messages: sent through the API, they start unread for him too.
        let bob_view: Vec<i64> = sent.iter().map(|(id, _)| *id).collect();
        assert_pages(&app, &bob, &narrow, &bob_view, anchors(&bob_view), &SHAPES).await;
        // A channel with nothing unread while others have unread messages: its newest ones.
        app.create_channel(&ann, "quiet", &[&ann, &bob], &[]).await;
        let mut quiet = Vec::new();
        for i in 0..3 {
            quiet.push(app.send_to_channel(&bob, "quiet", "t", &format!("q{i}")).await);
        }
        app.post("/messages/flags").as_user(&ann).json_param("messages", &json!(quiet))
            .param("op", "add").param("flag", "read").send().await.success();
        let in_quiet = json!([["channel", "quiet"]]);
        assert_eq!(page(&app, &ann, &in_quiet, "first_unread", 2, 2).await, quiet[1..].to_vec());
    }
}

/// A page around the first unread message reads the reader's spans, read ranges and span
/// channels once for its three parts (the anchor, the messages before it, those after it), as
/// a page around the same ID given as a number does for its two (`Audience` keeps them for the
/// request).
#[actix_web::test]
async fn a_page_around_the_first_unread_reads_the_readers_state_once() {
    count_statements();
    for backend in Backend::available() {
        let app = TestApp::start_with_limits(backend, lifted_api_limit()).await;
        let (ann, bob, _) = app.ann_and_bob_in("near").await;
        let mut sent = Vec::new();
        for i in 0..6 {
            sent.push(
                app.send_to_channel(&bob, "near", "t", &format!("m{i}"))
                    .await,
            );
        }
        app.post("/messages/flags")
            .as_user(&ann)
            .json_param("messages", &json!(sent[..3]))
            .param("op", "add")
            .param("flag", "read")
            .send()
            .await
            .success();
        // `is:unread` reads every channel's spans and ranges, a channel's unread messages only
        // that channel's: once per request either way, so the channel's page reads one
        // statement more (the span channels, apart), not one more per part.
        let mut by_ids = Vec::new();
        for narrow in [
            json!([["is", "unread"]]),
            json!([["channel", "near"], ["is", "unread"]]),
        ] {
            let first = first_unread(&app, &ann, &narrow).await;
            assert_eq!(first, sent[3]);
            let expected = sent[3..].to_vec();
            let around = |anchor: String| {
                let (app, ann, narrow, expected) = (&app, &ann, &narrow, &expected);
                async move {
                    assert_eq!(&page(app, ann, narrow, &anchor, 2, 2).await, expected);
                }
            };
            let by_id = fewest_statements(&app, || around(first.to_string())).await;
            let by_first_unread = fewest_statements(&app, || around("first_unread".into())).await;
            // The anchor adds what the first unread message skips (muted channels and topics,
            // one statement) and its own unread window, unread rows and page; read again per
            // part, the spans, ranges and newest ID would add two more, and read apart (as
            // they were) three more per part.
            assert!(
                by_first_unread <= by_id + 4,
                "{narrow}: {by_first_unread} against {by_id}"
            );
            by_ids.push(by_id);
        }
        assert!(by_ids[1] <= by_ids[0] + 1, "{by_ids:?}");
    }
}

busy_backend_test! {
    /// Every third message unread, each its own gap between read ranges: more gaps than one
    /// window takes (`unread_nearest::MAX_GAPS_PER_WINDOW`), so the walk goes window by window
    /// through them, from either side and from the middle.
    async fn many_small_gaps_are_walked_window_by_window(app) {
        let (ann, bob, _) = app.ann_and_bob_in("many").await;
        let mut sent = Vec::new();
        for i in 0..240 {
            sent.push(app.send_to_channel(&bob, "many", "t", &format!("m{i}")).await);
        }
        let read: Vec<i64> = sent.iter().enumerate().filter(|(i, _)| i % 3 != 1)
            .map(|(_, id)| *id).collect();
        app.post("/messages/flags").as_user(&ann).json_param("messages", &json!(read))
            .param("op", "add").param("flag", "read").send().await.success();
        let unread: Vec<i64> = sent.iter().copied().filter(|id| !read.contains(id)).collect();
        assert_eq!(unread.len(), 80);
        let narrow = json!([["is", "unread"]]);
        let anchors = (unread[0], unread[unread.len() / 2], *unread.last().unwrap());
        assert_pages(&app, &ann, &narrow, &unread, anchors, &SHAPES).await;
        assert_eq!(first_unread(&app, &ann, &narrow).await, unread[0]);
        assert_eq!(first_unread(&app, &ann, &json!([])).await, unread[0]);
        for anchor in [sent[0], sent[100], sent[101], sent[239]] {
            assert_eq!(
                page(&app, &ann, &narrow, &anchor.to_string(), 70, 70).await,
                expected(&unread, anchor, 70, 70),
                "anchor {anchor}"
            );
        }
    }
}

/// In a narrow that asks for unread messages, nothing of the narrow is older than its first
/// unread message, so a page around it reads nothing before it (as many statements as the page
/// with no message before it asked for); unless muting skipped some of them: then the muted
/// unread messages before the anchor are the page's, as the reference shows them.
#[actix_web::test]
async fn an_unread_narrow_reads_nothing_before_its_first_unread_message_unless_muting_skipped_some()
{
    count_statements();
    for backend in Backend::available() {
        let app = TestApp::start_with_limits(backend, lifted_api_limit()).await;
        let (ann, bob, _) = app.ann_and_bob_in("near").await;
        let hushed = app.send_to_channel(&bob, "near", "hushed", "m0").await;
        let mut sent = vec![hushed];
        for i in 1..5 {
            sent.push(
                app.send_to_channel(&bob, "near", "t", &format!("m{i}"))
                    .await,
            );
        }
        let narrow = json!([["is", "unread"]]);
        assert_eq!(
            page(&app, &ann, &narrow, "first_unread", 2, 2).await,
            sent[..3].to_vec()
        );
        let around = |before: usize| {
            let (app, ann, narrow) = (&app, &ann, &narrow);
            async move {
                page(app, ann, narrow, "first_unread", before, 2).await;
            }
        };
        let with_before = fewest_statements(&app, || around(2)).await;
        let without = fewest_statements(&app, || around(0)).await;
        assert_eq!(
            with_before, without,
            "the side before the first unread message was read"
        );
        // Muted, the first message is skipped by the anchor but still an unread match before it.
        let channel = app
            .get("/get_stream_id")
            .as_user(&ann)
            .param("stream", "near")
            .send()
            .await
            .success()["stream_id"]
            .as_i64()
            .unwrap();
        app.post("/user_topics")
            .as_user(&ann)
            .param("stream_id", channel)
            .param("topic", "hushed")
            .param("visibility_policy", 1)
            .send()
            .await
            .success();
        let body = app
            .get("/messages")
            .as_user(&ann)
            .param("anchor", "first_unread")
            .param("num_before", 2)
            .param("num_after", 2)
            .json_param("narrow", &narrow)
            .send()
            .await
            .success();
        assert_eq!(body["anchor"], sent[1]);
        let ids: Vec<i64> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, sent[..4].to_vec());
        assert_eq!(body["found_oldest"], true);
    }
}

//! Search pages over a history long enough that PostgreSQL reads them in several ID windows
//! (`storage::search_windows`) and SQLite walks its FTS5 index from the anchor: every page must
//! be exactly the matches nearest the anchor, whichever anchor, side, word or narrow.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::message::flags;
use parley_domain::{ChannelId, Role, UserId};
use parley_storage::messages::{self, NewMessage};
use parley_tests::pages::{assert_pages, expected, page, seeded_message, SHAPES};
use parley_tests::{busy_backend_test, Account, TestApp};
use serde_json::json;

/// One seeded message, as the oracle sees it.
struct Seeded {
    id: i64,
    /// In the channel the reader is in ("dev", "few"); otherwise in "open" or "busy", which only
    /// Ann is in.
    dev: bool,
    topic: String,
    content: String,
}

const HISTORY: usize = 1_500;

/// The content of the `i`th seeded message: every seventh says "deploy", three say "zebra"
/// (near the start, the middle and the end).
fn content_of(i: usize) -> String {
    let mut content = format!("note {i}");
    if i.is_multiple_of(7) {
        content.push_str(" deploy");
    }
    if [3, 700, 1_497].contains(&i) {
        content.push_str(" zebra");
    }
    content
}

/// Writes the `i`th seeded message from `sender` straight into storage, in `channel`, with
/// the recipients' rows `rows`.
fn insert_seeded(
    conn: &mut parley_storage::DbConn,
    i: usize,
    sender: UserId,
    channel: i64,
    rows: &[(UserId, i64)],
) -> Result<Seeded, parley_storage::StorageError> {
    let content = content_of(i);
    let topic = format!("t{}", i % 3);
    let new = NewMessage {
        channel_id: Some(ChannelId(channel)),
        topic: topic.clone(),
        ..seeded_message(sender, i, &content)
    };
    let id = messages::insert(conn, &new, rows)?;
    Ok(Seeded {
        id: id.0,
        dev: false,
        topic,
        content,
    })
}

/// Messages straight into storage ([`content_of`]); three in four go to "dev" (Ann and Bob;
/// Bob's are unread from the 1,200th on), the rest to "open" (Ann only, readable by Bob from
/// its history).
async fn seed(app: &TestApp, ann: &Account, bob: &Account, dev: i64, open: i64) -> Vec<Seeded> {
    let (ann_id, bob_id) = (ann.user_id, bob.user_id);
    app.ctx
        .db
        .transaction(move |conn| {
            let mut seeded = Vec::new();
            for i in 0..HISTORY {
                let in_dev = i % 4 != 3;
                let mut rows: Vec<(UserId, i64)> = vec![(ann_id, flags::READ)];
                if in_dev {
                    let bob_flags = if i >= 1_200 { 0 } else { flags::READ };
                    rows.push((bob_id, bob_flags));
                }
                let channel = if in_dev { dev } else { open };
                let message = insert_seeded(conn, i, ann_id, channel, &rows)?;
                seeded.push(Seeded {
                    dev: in_dev,
                    ..message
                });
            }
            Ok::<_, parley_storage::StorageError>(seeded)
        })
        .await
        .unwrap()
}

busy_backend_test! {
    async fn search_pages_are_the_matches_nearest_the_anchor_over_a_long_history(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let carol = app.create_user("carol@parley.test", "Carol", Role::Member).await;
        let dev = app.create_channel(&ann, "dev", &[&ann, &bob], &[]).await;
        let open = app.create_channel(&ann, "open", &[&ann], &[]).await;
        let history = seed(&app, &ann, &bob, dev, open).await;
        let select = |keep: &dyn Fn(&Seeded) -> bool| -> Vec<i64> {
            history.iter().filter(|m| keep(m)).map(|m| m.id).collect()
        };
        let has = |m: &Seeded, word: &str| m.content.split(' ').any(|w| w == word);
        let deploy_dev = select(&|m| m.dev && has(m, "deploy"));
        let zebra_dev = select(&|m| m.dev && has(m, "zebra"));
        assert!(deploy_dev.len() > 150, "{}", deploy_dev.len());
        assert_eq!(zebra_dev.len(), 2);
        let first = history[0].id;
        let last = history[HISTORY - 1].id;
        let middle = history[HISTORY / 2].id;
        let deploy = json!([["search", "deploy"]]);
        let zebra = json!([["search", "zebra"]]);

        // Bob's own messages (the "dev" ones): a common and a rare word, from every anchor,
        // on either side and both.
        for (narrow, matches) in [(&deploy, &deploy_dev), (&zebra, &zebra_dev)] {
            assert_pages(&app, &bob, narrow, matches, (first, middle, last), &SHAPES[..10]).await;
        }
        // An anchor that is itself a match is included once.
        let hit = deploy_dev[56];
        assert_eq!(page(&app, &bob, &deploy, &hit.to_string(), 0, 0).await, vec![hit]);
        let got = page(&app, &bob, &deploy, &hit.to_string(), 3, 3).await;
        assert_eq!(got, deploy_dev[53..60].to_vec());

        // Combined with a channel and a topic, and in a channel's history Bob never received.
        let narrow = json!([["channel", "dev"], ["topic", "t1"], ["search", "deploy"]]);
        let matches = select(&|m| m.dev && m.topic == "t1" && has(m, "deploy"));
        assert_eq!(page(&app, &bob, &narrow, "newest", 100, 0).await, expected(&matches, i64::MAX, 100, 0));
        assert_eq!(page(&app, &bob, &narrow, &middle.to_string(), 4, 4).await, expected(&matches, middle, 4, 4));
        let narrow = json!([["channel", "open"], ["search", "deploy"]]);
        let matches = select(&|m| !m.dev && has(m, "deploy"));
        assert!(matches.len() > 50, "{}", matches.len());
        assert_eq!(page(&app, &bob, &narrow, "newest", 100, 0).await, matches);
        assert_eq!(page(&app, &bob, &narrow, &middle.to_string(), 5, 5).await, expected(&matches, middle, 5, 5));
        let narrow = json!([["channel", "open"], ["search", "zebra"]]);
        assert_eq!(page(&app, &bob, &narrow, "oldest", 0, 10).await, select(&|m| !m.dev && has(m, "zebra")));

        // Unread first: Bob's first unread "deploy" and what follows it.
        let unread: Vec<i64> = history.iter().enumerate()
            .filter(|(i, m)| *i >= 1_200 && m.dev && has(m, "deploy")).map(|(_, m)| m.id).collect();
        assert_eq!(page(&app, &bob, &deploy, "first_unread", 0, 4).await, unread[..5].to_vec());

        // A reader who received none of the matches (every window read, none found), and one
        // who reads them from the channel's history.
        assert!(page(&app, &carol, &deploy, "newest", 100, 0).await.is_empty());
        let narrow = json!([["channel", "open"], ["search", "deploy"]]);
        assert_eq!(page(&app, &carol, &narrow, "oldest", 0, 3).await, matches[..3].to_vec());

        // Several words: every one must match; only stop words or no word match nothing.
        let got = page(&app, &bob, &json!([["search", "zebra deploy"]]), "newest", 100, 0).await;
        assert_eq!(got, select(&|m| m.dev && has(m, "zebra") && has(m, "deploy")));
        assert!(page(&app, &bob, &json!([["search", "giraffe"]]), "newest", 100, 0).await.is_empty());
    }
}

busy_backend_test! {
    async fn edits_and_moves_keep_what_search_finds(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        app.create_channel(&ann, "dev", &[&ann], &[]).await;
        let ops = app.create_channel(&ann, "ops", &[&ann], &[]).await;
        let id = app.send_to_channel(&ann, "dev", "plans", "the giraffe escaped").await;
        let other = app.send_to_channel(&ann, "dev", "plans", "all quiet").await;
        let find = |word: &str| {
            let narrow = json!([["search", word]]);
            let app = &app;
            let ann = &ann;
            async move { page(app, ann, &narrow, "newest", 10, 0).await }
        };
        assert_eq!(find("giraffe").await, vec![id]);
        app.patch(&format!("/messages/{id}")).as_user(&ann)
            .param("content", "the okapi escaped").send().await.success();
        assert!(find("giraffe").await.is_empty(), "the old content is no longer found");
        assert_eq!(find("okapi").await, vec![id]);
        // A move of the whole topic to another channel and topic: found by the new topic.
        app.patch(&format!("/messages/{id}")).as_user(&ann)
            .param("topic", "zoo escapes").param("stream_id", ops)
            .param("propagate_mode", "change_all")
            .param("send_notification_to_old_thread", false)
            .param("send_notification_to_new_thread", false)
            .send().await.success();
        assert_eq!(find("zoo").await, vec![id, other]);
        assert!(find("plans").await.is_empty(), "the old topic is no longer found");
        let narrow = json!([["channel", "ops"], ["search", "escapes okapi"]]);
        assert_eq!(page(&app, &ann, &narrow, "newest", 10, 0).await, vec![id]);
    }
}

busy_backend_test! {
    async fn a_reader_of_few_messages_finds_the_matches_nearest_the_anchor(app) {
        // Dora is in "few", which gets one message in twenty (the others go to "busy", which she
        // is not in), and has direct messages of her own: her search pages are read among her
        // messages on PostgreSQL (`search_windows::among_received`), a rare word's by the
        // windows from where those stop; every page must still be the nearest matches.
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let dora = app.create_user("dora@parley.test", "Dora", Role::Member).await;
        let few = app.create_channel(&ann, "few", &[&ann, &dora], &[]).await;
        let busy = app.create_channel(&ann, "busy", &[&ann], &[]).await;
        let (ann_id, dora_id) = (ann.user_id, dora.user_id);
        let history = app
            .ctx
            .db
            .transaction(move |conn| {
                let mut seeded = Vec::new();
                for i in 0..HISTORY {
                    let (channel, rows) = match i % 20 {
                        0 => (few, vec![(ann_id, flags::READ), (dora_id, 0)]),
                        _ => (busy, vec![(ann_id, flags::READ)]),
                    };
                    let message = insert_seeded(conn, i, ann_id, channel, &rows)?;
                    seeded.push(Seeded { dev: channel == few, ..message });
                }
                Ok::<_, parley_storage::StorageError>(seeded)
            })
            .await
            .unwrap();
        let mut deploy: Vec<i64> = history.iter()
            .filter(|m| m.dev && m.content.split(' ').any(|w| w == "deploy"))
            .map(|m| m.id).collect();
        let zebra: Vec<i64> = history.iter()
            .filter(|m| m.dev && m.content.contains("zebra")).map(|m| m.id).collect();
        assert_eq!(zebra.len(), 1, "the 700th message is in \"few\"");
        assert!(deploy.len() > 8, "{}", deploy.len());
        // Her own rows: direct messages after the channel history, some saying "deploy".
        for i in 0..12 {
            let word = if i % 3 == 0 { "deploy" } else { "hello" };
            let id = app.send_direct(&ann, json!([dora.user_id]), &format!("dm {i} {word}")).await;
            if i % 3 == 0 {
                deploy.push(id);
            }
        }
        let first = history[0].id;
        let middle = history[HISTORY / 2].id;
        let last = *deploy.last().unwrap();
        for (word, matches) in [("deploy", &deploy), ("zebra", &zebra)] {
            let narrow = json!([["search", word]]);
            assert_pages(&app, &dora, &narrow, matches, (first, middle, last), &SHAPES).await;
        }
        // With another term, and from her first unread message.
        let narrow = json!([["channel", "few"], ["search", "deploy"]]);
        let in_few: Vec<i64> = deploy.iter().copied().filter(|id| *id <= history[HISTORY - 1].id).collect();
        assert_pages(&app, &dora, &narrow, &in_few, (first, middle, last), &SHAPES[..6]).await;
        let narrow = json!([["search", "deploy"]]);
        assert_eq!(page(&app, &dora, &narrow, "first_unread", 0, 3).await, deploy[..4].to_vec());
    }
}

//! Search pages over a history long enough that PostgreSQL reads them in several ID windows
//! (`storage::search_windows`) and SQLite walks its FTS5 index from the anchor: every page must
//! be exactly the matches nearest the anchor, whichever anchor, side, word or narrow.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::message::flags;
use parley_domain::{ChannelId, Role, UserId};
use parley_storage::messages::{self, NewMessage};
use parley_tests::pages::{assert_pages, expected, page, SHAPES};
use parley_tests::{busy_backend_test, Account, TestApp};
use serde_json::json;

/// One seeded message, as the oracle sees it.
struct Seeded {
    id: i64,
    /// In the channel both readers are in ("dev"); otherwise in "open", which only Ann is in.
    dev: bool,
    topic: String,
    content: String,
}

const HISTORY: usize = 1_500;

/// Messages straight into storage: every seventh says "deploy", three say "zebra" (near the
/// start, the middle and the end); three in four go to "dev" (Ann and Bob; Bob's are unread
/// from the 1,200th on), the rest to "open" (Ann only, readable by Bob from its history).
async fn seed(app: &TestApp, ann: &Account, bob: &Account, dev: i64, open: i64) -> Vec<Seeded> {
    let (ann_id, bob_id) = (ann.user_id, bob.user_id);
    app.ctx
        .db
        .transaction(move |conn| {
            let mut seeded = Vec::new();
            for i in 0..HISTORY {
                let in_dev = i % 4 != 3;
                let mut content = format!("note {i}");
                if i % 7 == 0 {
                    content.push_str(" deploy");
                }
                if [3, 700, 1_497].contains(&i) {
                    content.push_str(" zebra");
                }
                let topic = format!("t{}", i % 3);
                let new = NewMessage {
                    sender_id: ann_id,
                    channel_id: Some(ChannelId(if in_dev { dev } else { open })),
                    topic: topic.clone(),
                    dm_key: None,
                    dm_group_id: None,
                    recipient_user_id: None,
                    content: content.clone(),
                    rendered_content: format!("<p>{content}</p>"),
                    date_sent: 1_700_000_000 + i as i64,
                    has_link: false,
                    has_image: false,
                    has_attachment: false,
                    client: "test".into(),
                };
                let mut rows: Vec<(UserId, i64)> = vec![(ann_id, flags::READ)];
                if in_dev {
                    let bob_flags = if i >= 1_200 { 0 } else { flags::READ };
                    rows.push((bob_id, bob_flags));
                }
                let id = messages::insert(conn, &new, &rows)?;
                seeded.push(Seeded {
                    id: id.0,
                    dev: in_dev,
                    topic,
                    content,
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

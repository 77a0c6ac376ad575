//! Pages of flag narrows (`is:starred`, `is:mentioned`, `is:alerted`, alone and with a channel
//! or each other; `is:dm` and `dm-including:`, from the private rows; `is:followed`, from each
//! followed topic; and no narrow, from the reader's spans and own rows), which are read from
//! the reader's flagged rows and `@all` messages first
//! (`storage::flag_pages`), in windows that grow when the other terms leave a page short: every
//! page must be exactly the matches nearest the anchor, whichever anchor and side, against the
//! list computed from the seed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::message::{dm_key, flags};
use parley_domain::{ChannelId, Role, UserId};
use parley_storage::messages::{self, NewMessage};
use parley_tests::pages::{assert_pages, expected, page, seeded_message, SHAPES};
use parley_tests::{busy_backend_test, Account, TestApp};
use serde_json::json;

/// Where a seeded message went.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Place {
    /// Ann and Bob; few messages.
    Dev,
    /// Ann and Bob (Bob unsubscribes after the first `SECOND_PHASE` messages); most messages.
    Side,
    /// Ann only; Bob may read its history.
    Open,
    /// A direct message between Ann and Bob.
    Direct,
}

/// One seeded message and Bob's flags on it as the oracle sees them (None: not received).
struct Seeded {
    id: i64,
    place: Place,
    /// Its topic is `t{topic}` (channel messages).
    topic: usize,
    bob: Option<i64>,
}

const HISTORY: usize = 900;
/// Bob leaves "side" before this message.
const SECOND_PHASE: usize = 600;

fn place_of(i: usize) -> Place {
    if i % 37 == 5 {
        Place::Direct
    } else if i.is_multiple_of(50) {
        Place::Dev
    } else if i % 10 == 9 {
        Place::Open
    } else {
        Place::Side
    }
}

/// Bob's bits on message `i` when he receives it: starred every third, mentioned every
/// seventh, an alert word every thirteenth, `@all` (a channel message's, for everyone) every
/// eleventh, read below 700.
fn bob_bits(i: usize, place: Place) -> i64 {
    let mut bits = 0;
    if i < 700 {
        bits |= flags::READ;
    }
    if i.is_multiple_of(3) {
        bits |= flags::STARRED;
    }
    if i.is_multiple_of(7) {
        bits |= flags::MENTIONED;
    }
    if i.is_multiple_of(13) {
        bits |= flags::HAS_ALERT_WORD;
    }
    if i.is_multiple_of(11) && place != Place::Direct {
        bits |= flags::STREAM_WILDCARD_MENTIONED;
    }
    if place == Place::Direct {
        bits |= flags::IS_PRIVATE;
    }
    bits
}

/// Messages `range` straight into storage; Bob is a recipient of "side" only while
/// `bob_in_side`.
async fn seed(
    app: &TestApp,
    ann: &Account,
    bob: &Account,
    channels: (i64, i64, i64),
    range: std::ops::Range<usize>,
    bob_in_side: bool,
) -> Vec<Seeded> {
    let (ann_id, bob_id) = (ann.user_id, bob.user_id);
    let (dev, side, open) = channels;
    app.ctx
        .db
        .transaction(move |conn| {
            let mut seeded = Vec::new();
            for i in range {
                let place = place_of(i);
                let channel = match place {
                    Place::Dev => Some(dev),
                    Place::Side => Some(side),
                    Place::Open => Some(open),
                    Place::Direct => None,
                };
                let content = format!("note {i}");
                let new = NewMessage {
                    channel_id: channel.map(ChannelId),
                    topic: if channel.is_some() {
                        format!("t{}", i % 3)
                    } else {
                        String::new()
                    },
                    dm_key: (place == Place::Direct).then(|| dm_key(&[ann_id, bob_id])),
                    recipient_user_id: (place == Place::Direct).then_some(bob_id),
                    ..seeded_message(ann_id, i, &content)
                };
                let bits = bob_bits(i, place);
                let ann_bits = flags::READ
                    | (bits & flags::STREAM_WILDCARD_MENTIONED)
                    | (bits & flags::IS_PRIVATE);
                let mut rows: Vec<(UserId, i64)> = vec![(ann_id, ann_bits)];
                let receives = match place {
                    Place::Dev | Place::Direct => true,
                    Place::Side => bob_in_side,
                    Place::Open => false,
                };
                if receives {
                    rows.push((bob_id, bits));
                }
                let id = messages::insert(conn, &new, &rows)?;
                seeded.push(Seeded {
                    id: id.0,
                    place,
                    topic: i % 3,
                    bob: receives.then_some(bits),
                });
            }
            Ok::<_, parley_storage::StorageError>(seeded)
        })
        .await
        .unwrap()
}

busy_backend_test! {
    async fn flag_pages_are_the_matches_nearest_the_anchor(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let dev = app.create_channel(&ann, "dev", &[&ann, &bob], &[]).await;
        let side = app.create_channel(&ann, "side", &[&ann, &bob], &[]).await;
        let open = app.create_channel(&ann, "open", &[&ann], &[]).await;
        let channels = (dev, side, open);
        let mut history = seed(&app, &ann, &bob, channels, 0..SECOND_PHASE, true).await;
        app.delete("/users/me/subscriptions").as_user(&bob)
            .json_param("subscriptions", &json!(["side"])).send().await.success();
        history.extend(seed(&app, &ann, &bob, channels, SECOND_PHASE..HISTORY, false).await);

        // Bob stars two messages of "open" from its history: historical rows.
        let historical: Vec<i64> = history.iter().filter(|m| m.place == Place::Open)
            .map(|m| m.id).skip(3).step_by(40).take(2).collect();
        assert_eq!(historical.len(), 2);
        app.post("/messages/flags").as_user(&bob).json_param("messages", &json!(historical))
            .param("op", "add").param("flag", "starred").send().await.success();

        let select = |keep: &dyn Fn(&Seeded, i64) -> bool| -> Vec<i64> {
            history.iter()
                .filter_map(|m| {
                    let bits = if historical.contains(&m.id) {
                        flags::READ | flags::HISTORICAL | flags::STARRED
                    } else {
                        m.bob?
                    };
                    keep(m, bits).then_some(m.id)
                })
                .collect()
        };
        let mention_bits = flags::MENTIONED | flags::STREAM_WILDCARD_MENTIONED;
        let starred = select(&|_, b| b & flags::STARRED != 0);
        let mentioned = select(&|_, b| b & mention_bits != 0);
        let wildcard_only = select(&|_, b| b & mention_bits == flags::STREAM_WILDCARD_MENTIONED);
        let alerted = select(&|_, b| b & flags::HAS_ALERT_WORD != 0);
        let dev_starred = select(&|m, b| m.place == Place::Dev && b & flags::STARRED != 0);
        let side_mentioned = select(&|m, b| m.place == Place::Side && b & mention_bits != 0);
        let starred_mentioned = select(&|_, b| b & flags::STARRED != 0 && b & mention_bits != 0);
        // Direct-message narrows walk Bob's private rows; `is:followed` each followed topic.
        let direct = select(&|m, _| m.place == Place::Direct);
        // No narrow: every message Bob received (his spans, with "side" ended, his direct
        // messages and his historical rows), read from his spans and rows (`nearest_ids`).
        let received = select(&|_, _| true);
        let follows = [(Place::Dev, dev, 1), (Place::Side, side, 2), (Place::Open, open, 0)];
        for (_, stream_id, topic) in follows {
            app.post("/user_topics").as_user(&bob).param("stream_id", stream_id)
                .param("topic", format!("t{topic}")).param("visibility_policy", 3)
                .send().await.success();
        }
        let followed = select(&|m, _| follows.iter().any(|(p, _, t)| m.place == *p && m.topic == *t));
        let followed_starred = select(&|m, b| {
            b & flags::STARRED != 0 && follows.iter().any(|(p, _, t)| m.place == *p && m.topic == *t)
        });
        assert!(direct.len() > 20 && direct.len() * 10 < HISTORY, "{}", direct.len());
        // Followed messages of "side" after Bob left, and of "open" (but the two he starred),
        // are not his to read.
        assert!(followed.len() > 100 && followed.len() * 3 < HISTORY, "{}", followed.len());
        assert!(starred.len() > 150 && historical.iter().all(|h| starred.contains(h)));
        assert!(wildcard_only.len() > 20, "{}", wildcard_only.len());
        assert!((3..10).contains(&dev_starred.len()), "{}", dev_starred.len());
        assert!(starred.len() > 20 * dev_starred.len());
        // No @all message of "side" after Bob left reaches him.
        let late_side_wildcard = history.iter().enumerate()
            .filter(|(i, m)| *i >= SECOND_PHASE && m.place == Place::Side && i % 11 == 0)
            .count();
        assert!(late_side_wildcard > 10);

        let first = history[0].id;
        let last = history[HISTORY - 1].id;
        let middle = history[HISTORY / 2].id;
        let cases = [
            (json!([]), &received),
            (json!([["is", "starred"]]), &starred),
            (json!([["is", "mentioned"]]), &mentioned),
            (json!([["is", "alerted"]]), &alerted),
            (json!([["channel", "dev"], ["is", "starred"]]), &dev_starred),
            (json!([["channel", "side"], ["is", "mentioned"]]), &side_mentioned),
            (json!([["is", "starred"], ["is", "mentioned"]]), &starred_mentioned),
            (json!([["is", "dm"]]), &direct),
            (json!([["dm-including", ann.email]]), &direct),
            (json!([["is", "followed"]]), &followed),
            (json!([["is", "followed"], ["is", "starred"]]), &followed_starred),
        ];
        for (narrow, matches) in &cases {
            assert_pages(&app, &bob, narrow, matches, (first, middle, last), &SHAPES).await;
            // From each match as the anchor (included once), and excluded at either end.
            for hit in matches.iter().step_by(matches.len().div_ceil(6).max(1)) {
                let text = hit.to_string();
                assert_eq!(page(&app, &bob, narrow, &text, 3, 3).await, expected(matches, *hit, 3, 3), "{narrow} {hit}");
                assert_eq!(page(&app, &bob, narrow, &text, 0, 0).await, vec![*hit], "{narrow} {hit}");
                let body = app.get("/messages").as_user(&bob).param("anchor", &text)
                    .param("num_before", 4).param("num_after", 0).param("include_anchor", false)
                    .json_param("narrow", narrow).send().await.success();
                let ids: Vec<i64> = body["messages"].as_array().unwrap().iter()
                    .map(|m| m["id"].as_i64().unwrap()).collect();
                assert_eq!(ids, expected(matches, *hit, 4, 0).into_iter().filter(|id| id != hit).collect::<Vec<_>>());
            }
            // The first unread match (Bob's unread messages are the newest ones).
            let unread: Vec<i64> = matches.iter().copied().filter(|id| {
                let i = history.iter().position(|m| m.id == *id).unwrap();
                i >= 700 && !historical.contains(id)
            }).collect();
            let anchor = unread.first().copied().unwrap_or(i64::MAX);
            let body = app.get("/messages").as_user(&bob).param("anchor", "first_unread")
                .param("num_before", 5).param("num_after", 5)
                .json_param("narrow", narrow).send().await.success();
            let ids: Vec<i64> = body["messages"].as_array().unwrap().iter()
                .map(|m| m["id"].as_i64().unwrap()).collect();
            assert_eq!(ids, expected(matches, anchor, 5, 5), "{narrow} first_unread {} {anchor}", body["anchor"]);
        }

        // The flags the pages show are Bob's: @all from the message, stars from the rows.
        let body = app.get("/messages").as_user(&bob).param("anchor", "newest")
            .param("num_before", 1000).param("num_after", 0)
            .json_param("narrow", &json!([["is", "mentioned"]])).send().await.success();
        for m in body["messages"].as_array().unwrap() {
            let id = m["id"].as_i64().unwrap();
            let names: Vec<&str> = m["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
            if wildcard_only.contains(&id) {
                assert!(names.contains(&"stream_wildcard_mentioned") && !names.contains(&"mentioned"), "{id} {names:?}");
            }
        }
    }
}

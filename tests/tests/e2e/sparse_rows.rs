//! Issue 15's representation seen from storage: a channel send writes no row per recipient
//! (only the rows that carry a flag of their own), reading writes a read range, and every
//! member's flags are still what the API shows.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::prelude::*;
use parley_storage::schema::{read_ranges, user_messages};
use parley_tests::{backend_test, Account, TestApp};
use serde_json::json;

async fn rows_of(app: &TestApp, message: i64) -> Vec<(i64, i64)> {
    app.ctx
        .db
        .transaction(move |conn| {
            user_messages::table
                .filter(user_messages::message_id.eq(message))
                .select((user_messages::user_id, user_messages::flags))
                .order(user_messages::user_id)
                .load::<(i64, i64)>(conn)
                .map_err(parley_storage::StorageError::from)
        })
        .await
        .unwrap()
}

/// A user's read ranges `(channel, low, high)`, in order of `high`.
async fn ranges_with_channels(app: &TestApp, user: i64) -> Vec<(i64, i64, i64)> {
    app.ctx
        .db
        .transaction(move |conn| {
            read_ranges::table
                .filter(read_ranges::user_id.eq(user))
                .select((read_ranges::channel_id, read_ranges::low, read_ranges::high))
                .order(read_ranges::high)
                .load::<(i64, i64, i64)>(conn)
                .map_err(parley_storage::StorageError::from)
        })
        .await
        .unwrap()
}

async fn ranges_of(app: &TestApp, user: i64) -> Vec<(i64, i64)> {
    let all = ranges_with_channels(app, user).await;
    all.into_iter().map(|(_, low, high)| (low, high)).collect()
}

async fn flags(app: &TestApp, who: &Account, id: i64) -> Vec<String> {
    app.get(&format!("/messages/{id}"))
        .as_user(who)
        .send()
        .await
        .success()["message"]["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect()
}

backend_test! {
    async fn a_channel_send_writes_rows_only_for_flags_that_differ(app) {
        let owner = app.owner.clone();
        let ann = app.create_user("ann@parley.test", "Ann", parley_domain::Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", parley_domain::Role::Member).await;
        let cat = app.create_user("cat@parley.test", "Cat", parley_domain::Role::Member).await;
        app.create_channel(&owner, "big", &[&owner, &ann, &bob, &cat], &[]).await;

        let plain = app
            .post("/messages")
            .as_user(&owner)
            .param("type", "stream")
            .param("to", "big")
            .param("topic", "t")
            .param("content", "hello everyone")
            .param("read_by_sender", "true")
            .send()
            .await
            .success()["id"]
            .as_i64()
            .unwrap();
        assert!(rows_of(&app, plain).await.is_empty(), "no row per recipient");
        assert_eq!(flags(&app, &ann, plain).await, Vec::<String>::new());
        // The sender's own copy is read: a read range, not a row.
        assert_eq!(flags(&app, &owner, plain).await, vec!["read".to_owned()]);
        assert_eq!(ranges_of(&app, owner.user_id.0).await, vec![(plain, plain)]);

        let mention = app.send_to_channel(&owner, "big", "t", "hi @**Bob**").await;
        let rows = rows_of(&app, mention).await;
        assert_eq!(rows.len(), 1, "only the mentioned member has a row: {rows:?}");
        assert_eq!(rows[0].0, bob.user_id.0);
        assert!(flags(&app, &bob, mention).await.contains(&"mentioned".to_owned()));
        // The row stores `read` set, which the ranges override: it stays out of the index of
        // unread rows, while Bob's flags, unread count and `is:unread` still say unread.
        assert_ne!(rows[0].1 & parley_domain::message::flags::READ, 0, "{rows:?}");
        assert!(!flags(&app, &bob, mention).await.contains(&"read".to_owned()));
        let unread = app
            .get("/messages")
            .as_user(&bob)
            .param("anchor", "newest")
            .param("num_before", "10")
            .param("num_after", "0")
            .json_param("narrow", &json!([{"operator": "is", "operand": "unread"}]))
            .send()
            .await
            .success();
        let ids: Vec<i64> = unread["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, vec![plain, mention]);
        let registered = app
            .post("/register")
            .as_user(&bob)
            .json_param("fetch_event_types", &json!(["message", "update_message_flags"]))
            .send()
            .await
            .success();
        assert_eq!(registered["unread_msgs"]["count"], 2);
        assert_eq!(registered["unread_msgs"]["mentions"], json!([mention]));

        let everyone = app.send_to_channel(&owner, "big", "t", "@**all** look").await;
        assert!(rows_of(&app, everyone).await.is_empty(), "@all is the message's");
        assert!(flags(&app, &cat, everyone)
            .await
            .contains(&"stream_wildcard_mentioned".to_owned()));

        // Reading all three: one range, no row.
        app.post("/messages/flags")
            .as_user(&ann)
            .json_param("messages", &json!([plain, mention, everyone]))
            .param("op", "add")
            .param("flag", "read")
            .send()
            .await
            .success();
        assert_eq!(ranges_of(&app, ann.user_id.0).await, vec![(plain, everyone)]);
        assert!(rows_of(&app, plain).await.is_empty());
        assert!(flags(&app, &ann, mention).await.contains(&"read".to_owned()));
        assert!(!flags(&app, &cat, mention).await.contains(&"read".to_owned()));

        // Unreading the middle one splits the range.
        app.post("/messages/flags")
            .as_user(&ann)
            .json_param("messages", &json!([mention]))
            .param("op", "remove")
            .param("flag", "read")
            .send()
            .await
            .success();
        assert_eq!(
            ranges_of(&app, ann.user_id.0).await,
            vec![(plain, plain), (everyone, everyone)]
        );
        assert!(!flags(&app, &ann, mention).await.contains(&"read".to_owned()));
    }
}

/// The maximal runs of read messages, in the channel's order: what the read ranges must be.
fn runs(channel: &[i64], read: &std::collections::BTreeSet<i64>) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::new();
    let mut open = false;
    for id in channel {
        match (read.contains(id), open) {
            (true, true) => out.last_mut().unwrap().1 = *id,
            (true, false) => out.push((*id, *id)),
            _ => {}
        }
        open = read.contains(id);
    }
    out
}

backend_test! {
    async fn marking_many_read_and_unread_keeps_the_ranges_exact_and_maximal(app) {
        let owner = app.owner.clone();
        let ann = app.create_user("ann@parley.test", "Ann", parley_domain::Role::Member).await;
        app.create_channel(&owner, "busy", &[&owner, &ann], &[]).await;
        app.create_channel(&owner, "other", &[&owner, &ann], &[]).await;
        // The channel's messages interleaved with another channel's, so that its IDs are not
        // consecutive and a merge must ask what lies between.
        let mut busy = Vec::new();
        let mut everything = Vec::new();
        for n in 0..40 {
            let id = app.send_to_channel(&owner, "busy", "t", &format!("busy {n}")).await;
            busy.push(id);
            everything.push(id);
            if n % 3 == 0 {
                everything.push(app.send_to_channel(&owner, "other", "t", &format!("other {n}")).await);
            }
        }
        let mut read = std::collections::BTreeSet::new();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % n
        };
        for round in 0..12 {
            let add = round % 3 != 2;
            let count = 1 + next(15);
            let chosen: Vec<i64> = (0..count).map(|_| everything[next(everything.len())]).collect();
            let answer = app
                .post("/messages/flags")
                .as_user(&ann)
                .json_param("messages", &json!(chosen))
                .param("op", if add { "add" } else { "remove" })
                .param("flag", "read")
                .send()
                .await
                .success();
            assert_eq!(answer["messages"], json!(chosen));
            for id in chosen.iter().filter(|id| busy.contains(id)) {
                if add {
                    read.insert(*id);
                } else {
                    read.remove(id);
                }
            }
            let stored: Vec<(i64, i64)> = {
                let all = ranges_of(&app, ann.user_id.0).await;
                let mut mine = Vec::new();
                for (low, high) in all {
                    if busy.contains(&low) {
                        mine.push((low, high));
                    }
                }
                mine
            };
            assert_eq!(stored, runs(&busy, &read), "round {round}: ranges of the busy channel");
            let page = app
                .get("/messages")
                .as_user(&ann)
                .param("anchor", "newest")
                .param("num_before", "100")
                .param("num_after", "0")
                .json_param("narrow", &json!([{"operator": "channel", "operand": "busy"}]))
                .send()
                .await
                .success();
            for message in page["messages"].as_array().unwrap() {
                let id = message["id"].as_i64().unwrap();
                let shown = message["flags"].as_array().unwrap().contains(&json!("read"));
                assert_eq!(shown, read.contains(&id), "round {round}: message {id}");
            }
        }
        // Marking everything read leaves one range per channel.
        app.post("/mark_all_as_read").as_user(&ann).send().await.success();
        let stored: Vec<(i64, i64)> = ranges_of(&app, ann.user_id.0)
            .await
            .into_iter()
            .filter(|r| busy.contains(&r.0))
            .collect();
        assert_eq!(stored, vec![(busy[0], *busy.last().unwrap())]);
    }
}

/// A user's read ranges in one channel, in order.
async fn ranges_in(app: &TestApp, user: i64, channel: i64) -> Vec<(i64, i64)> {
    let all = ranges_with_channels(app, user).await;
    all.into_iter()
        .filter(|(c, _, _)| *c == channel)
        .map(|(_, low, high)| (low, high))
        .collect()
}

backend_test! {
    async fn a_sender_reading_their_own_sends_keeps_one_range(app) {
        let owner = app.owner.clone();
        let ann = app.create_user("ann@parley.test", "Ann", parley_domain::Role::Member).await;
        let big = app.create_channel(&owner, "big", &[&owner, &ann], &[]).await;
        app.create_channel(&owner, "other", &[&owner, &ann], &[]).await;
        let own = |channel: &'static str, content: &'static str| {
            app.post("/messages").as_user(&owner).param("type", "stream").param("to", channel)
                .param("topic", "t").param("content", content).param("read_by_sender", "true")
                .send()
        };
        let me = owner.user_id.0;
        let first = own("big", "one").await.success()["id"].as_i64().unwrap();
        // A message of another channel between two of the channel's does not part them.
        own("other", "elsewhere").await.success();
        let second = own("big", "two").await.success()["id"].as_i64().unwrap();
        assert_eq!(ranges_in(&app, me, big).await, vec![(first, second)]);
        // Ann's message in between is unread for the owner: the next own send starts a range.
        let anns = app.send_to_channel(&ann, "big", "t", "from ann").await;
        let third = own("big", "three").await.success()["id"].as_i64().unwrap();
        assert_eq!(ranges_in(&app, me, big).await, vec![(first, second), (third, third)]);
        assert!(!flags(&app, &owner, anns).await.contains(&"read".to_owned()));
        assert!(flags(&app, &owner, third).await.contains(&"read".to_owned()));
        // Reading it joins all three into one maximal range.
        app.post("/messages/flags").as_user(&owner).json_param("messages", &json!([anns]))
            .param("op", "add").param("flag", "read").send().await.success();
        assert_eq!(ranges_in(&app, me, big).await, vec![(first, third)]);
    }
}

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

async fn ranges_of(app: &TestApp, user: i64) -> Vec<(i64, i64)> {
    app.ctx
        .db
        .transaction(move |conn| {
            read_ranges::table
                .filter(read_ranges::user_id.eq(user))
                .select((read_ranges::low, read_ranges::high))
                .order(read_ranges::high)
                .load::<(i64, i64)>(conn)
                .map_err(parley_storage::StorageError::from)
        })
        .await
        .unwrap()
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

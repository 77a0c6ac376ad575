//! Statements per send (issue 15): on PostgreSQL each is a round trip with its parsing and
//! planning, so a send's cost follows their number. The caller, and what a send reads about
//! people (alert words, mutes, the sender's topic settings) and, on SQLite, the channel's
//! recipients come from the organization cache;
//! the channel and the sender's subscription are one statement (on PostgreSQL with the send's
//! locks), the topic's first message and the sender's policy for the topic another (on
//! PostgreSQL with the recipients), and a read copy joins its reader's read range in one.
//! `realm_cache.rs` checks that what is cached stays current. `PRINT_STATEMENTS=1` prints each
//! statement counted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::statements::{count_statements, fewest_statements};
use parley_tests::{lifted_api_limit, Backend, TestApp};
use serde_json::json;

#[actix_web::test]
async fn a_channel_send_takes_few_statements() {
    // Before any app starts, so that every connection of its pool is counted.
    count_statements();
    for backend in Backend::available() {
        let postgres = matches!(backend, Backend::Postgres(_));
        let app = TestApp::start_with_limits(backend, lifted_api_limit()).await;
        let ann = app
            .create_user("ann@parley.test", "Ann", Role::Member)
            .await;
        let bob = app
            .create_user("bob@parley.test", "Bob", Role::Member)
            .await;
        let cat = app
            .create_user("cat@parley.test", "Cat", Role::Member)
            .await;
        app.create_channel(&app.owner, "town", &[&ann, &bob, &cat], &[])
            .await;
        // Something to find in each cached input: a word, a mute, a changed setting.
        app.post("/users/me/alert_words")
            .as_user(&ann)
            .json_param("alert_words", &json!(["deploy"]))
            .send()
            .await
            .success();
        app.post(&format!("/users/me/muted_users/{}", bob.user_id.0))
            .as_user(&cat)
            .send()
            .await
            .success();
        app.patch("/settings")
            .as_user(&bob)
            .param("automatically_follow_topics_policy", "2")
            .send()
            .await
            .success();
        app.send_to_channel(&bob, "town", "t", "first").await;

        let sent = fewest_statements(&app, || async {
            app.send_to_channel(&bob, "town", "t", "deploy now").await;
        })
        .await;
        // Both (the caller comes from the cache): the channel with the sender's subscription,
        // the topic's first message with the sender's policy, the message, Cat's read range
        // (she muted Bob), Ann's row (her alert word). SQLite: `BEGIN` and `COMMIT` (a
        // transaction alone in its group commit needs no savepoint); the channel's recipients
        // come from the cache (`realm_cache::recipients`). PostgreSQL: `BEGIN`, the event log,
        // `COMMIT`; the send's locks are taken by the channel's statement, and the recipients
        // come with the topic's first message and the sender's policy
        // (`send_reads::recipients_with_topic`).
        assert_eq!(
            sent,
            if postgres { 8 } else { 7 },
            "statements per channel send (PostgreSQL: {postgres})"
        );
    }
}

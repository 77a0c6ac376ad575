//! Message benchmarks through the real application in-process, on a seeded SQLite database (or
//! PostgreSQL with `BENCH_DATABASE_URL`): `POST /messages` to a channel with 1,000 subscribers,
//! and pages of `GET /messages` on a large history.
//!
//! `cargo bench -p parley-tests --bench messages`; `BENCH_MESSAGES` sets the history size
//! (default 100,000; the target is measured at 1,000,000).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use parley_actions::rate_limit::{RateLimiter, RateLimits};
use parley_domain::message::flags;
use parley_domain::{ChannelId, UserId};
use parley_storage::messages::{self, NewMessage};
use parley_storage::testing::Backend;
use parley_tests::bench::{env_usize, summary};
use parley_tests::TestApp;
use serde_json::json;
use std::time::{Duration, Instant};

#[actix_web::main]
async fn main() {
    let history = env_usize("BENCH_MESSAGES", 100_000);
    let subscribers = env_usize("BENCH_SUBSCRIBERS", 1_000);
    let backend = match std::env::var("BENCH_DATABASE_URL") {
        Ok(url) => Backend::Postgres(url),
        Err(_) => Backend::Sqlite,
    };
    println!(
        "backend: {}, history: {history} messages, channel of {subscribers} subscribers",
        backend.name()
    );
    // A benchmark is one very busy user: lift the per-user request limit.
    let limits = RateLimits {
        api_by_user: RateLimiter::new(u32::MAX, Duration::from_secs(1)),
        ..RateLimits::default()
    };
    let mut app = TestApp::start_with_limits(backend, limits).await;
    app.check_shapes = false;

    // Users are inserted directly: hashing a thousand passwords would dominate the set-up.
    let started = Instant::now();
    let accounts = app.create_users_fast("bench", subscribers).await;
    let ids: Vec<UserId> = accounts.iter().map(|a| a.user_id).collect();
    let sender = accounts[0].clone();
    let mut members: Vec<i64> = ids.iter().map(|u| u.0).collect();
    members.push(app.owner.user_id.0);
    let channel = app
        .post("/channels/create")
        .as_user(&app.owner)
        .param("name", "bench")
        .json_param("subscribers", &json!(members))
        .send()
        .await
        .success()["id"]
        .as_i64()
        .unwrap();
    println!(
        "set-up: {} users in {:.1}s",
        ids.len(),
        started.elapsed().as_secs_f64()
    );

    // History: messages from the sender, received by 20 of the users, in big transactions.
    let started = Instant::now();
    let readers: Vec<UserId> = ids.iter().take(20).copied().collect();
    let mut done = 0;
    while done < history {
        let batch = (history - done).min(10_000);
        let readers = readers.clone();
        let sender_id = ids[0];
        app.ctx
            .db
            .transaction(move |conn| {
                for i in 0..batch {
                    let new = NewMessage {
                        sender_id,
                        channel_id: Some(ChannelId(channel)),
                        topic: format!("topic {}", (done + i) % 500),
                        dm_key: None,
                        dm_group_id: None,
                        recipient_user_id: None,
                        content: format!("history message {} about things", done + i),
                        rendered_content: format!(
                            "<p>history message {} about things</p>",
                            done + i
                        ),
                        date_sent: 1_700_000_000,
                        has_link: false,
                        has_image: false,
                        has_attachment: false,
                        client: "bench".into(),
                    };
                    let rows: Vec<(UserId, i64)> =
                        readers.iter().map(|u| (*u, flags::READ)).collect();
                    messages::insert(conn, &new, &rows)?;
                }
                Ok::<_, parley_storage::StorageError>(())
            })
            .await
            .unwrap();
        done += batch;
    }
    println!(
        "seeded {history} messages in {:.1}s",
        started.elapsed().as_secs_f64()
    );

    let rounds = env_usize("BENCH_ROUNDS", 200);
    let mut send = Vec::new();
    for i in 0..rounds {
        let t = Instant::now();
        app.post("/messages")
            .as_user(&sender)
            .param("type", "stream")
            .param("to", "bench")
            .param("topic", "live")
            .param(
                "content",
                format!("live message {i} with **bold** and :smile:"),
            )
            .send()
            .await
            .success();
        send.push(t.elapsed());
    }
    summary(
        &format!("POST /messages to {} subscribers", members.len()),
        send,
    );

    for (label, narrow) in [
        ("GET /messages newest 100 (own history)", json!([])),
        (
            "GET /messages newest 100 in channel",
            json!([["channel", "bench"]]),
        ),
        (
            "GET /messages newest 100 in a topic",
            json!([["channel", "bench"], ["topic", "topic 7"]]),
        ),
        (
            "GET /messages search",
            json!([["channel", "bench"], ["search", "things"]]),
        ),
    ] {
        let mut samples = Vec::new();
        for _ in 0..rounds.min(100) {
            let t = Instant::now();
            app.get("/messages")
                .as_user(&sender)
                .param("anchor", "newest")
                .param("num_before", 100)
                .json_param("narrow", &narrow)
                .send()
                .await
                .success();
            samples.push(t.elapsed());
        }
        summary(label, samples);
    }
}

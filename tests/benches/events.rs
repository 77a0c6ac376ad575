//! Event-queue benchmarks through the real application in-process:
//!
//! 1. `POST /messages` to a channel of 1,000 subscribers who each have an event queue: delivery
//!    to every queue happens before the response, so the request's latency bounds the time for
//!    a message to reach all queues (target: p99 under 20 ms).
//! 2. Memory of idle queues (target: 50,000 under 500 MB) and of waiting long-polls, read from
//!    the process's resident set size.
//!
//! `cargo bench -p parley-tests --bench events`; `BENCH_SUBSCRIBERS`, `BENCH_QUEUES` and
//! `BENCH_POLLS` change the sizes; `BENCH_DATABASE_URL` runs on PostgreSQL.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use parley_actions::rate_limit::{RateLimiter, RateLimits};
use parley_domain::UserId;
use parley_events::{EngineConfig, QueueOptions};
use parley_storage::testing::Backend;
use parley_tests::bench::{env_usize, rss_mib, summary};
use parley_tests::{Account, TestApp};
use serde_json::json;
use std::time::{Duration, Instant};

#[actix_web::main]
async fn main() {
    let subscribers = env_usize("BENCH_SUBSCRIBERS", 1_000);
    let idle_queues = env_usize("BENCH_QUEUES", 50_000);
    let polls = env_usize("BENCH_POLLS", 10_000);
    let backend = match std::env::var("BENCH_DATABASE_URL") {
        Ok(url) => Backend::Postgres(url),
        Err(_) => Backend::Sqlite,
    };
    println!("backend: {}", backend.name());
    let limits = RateLimits {
        api_by_user: RateLimiter::new(u32::MAX, Duration::from_secs(1)),
        ..RateLimits::default()
    };
    let mut app = TestApp::start_configured(backend, limits, EngineConfig::default()).await;
    app.check_shapes = false;
    let sender = app.owner.clone();

    // A channel of `subscribers` people, each with an event queue.
    let started = Instant::now();
    let members: Vec<Account> = app.create_users_fast("u", subscribers).await;
    let ids: Vec<i64> = members.iter().map(|m| m.user_id.0).collect();
    app.post("/channels/create")
        .as_user(&sender)
        .param("name", "big")
        .json_param("subscribers", &json!(ids))
        .send()
        .await
        .success();
    println!(
        "set-up: {subscribers} users in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let engine = app.ctx.events.engine().clone();
    let mut queues = Vec::new();
    for member in &members {
        let (queue, _) = engine.register(QueueOptions::new(member.user_id));
        queues.push((member.user_id, queue));
    }

    // Idle queues.
    let before = rss_mib();
    let begun = Instant::now();
    let mut extra: Vec<(UserId, String)> = Vec::new();
    for i in 0..idle_queues {
        let user = UserId(ids[i % ids.len()]);
        extra.push((user, engine.register(QueueOptions::new(user)).0));
    }
    let after = rss_mib();
    println!(
        "{idle_queues} idle queues: +{:.1} MiB RSS ({:.0} bytes each), registered in {:.2}s; {} queues in all",
        after - before,
        (after - before) * 1024.0 * 1024.0 / idle_queues as f64,
        begun.elapsed().as_secs_f64(),
        engine.queue_count()
    );

    // Waiting long-polls: each is a parked future, holding no thread and no connection.
    let before = rss_mib();
    let mut waiting = Vec::new();
    let pollers: Vec<(UserId, String)> = (0..polls)
        .map(|i| {
            let user = UserId(ids[i % ids.len()]);
            (user, engine.register(QueueOptions::new(user)).0)
        })
        .collect();
    let registered = rss_mib();
    extra.extend(pollers.iter().cloned());
    for (user, queue) in pollers {
        let engine = engine.clone();
        waiting.push(tokio::spawn(async move {
            engine.get_events(user, &queue, None, false).await
        }));
    }
    while engine.waiting_count() < polls {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let parked = rss_mib();
    println!(
        "{polls} waiting long-polls: +{:.1} MiB RSS for their queues, +{:.1} MiB for the waits ({:.0} bytes each); {} waiting",
        registered - before,
        parked - registered,
        (parked - registered) * 1024.0 * 1024.0 / polls as f64,
        engine.waiting_count()
    );
    // Release the waits (they answer empty) and remove those queues before the fan-out test.
    engine.close();
    for task in waiting {
        task.await.unwrap().unwrap();
    }
    for (user, queue) in &extra {
        engine.delete_queue(*user, queue).unwrap();
    }
    assert_eq!(engine.queue_count(), subscribers);
    let mut samples = Vec::new();
    let mut received = 0;
    for n in 0..200 {
        let begun = Instant::now();
        app.post("/messages")
            .as_user(&sender)
            .param("type", "stream")
            .param("to", "big")
            .param("topic", format!("t{}", n % 10))
            .param("content", "hello everyone")
            .send()
            .await
            .success();
        samples.push(begun.elapsed());
        if n % 50 == 49 {
            // Clients acknowledge, as polling clients do, so queues do not grow without bound.
            for (user, queue) in &queues {
                let events = engine.get_events(*user, queue, None, true).await.unwrap();
                received += events.iter().filter(|e| e["type"] == "message").count();
                if let Some(last) = events.last().and_then(|e| e["id"].as_i64()) {
                    engine
                        .get_events(*user, queue, Some(last), true)
                        .await
                        .unwrap();
                }
            }
        }
    }
    assert_eq!(
        received,
        200 * subscribers,
        "every queue received every message"
    );
    summary(
        &format!("POST /messages to {subscribers} subscribers with a queue each (delivered before the response)"),
        samples,
    );

    println!("process RSS at the end: {:.1} MiB", rss_mib());
}

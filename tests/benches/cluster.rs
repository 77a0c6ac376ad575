//! Several server processes on one PostgreSQL database (`docs/scaling.md`), through the real
//! application in-process: each node is its own context, event hub and queues, following the
//! event log and forwarding long-polls over HTTP on a local port, as separate processes do.
//!
//! 1. send→event latency in a channel of `BENCH_SUBSCRIBERS` (1,000) members: a long-poll waits
//!    on a queue; the time from the start of `POST /messages` to the poll's answer, with the
//!    queue on the sending node and on another.
//! 2. sends per second with one node and with three (`BENCH_WRITERS` concurrent senders spread
//!    over the nodes, `BENCH_SENDS` messages each). The nodes share this process's CPU, so
//!    three nodes here measure the event log's cost and contention, not added capacity.
//!
//! `BENCH_DATABASE_URL=postgres://... cargo bench -p parley-tests --bench cluster`

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use parley_storage::testing::Backend;
use parley_tests::bench::{env_usize, summary};
use parley_tests::{Account, TestApp};
use serde_json::json;
use std::time::{Duration, Instant};

async fn latency(
    sender: &TestApp,
    reader: &TestApp,
    who: &Account,
    rounds: usize,
) -> Vec<Duration> {
    let queue = reader
        .register(who, &[("event_types", json!(["message"]))])
        .await["queue_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut last = -1;
    let mut samples = Vec::new();
    for i in 0..rounds {
        let poll = async {
            let events = reader
                .get("/events")
                .as_user(who)
                .param("queue_id", &queue)
                .param("last_event_id", last)
                .send()
                .await
                .success();
            (Instant::now(), events)
        };
        let send = async {
            // Let the poll reach its wait first.
            tokio::time::sleep(Duration::from_millis(5)).await;
            let started = Instant::now();
            sender
                .send_to_channel(who, "bench", "latency", &format!("m{i}"))
                .await;
            started
        };
        let ((answered, events), started) = tokio::join!(poll, send);
        samples.push(answered.saturating_duration_since(started));
        last = events["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["id"].as_i64())
            .max()
            .unwrap_or(last);
    }
    samples
}

async fn throughput(nodes: &[TestApp], writers: &[Account], sends: usize) -> f64 {
    let started = Instant::now();
    let work = writers.iter().enumerate().map(|(w, who)| {
        let node = &nodes[w % nodes.len()];
        async move {
            for i in 0..sends {
                node.send_to_channel(who, "bench", "storm", &format!("{w}-{i}"))
                    .await;
            }
        }
    });
    futures_util::future::join_all(work).await;
    (writers.len() * sends) as f64 / started.elapsed().as_secs_f64()
}

#[actix_web::main]
async fn main() {
    let Ok(url) = std::env::var("BENCH_DATABASE_URL") else {
        eprintln!("set BENCH_DATABASE_URL=postgres://... (the cluster needs PostgreSQL)");
        return;
    };
    let rounds = env_usize("BENCH_ROUNDS", 200);
    let writers = env_usize("BENCH_WRITERS", 8);
    let sends = env_usize("BENCH_SENDS", 50);
    let subscribers = env_usize("BENCH_SUBSCRIBERS", 1_000);
    let mut nodes = TestApp::start_cluster(Backend::Postgres(url), 3).await;
    for node in &mut nodes {
        node.check_shapes = false;
    }
    let first = &nodes[0];
    let mut people = Vec::new();
    for i in 0..writers {
        people.push(
            first
                .create_user(
                    &format!("w{i}@parley.test"),
                    &format!("W {i}"),
                    parley_domain::Role::Member,
                )
                .await,
        );
    }
    let crowd = first
        .create_users_fast("crowd", subscribers.saturating_sub(writers))
        .await;
    for node in &nodes[1..] {
        node.ctx.events.realm_cache().invalidate();
    }
    let refs: Vec<&Account> = people.iter().chain(&crowd).collect();
    first
        .create_channel(&first.owner, "bench", &refs, &[])
        .await;
    println!("channel members: {}", refs.len());
    let who = &people[0];
    summary(
        "send→event, queue on the sending node",
        latency(&nodes[0], &nodes[0], who, rounds).await,
    );
    summary(
        "send→event, queue on another node",
        latency(&nodes[0], &nodes[1], who, rounds).await,
    );
    let one = throughput(&nodes[..1], &people, sends).await;
    println!("sends/s, {writers} writers on one node: {one:.0}");
    let three = throughput(&nodes, &people, sends).await;
    println!("sends/s, {writers} writers over three nodes: {three:.0}");
}

//! Database round trips of the common requests, with the organization cache
//! (`parley_actions::realm_cache`) on and off: every statement on the app's database is counted
//! (diesel's instrumentation, `parley_tests::statements`), around `POST /messages` to a channel, a direct
//! message, `POST /messages/render`, a reaction and a `GET /messages` page, each repeated.
//!
//! `cargo bench -p parley-tests --bench round_trips` (SQLite; PostgreSQL with
//! `BENCH_DATABASE_URL`). `BENCH_GROUPS` adds user groups of 20 members each, to show what the
//! policy load costs as the organization grows (default 20), `BENCH_REPEAT` (default 50).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use parley_domain::Role;
use parley_storage::testing::Backend;
use parley_tests::bench::env_usize;
use parley_tests::statements::{count_statements, statements};
use parley_tests::{lifted_api_limit, Account, TestApp};
use serde_json::json;
use std::time::Instant;

/// Statements (on `app`'s database, `parley_tests::statements`) and wall time per call of `f`,
/// over `repeat` calls.
async fn measure<F, Fut>(app: &TestApp, repeat: usize, mut f: F) -> (f64, f64)
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    f(0).await;
    let before = statements(app);
    let started = Instant::now();
    for i in 0..repeat {
        f(i + 1).await;
    }
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    let counted = statements(app) - before;
    (counted as f64 / repeat as f64, elapsed / repeat as f64)
}

#[actix_web::main]
async fn main() {
    count_statements();
    let repeat = env_usize("BENCH_REPEAT", 50);
    let group_count = env_usize("BENCH_GROUPS", 20);
    let backend = match std::env::var("BENCH_DATABASE_URL") {
        Ok(url) => Backend::Postgres(url),
        Err(_) => Backend::Sqlite,
    };
    println!(
        "backend: {}, {group_count} user groups, {repeat} calls each",
        backend.name()
    );
    let mut app = TestApp::start_with_limits(backend, lifted_api_limit()).await;
    app.check_shapes = false;
    let people = app.create_users_fast("rt", 200).await;
    let ann: Account = app
        .create_user("ann@parley.test", "Ann", Role::Member)
        .await;
    let mut members: Vec<&Account> = people.iter().take(50).collect();
    members.push(&ann);
    app.create_channel(&app.owner, "town", &members, &[]).await;
    for g in 0..group_count {
        let ids: Vec<i64> = people
            .iter()
            .skip(g * 7 % 180)
            .take(20)
            .map(|a| a.user_id.0)
            .collect();
        app.post("/user_groups/create")
            .as_user(&app.owner)
            .param("name", format!("group{g}"))
            .param("description", "d")
            .json_param("members", &json!(ids))
            .send()
            .await
            .success();
    }
    app.post("/realm/filters")
        .as_user(&app.owner)
        .param("pattern", "#(?P<id>[0-9]+)")
        .param("url_template", "https://example.com/{id}")
        .send()
        .await
        .success();
    let target = app.send_to_channel(&ann, "town", "t", "target").await;

    let cache = app.ctx.events.realm_cache().clone();
    println!(
        "| request | statements, cache off | statements, cache on | ms, cache off | ms, cache on |"
    );
    println!("|---|---|---|---|---|");
    let app = &app;
    let ann = &ann;
    let peer = &people[0];
    macro_rules! row {
        ($name:expr, $call:expr) => {{
            cache.set_enabled(false);
            let (off, off_ms) = measure(app, repeat, $call).await;
            cache.set_enabled(true);
            let (on, on_ms) = measure(app, repeat, $call).await;
            println!(
                "| {} | {off:.1} | {on:.1} | {off_ms:.2} | {on_ms:.2} |",
                $name
            );
        }};
    }
    row!(
        "`POST /messages` to a channel of 51 (linkifier in the text)",
        |i| async move {
            app.send_to_channel(ann, "town", "t", &format!("fix #{i} :smile:"))
                .await;
        }
    );
    row!("`POST /messages` direct", |i| async move {
        app.post("/messages")
            .as_user(ann)
            .param("type", "direct")
            .param("to", json!([peer.user_id.0]).to_string())
            .param("content", format!("hi {i}"))
            .send()
            .await
            .success();
    });
    row!("`POST /messages/render`", |i| async move {
        app.post("/messages/render")
            .as_user(ann)
            .param("content", format!("fix #{i}"))
            .send()
            .await
            .success();
    });
    row!(
        "`POST`+`DELETE /messages/{id}/reactions`",
        |_i| async move {
            let path = format!("/messages/{target}/reactions");
            app.post(&path)
                .as_user(ann)
                .param("emoji_name", "smile")
                .send()
                .await
                .success();
            app.delete(&path)
                .as_user(ann)
                .param("emoji_name", "smile")
                .send()
                .await
                .success();
        }
    );
    row!("`GET /messages` (50, newest)", |_i| async move {
        app.get("/messages")
            .as_user(ann)
            .param("anchor", "newest")
            .param("num_before", 50)
            .param("num_after", 0)
            .send()
            .await
            .success();
    });
    let (hits, misses) = cache.counts();
    println!("cache: {hits} hits, {misses} misses");
}

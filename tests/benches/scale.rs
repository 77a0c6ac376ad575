//! The write path at scale (issue 15): a seeded organization of 1,000 users, 100 channels of
//! 10–1,001 members and 1,000,000 messages (about 8 million `user_messages` rows), then, in one
//! run, Parley beside the raw store doing the same kind of work:
//!
//! - the raw store's single-row insert rate at 1 and 8 clients (SQLite: this program inserting
//!   one row per transaction with the server's durability, WAL and `synchronous = FULL`;
//!   PostgreSQL: `pgbench` running a one-row `INSERT`);
//! - `POST /messages` at 1 and 8 concurrent senders to channels chosen at random (mean about 260
//!   recipients), as messages a second and as a share of the raw rate, in-process and over HTTP
//!   (the application served on a loopback port with the server's workers);
//! - a send to a 10-member channel beside one to the 1,001-member channel;
//! - send→event: the time from a send's start until each of 1,000 waiting long-polls returns;
//! - a full `POST /register` for the user with the largest history, checked for exact unread
//!   counts;
//! - a search page for a common word, and `GET /messages` pages;
//! - the process's resident memory before (once the seeding's freed memory is handed back),
//!   during and after the sends.
//!
//! The server runs in-process (the real application, routing and parameters included, without
//! sockets), on a database at `BENCH_DIR` (default `target/bench-scale`, kept for inspection) or on
//! the PostgreSQL server of `BENCH_DATABASE_URL` (database `parley_bench_scale`, re-created), with
//! the server's own pool settings (8 connections, `synchronous = FULL`).
//!
//! `just bench-scale` runs both backends. Sizes: `BENCH_USERS`, `BENCH_CHANNELS`,
//! `BENCH_MESSAGES`, `BENCH_SENDS` (messages per sender), `BENCH_SECONDS` (raw-store run).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use parley_domain::message::flags;
use parley_domain::UserId;
use parley_events::{EngineConfig, QueueOptions};
use parley_storage::testing::Backend;
use parley_storage::{DatabaseUrl, DbConn, PoolOptions};
use parley_tests::bench::{
    context_switches, env_usize, release_freed_memory, rss_mib, rss_mib_of, summary,
};
use parley_tests::{lifted_api_limit, Account, TestApp};
use serde_json::json;
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A small deterministic generator (xorshift), so every run seeds the same history.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "release",
    "deploy",
    "review",
    "design",
    "budget",
    "lunch",
    "server",
    "client",
    "test",
    "bug",
    "fix",
    "plan",
    "draft",
    "ticket",
    "issue",
    "merge",
    "branch",
    "build",
    "cache",
    "query",
    "index",
    "table",
    "schema",
    "latency",
    "memory",
    "disk",
    "network",
    "router",
    "screen",
    "mobile",
    "desktop",
    "browser",
    "search",
    "filter",
    "topic",
    "stream",
    "thread",
    "reply",
    "answer",
    "question",
    "customer",
    "support",
    "sales",
    "market",
    "report",
    "chart",
    "number",
    "figure",
    "coffee",
    "office",
    "remote",
    "travel",
    "holiday",
    "weekend",
    "monday",
    "friday",
    "morning",
    "evening",
    "tomorrow",
    "yesterday",
    "today",
    "soon",
    "later",
    "great",
    "thanks",
    "sorry",
    "please",
    "maybe",
    "agree",
    "think",
    "works",
    "broken",
    "ready",
    "done",
];

/// The word about one message in five contains: the "common word" of the search figure.
const COMMON: &str = "meeting";

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct UserCount {
    #[diesel(sql_type = BigInt)]
    user_id: i64,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Definition {
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    sql: String,
}

fn count(conn: &mut DbConn, sql: &str) -> i64 {
    diesel::sql_query(sql).get_result::<Count>(conn).unwrap().n
}

/// The secondary indexes of `user_messages` and the full-text index of `messages` (on SQLite
/// its triggers): dropped while the history is loaded and rebuilt afterwards, which is several
/// times faster than maintaining them row by row.
fn secondary_structures(conn: &mut DbConn) -> Vec<Definition> {
    let sql = match conn {
        DbConn::Sqlite(_) => {
            "SELECT name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') \
             AND tbl_name IN ('messages', 'user_messages') AND sql IS NOT NULL"
        }
        DbConn::Pg(_) => {
            "SELECT i.indexname AS name, i.indexdef AS sql FROM pg_indexes i \
             WHERE i.tablename IN ('messages', 'user_messages') AND i.indexname NOT IN \
             (SELECT conname FROM pg_constraint)"
        }
    };
    // The messages' own B-tree indexes stay: the recipients' rows are selected through them.
    diesel::sql_query(sql)
        .load::<Definition>(conn)
        .unwrap()
        .into_iter()
        .filter(|d| {
            let text = d.sql.to_ascii_lowercase();
            text.contains("user_messages")
                || text.contains("fts")
                || text.contains("tsvector")
                || text.contains("search_vector")
        })
        .collect()
}

/// A database of the backend, empty: SQLite files under `dir`, or a re-created PostgreSQL
/// database on the server of `base`.
fn fresh_database(base: Option<&str>, dir: &std::path::Path) -> (Backend, DatabaseUrl, String) {
    match base {
        None => {
            let _ = std::fs::remove_dir_all(dir);
            std::fs::create_dir_all(dir).unwrap();
            let path = dir.join("parley.db");
            (
                Backend::Sqlite,
                DatabaseUrl::Sqlite(path.clone()),
                format!("sqlite://{}", path.display()),
            )
        }
        Some(base) => {
            let name = std::env::var("BENCH_DATABASE_NAME")
                .unwrap_or_else(|_| "parley_bench_scale".into());
            let mut admin = diesel::PgConnection::establish(base).unwrap();
            // Two statements: one batch would be one transaction, which these cannot run in.
            admin
                .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .unwrap();
            admin
                .batch_execute(&format!("CREATE DATABASE {name}"))
                .unwrap();
            // The same server and parameters (`sslmode`, say), another database.
            let (path, query) = base.split_once('?').unwrap_or((base, ""));
            let (head, _) = path.rsplit_once('/').unwrap();
            let query = if query.is_empty() {
                String::new()
            } else {
                format!("?{query}")
            };
            let url = DatabaseUrl::parse(&format!("{head}/{name}{query}")).unwrap();
            // pgbench connects as Parley does (with the `sslmode` Parley chose).
            let DatabaseUrl::Postgres(text) = &url else {
                unreachable!()
            };
            (
                Backend::Postgres(base.to_owned()),
                url.clone(),
                text.clone(),
            )
        }
    }
}

/// The plan of the organization: channel sizes from 10 to 1,001 (cubic, mean about 260), each
/// channel a window of consecutive users, and how many history messages each channel gets
/// (small channels are busier).
struct Plan {
    members: Vec<Vec<usize>>,
    messages: Vec<usize>,
    dms: usize,
}

fn plan(users: usize, channels: usize, history: usize, heavy_rows: usize) -> Plan {
    let last = (channels - 1).max(1) as f64;
    let mut members: Vec<Vec<usize>> = (0..channels)
        .map(|i| {
            let size = 10 + (991.0 * (i as f64 / last).powi(3)).round() as usize;
            let size = size.min(users);
            (0..size).map(|k| (i * 131 + k) % users).collect()
        })
        .collect();
    // Half the history is direct messages, half channel messages weighted by 1/size².
    let channel_messages = history / 2;
    let weights: Vec<f64> = members
        .iter()
        .map(|m| 1.0 / (m.len() as f64).powf(2.1))
        .collect();
    let total: f64 = weights.iter().sum();
    let messages: Vec<usize> = weights
        .iter()
        .map(|w| (channel_messages as f64 * w / total).round() as usize)
        .collect();
    // User 0 is "the heavy user": also a member of the busiest channels until their history
    // reaches about `heavy_rows`.
    let mut busiest: Vec<usize> = (0..channels).collect();
    busiest.sort_by_key(|i| std::cmp::Reverse(messages[*i]));
    let mut rows: usize = (0..channels)
        .filter(|i| members[*i].contains(&0))
        .map(|i| messages[i])
        .sum();
    for i in busiest {
        if rows >= heavy_rows {
            break;
        }
        if !members[i].contains(&0) {
            members[i].push(0);
            rows += messages[i];
        }
    }
    let dms = history - messages.iter().sum::<usize>();
    Plan {
        members,
        messages,
        dms,
    }
}

fn content(rng: &mut Rng, n: usize) -> String {
    let words = 6 + rng.below(12);
    let mut text = format!("message {n}");
    for _ in 0..words {
        text.push(' ');
        text.push_str(WORDS[rng.below(WORDS.len())]);
    }
    if rng.below(5) == 0 {
        text.push(' ');
        text.push_str(COMMON);
    }
    text
}

/// Loads the history with multi-row inserts, then the recipients' rows with one
/// `INSERT ... SELECT` per user (in primary-key order), with the secondary indexes dropped.
fn seed_history(
    conn: &mut DbConn,
    plan: &Plan,
    channel_ids: &[i64],
    user_ids: &[i64],
    unread_per_user: usize,
) {
    if let DbConn::Sqlite(_) = conn {
        conn.batch_execute("PRAGMA synchronous = OFF").unwrap();
    }
    let structures = secondary_structures(conn);
    for s in &structures {
        let kind = if s.sql.to_ascii_uppercase().contains("CREATE TRIGGER") {
            "TRIGGER"
        } else {
            "INDEX"
        };
        conn.batch_execute(&format!("DROP {kind} {}", s.name))
            .unwrap();
    }
    // Messages in ID order, channels and direct messages interleaved at random.
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut left: Vec<usize> = plan.messages.clone();
    let mut dms_left = plan.dms;
    let total: usize = left.iter().sum::<usize>() + dms_left;
    let mut sql = String::new();
    let mut in_batch = 0;
    let users = user_ids.len();
    let head = "INSERT INTO messages (sender_id, channel_id, topic, topic_key, dm_key, \
                recipient_user_id, content, rendered_content, date_sent, client) VALUES ";
    let remaining = |left: &[usize], dms: usize| left.iter().sum::<usize>() + dms;
    for n in 0..total {
        let pick = rng.below(remaining(&left, dms_left).max(1));
        let text = content(&mut rng, n);
        let date = 1_700_000_000 + n as i64;
        if !sql.is_empty() {
            sql.push(',');
        } else {
            sql.push_str(head);
        }
        if pick < dms_left {
            dms_left -= 1;
            // Mostly between neighbours, and one in ten involving the heavy user.
            let a = if rng.below(10) == 0 {
                0
            } else {
                rng.below(users)
            };
            let b = (a + 1 + rng.below(20)) % users;
            let (x, y) = (user_ids[a].min(user_ids[b]), user_ids[a].max(user_ids[b]));
            sql.push_str(&format!(
                "({}, NULL, '', '', '{x},{y}', {}, '{text}', '<p>{text}</p>', {date}, 'bench')",
                user_ids[a], user_ids[b]
            ));
        } else {
            let mut p = pick - dms_left;
            let mut channel = 0;
            while p >= left[channel] {
                p -= left[channel];
                channel += 1;
            }
            left[channel] -= 1;
            let members = &plan.members[channel];
            let sender = user_ids[members[rng.below(members.len())]];
            let topic = format!("topic {}", rng.below(40));
            sql.push_str(&format!(
                "({sender}, {}, '{topic}', '{topic}', NULL, NULL, '{text}', '<p>{text}</p>', {date}, 'bench')",
                channel_ids[channel]
            ));
        }
        in_batch += 1;
        if in_batch == 500 || n + 1 == total {
            conn.batch_execute("BEGIN").unwrap();
            conn.batch_execute(&sql).unwrap();
            conn.batch_execute("COMMIT").unwrap();
            sql.clear();
            in_batch = 0;
        }
    }
    // Recipients: every subscriber of a channel message, both sides of a direct message.
    // Read, except each user's newest `unread_per_user`; a few mentions and stars.
    let max_id = count(conn, "SELECT COALESCE(MAX(id), 0) AS n FROM messages");
    let unread_from = max_id - unread_per_user as i64 * 4;
    conn.batch_execute("BEGIN").unwrap();
    for user in user_ids {
        let flags_sql = format!(
            "CASE WHEN m.id > {unread_from} AND m.id % 4 = 0 THEN 0 ELSE {read} END \
             + CASE WHEN (m.id + {user}) % 300 = 0 THEN {mentioned} ELSE 0 END \
             + CASE WHEN (m.id * 7 + {user}) % 1000 = 0 THEN {starred} ELSE 0 END",
            read = flags::READ,
            mentioned = flags::MENTIONED,
            starred = flags::STARRED,
        );
        conn.batch_execute(&format!(
            "INSERT INTO user_messages (user_id, message_id, flags) \
             SELECT {user}, id, flags FROM ( \
               SELECT m.id AS id, {flags_sql} AS flags FROM messages m \
                 JOIN subscriptions s ON s.channel_id = m.channel_id \
                 WHERE s.user_id = {user} AND s.active \
               UNION ALL \
               SELECT m.id AS id, {flags_sql} + {private} AS flags FROM messages m \
                 WHERE m.channel_id IS NULL AND (m.sender_id = {user} OR m.recipient_user_id = {user}) \
             ) AS mine ORDER BY id",
            private = flags::IS_PRIVATE,
        ))
        .unwrap();
    }
    conn.batch_execute("COMMIT").unwrap();
    for s in &structures {
        conn.batch_execute(&s.sql).unwrap();
    }
    match conn {
        DbConn::Sqlite(_) => conn
            .batch_execute(
                "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
                 PRAGMA synchronous = FULL; ANALYZE; PRAGMA wal_checkpoint(TRUNCATE);",
            )
            .unwrap(),
        DbConn::Pg(_) => conn.batch_execute("VACUUM ANALYZE").unwrap(),
    }
    for (i, channel) in channel_ids.iter().enumerate() {
        if plan.messages[i] > 0 {
            conn.batch_execute(&format!(
                "UPDATE channels SET first_message_id = \
                 (SELECT MIN(id) FROM messages WHERE channel_id = {channel}) WHERE id = {channel}"
            ))
            .unwrap();
        }
    }
}

/// The history is seeded as whole rows, as a database before issue 15's representation held
/// it; this rebuilds it as spans, read ranges and sparse rows exactly as migrations 000080 (from
/// its first `UPDATE` on, which derives them), 000081 and 000104 (a covered row's `read` bit)
/// do on an existing database. Without 000104 every star and mention of a reader stayed in the
/// index of unread rows, which each unread count and `is:unread` page then read.
fn to_spans(conn: &mut DbConn) {
    let (derive, prune, read_bit) = match conn {
        DbConn::Sqlite(_) => (
            include_str!("../../migrations/sqlite/2026-11-26-000080_subscription_spans/up.sql"),
            include_str!("../../migrations/sqlite/2026-11-26-000081_sparse_user_messages/up.sql"),
            include_str!("../../migrations/sqlite/2026-11-29-000104_covered_rows_read_bit/up.sql"),
        ),
        DbConn::Pg(_) => (
            include_str!("../../migrations/postgres/2026-11-26-000080_subscription_spans/up.sql"),
            include_str!("../../migrations/postgres/2026-11-26-000081_sparse_user_messages/up.sql"),
            include_str!(
                "../../migrations/postgres/2026-11-29-000104_covered_rows_read_bit/up.sql"
            ),
        ),
    };
    let from = derive
        .find("UPDATE messages SET stream_wildcard_mentioned")
        .unwrap();
    conn.batch_execute("DELETE FROM subscription_spans; DELETE FROM read_ranges;")
        .unwrap();
    conn.batch_execute(&derive[from..]).unwrap();
    conn.batch_execute(prune).unwrap();
    conn.batch_execute(read_bit).unwrap();
    match conn {
        DbConn::Sqlite(_) => conn.batch_execute("ANALYZE; PRAGMA wal_checkpoint(TRUNCATE);"),
        DbConn::Pg(_) => conn.batch_execute("VACUUM ANALYZE"),
    }
    .unwrap();
    if std::env::var("BENCH_SQLITE_STAT4").as_deref() == Ok("0")
        && matches!(conn, DbConn::Sqlite(_))
    {
        conn.batch_execute("DROP TABLE IF EXISTS sqlite_stat4")
            .unwrap();
    }
}

/// SQLite's raw rate: `clients` threads, each inserting one row per transaction into its own
/// connection of a separate file, WAL and `synchronous = FULL` as the server runs.
fn sqlite_raw(dir: &std::path::Path, clients: usize, seconds: u64) -> f64 {
    let path = dir.join(format!("raw-{clients}.db"));
    let _ = std::fs::remove_file(&path);
    let url = DatabaseUrl::Sqlite(path);
    {
        let mut conn = parley_storage::conn::establish(&url).unwrap();
        conn.batch_execute(
            "CREATE TABLE raw_insert (id INTEGER PRIMARY KEY, a BIGINT NOT NULL, b TEXT NOT NULL)",
        )
        .unwrap();
    }
    let until = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut conn = parley_storage::conn::establish(&url).unwrap();
                let mut done = 0u64;
                while Instant::now() < until {
                    match conn.batch_execute(&format!(
                        "BEGIN IMMEDIATE; INSERT INTO raw_insert (a, b) VALUES ({c}, 'a row of text'); COMMIT;"
                    )) {
                        Ok(()) => done += 1,
                        // A lock wait past the busy timeout: the disk stalled (after seeding a
                        // million messages, writing back the seeded file can hold an fsync for
                        // seconds). An application retries; so does the baseline, uncounted.
                        Err(diesel::result::Error::DatabaseError(_, info))
                            if info.message().contains("locked") =>
                        {
                            let _ = conn.batch_execute("ROLLBACK");
                        }
                        Err(other) => panic!("raw insert: {other}"),
                    }
                }
                done
            })
        })
        .collect();
    let total: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    total as f64 / started.elapsed().as_secs_f64()
}

/// PostgreSQL's raw rate: `pgbench` with a one-row `INSERT` per transaction.
fn pg_raw(url: &str, dir: &std::path::Path, clients: usize, seconds: u64) -> f64 {
    let mut conn = diesel::PgConnection::establish(url).unwrap();
    conn.batch_execute(
        "DROP TABLE IF EXISTS raw_insert;
         CREATE TABLE raw_insert (id BIGSERIAL PRIMARY KEY, a BIGINT NOT NULL, b TEXT NOT NULL)",
    )
    .unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let script = dir.join("raw_insert.sql");
    std::fs::write(
        &script,
        "INSERT INTO raw_insert (a, b) VALUES (1, 'a row of text');\n",
    )
    .unwrap();
    let output = std::process::Command::new("pgbench")
        .args([
            "-n",
            "-c",
            &clients.to_string(),
            "-j",
            "2",
            "-T",
            &seconds.to_string(),
            "-f",
        ])
        .arg(&script)
        .arg(url)
        .output()
        .expect("pgbench on PATH");
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "pgbench failed: {text} {}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

#[actix_web::main]
async fn main() {
    let users = env_usize("BENCH_USERS", 1_000);
    let channel_count = env_usize("BENCH_CHANNELS", 100);
    let history = env_usize("BENCH_MESSAGES", 1_000_000);
    let sends = env_usize("BENCH_SENDS", 100);
    let seconds = env_usize("BENCH_SECONDS", 10) as u64;
    let base = std::env::var("BENCH_DATABASE_URL").ok();
    let dir = std::path::PathBuf::from(
        std::env::var("BENCH_DIR").unwrap_or_else(|_| "target/bench-scale".into()),
    );
    let (backend, url, url_text) = fresh_database(base.as_deref(), &dir);
    println!(
        "backend: {}; {users} users, {channel_count} channels, {history} messages; group commit: SQLite {}, PostgreSQL {}; load average {}",
        backend.name(),
        if std::env::var("BENCH_GROUP_COMMIT").as_deref() == Ok("0") { "off" } else { "on" },
        if std::env::var("BENCH_POSTGRES_GROUP_COMMIT").as_deref() == Ok("1") { "on" } else { "off" },
        load_average()
    );
    let mut app = TestApp::start_on(
        None,
        url,
        backend.clone(),
        lifted_api_limit(),
        EngineConfig::default(),
        PoolOptions {
            sqlite_group_commit: std::env::var("BENCH_GROUP_COMMIT").as_deref() != Ok("0"),
            postgres_group_commit: std::env::var("BENCH_POSTGRES_GROUP_COMMIT").as_deref()
                == Ok("1"),
            ..PoolOptions::default()
        },
    )
    .await;
    app.check_shapes = false;

    // The organization: users straight into storage, channels through the API.
    let started = Instant::now();
    let mut accounts: Vec<Account> = app.create_users_fast("u", users - 1).await;
    accounts.insert(0, app.owner.clone());
    let user_ids: Vec<i64> = accounts.iter().map(|a| a.user_id.0).collect();
    let plan = plan(users, channel_count, history, 290_000);
    let mut channel_ids = Vec::new();
    for (i, members) in plan.members.iter().enumerate() {
        let ids: Vec<i64> = members.iter().map(|m| user_ids[*m]).collect();
        let id = app
            .post("/channels/create")
            .as_user(&app.owner)
            .param("name", format!("channel {i}"))
            .json_param("subscribers", &json!(ids))
            .send()
            .await
            .success()["id"]
            .as_i64()
            .unwrap();
        channel_ids.push(id);
    }
    println!(
        "organization: {} users, {} channels in {:.1}s",
        users,
        channel_ids.len(),
        started.elapsed().as_secs_f64()
    );

    // The history, straight into storage.
    let started = Instant::now();
    let unread_per_user = 500;
    {
        let plan = &plan;
        let channel_ids = channel_ids.clone();
        let user_ids = user_ids.clone();
        let db = app.ctx.db.clone();
        let plan_members = plan.members.clone();
        let plan_messages = plan.messages.clone();
        let dms = plan.dms;
        tokio::task::spawn_blocking(move || {
            let plan = Plan {
                members: plan_members,
                messages: plan_messages,
                dms,
            };
            let mut conn = db.conn().unwrap();
            seed_history(&mut conn, &plan, &channel_ids, &user_ids, unread_per_user);
        })
        .await
        .unwrap();
    }
    let mut conn = app.ctx.db.conn().unwrap();
    let rows = count(&mut conn, "SELECT COUNT(*) AS n FROM user_messages");
    let per_user = diesel::sql_query(
        "SELECT user_id, COUNT(*) AS n FROM user_messages GROUP BY user_id ORDER BY n DESC LIMIT 1",
    )
    .get_result::<UserCount>(&mut **conn)
    .unwrap();
    println!(
        "seeded {} messages, {rows} user_messages rows in {:.1}s; largest history: user {} with {} rows",
        count(&mut conn, "SELECT COUNT(*) AS n FROM messages"),
        started.elapsed().as_secs_f64(),
        per_user.user_id,
        per_user.n
    );
    let started_conversion = Instant::now();
    to_spans(&mut conn);
    println!(
        "rebuilt as spans, read ranges and sparse rows (migrations 000080, 000081, 000104) in {:.1}s: \
         {} spans, {} read ranges, {} user_messages rows left",
        started_conversion.elapsed().as_secs_f64(),
        count(&mut conn, "SELECT COUNT(*) AS n FROM subscription_spans"),
        count(&mut conn, "SELECT COUNT(*) AS n FROM read_ranges"),
        count(&mut conn, "SELECT COUNT(*) AS n FROM user_messages"),
    );
    drop(conn);
    let heavy = accounts
        .iter()
        .find(|a| a.user_id.0 == per_user.user_id)
        .unwrap()
        .clone();
    follow_topics(&app, &heavy).await;

    if std::env::var("BENCH_READS_ONLY").as_deref() == Ok("1") {
        register_heavy(&app, &heavy, per_user.n).await;
        read_pages(&app, &heavy, &accounts).await;
        mark_read(&app, &heavy).await;
        return;
    }

    // The raw store.
    let raw = |clients: usize| match &backend {
        Backend::Sqlite => sqlite_raw(&dir, clients, seconds),
        Backend::Postgres(_) => pg_raw(&url_text, &dir, clients, seconds),
    };
    let raw1 = raw(1);
    let raw8 = raw(8);
    println!(
        "raw store, one-row insert transactions: {raw1:.0}/s at 1 client, {raw8:.0}/s at 8 clients (load average {})",
        load_average()
    );

    // Sends at 1 and 8 concurrent senders, each to a channel chosen at random (a sender is a
    // member of it). RSS from here on is the server's, once the seeding's freed memory is back.
    let rss_seeded = rss_mib();
    release_freed_memory();
    let rss_start = rss_mib();
    println!("RSS: {rss_seeded:.0} MiB after the seeding, {rss_start:.0} MiB once its freed memory is released");
    let peak = Rc::new(Cell::new(rss_start));
    let sampling = Rc::new(Cell::new(true));
    {
        let (peak, sampling) = (peak.clone(), sampling.clone());
        actix_web::rt::spawn(async move {
            while sampling.get() {
                peak.set(peak.get().max(rss_mib()));
                actix_web::rt::time::sleep(Duration::from_millis(20)).await;
            }
        });
    }
    let app = Rc::new(app);
    for senders in [1usize, 8] {
        let started = Instant::now();
        let switches_before = context_switches();
        let recipients = Rc::new(Cell::new(0usize));
        let tasks: Vec<_> = (0..senders)
            .map(|s| {
                let app = app.clone();
                let plan_members = plan.members.clone();
                let accounts = accounts.clone();
                let recipients = recipients.clone();
                async move {
                    let mut rng = Rng(0xabc0 + s as u64 * 7919 + senders as u64);
                    let mut samples = Vec::new();
                    for n in 0..sends {
                        let channel = rng.below(plan_members.len());
                        let members = &plan_members[channel];
                        recipients.set(recipients.get() + members.len());
                        let who = &accounts[members[rng.below(members.len())]];
                        let t = Instant::now();
                        app.post("/messages")
                            .as_user(who)
                            .param("type", "stream")
                            .param("to", format!("channel {channel}"))
                            .param("topic", format!("live {}", n % 7))
                            .param(
                                "content",
                                format!("live message {n} about the **release** {COMMON}"),
                            )
                            .send()
                            .await
                            .success();
                        samples.push(t.elapsed());
                    }
                    samples
                }
            })
            .collect();
        let samples: Vec<Duration> = futures_util::future::join_all(tasks)
            .await
            .into_iter()
            .flatten()
            .collect();
        let elapsed = started.elapsed().as_secs_f64();
        let rate = samples.len() as f64 / elapsed;
        let base = if senders == 1 { raw1 } else { raw8 };
        println!(
            "sends at {senders} senders: {rate:.0} msg/s ({:.1}% of the raw rate), mean {:.0} recipients",
            100.0 * rate / base,
            recipients.get() as f64 / samples.len() as f64
        );
        let switches = context_switches();
        println!(
            "  context switches per send (every thread of the process): {:.1} voluntary, {:.1} involuntary",
            switches.0.saturating_sub(switches_before.0) as f64 / samples.len() as f64,
            switches.1.saturating_sub(switches_before.1) as f64 / samples.len() as f64
        );
        summary(
            &format!("  POST /messages latency at {senders} senders"),
            samples,
        );
    }
    // The same sends over HTTP: the server's own listener and workers (one per core), the
    // load generated by this thread through keep-alive connections, as clients send.
    let url = serve_over_http(&app);
    for senders in [1usize, 8] {
        let rate = sends_over_http(&url, &plan.members, &accounts, senders, sends).await;
        let base = if senders == 1 { raw1 } else { raw8 };
        println!(
            "sends over HTTP at {senders} senders: {rate:.0} msg/s ({:.1}% of the raw rate)",
            100.0 * rate / base
        );
    }
    if let Ok(binary) = std::env::var("BENCH_SERVER") {
        let mut conn = app.ctx.db.conn().unwrap();
        let max_id = count(&mut conn, "SELECT COALESCE(MAX(id), 0) AS n FROM messages");
        drop(conn);
        let rate = separate_server(
            &binary,
            &url_text,
            &dir,
            (&plan.members, &accounts),
            (&heavy, max_id),
            sends,
        )
        .await;
        println!(
            "sends over HTTP at 8 senders to the parley binary: {rate:.0} msg/s ({:.1}% of the raw rate)",
            100.0 * rate / raw8
        );
    }
    sampling.set(false);
    let rss_peak = peak.get();
    actix_web::rt::time::sleep(Duration::from_secs(2)).await;
    println!(
        "RSS: {rss_start:.0} MiB before the sends, peak {rss_peak:.0} MiB, {:.0} MiB 2 s after",
        rss_mib()
    );

    // A 10-member channel beside the 1,001-member one.
    for channel in [0, channel_count - 1] {
        let members = &plan.members[channel];
        let who = &accounts[members[0]];
        let mut samples = Vec::new();
        for n in 0..50 {
            let t = Instant::now();
            app.post("/messages")
                .as_user(who)
                .param("type", "stream")
                .param("to", format!("channel {channel}"))
                .param("topic", "size")
                .param("content", format!("size test {n}"))
                .send()
                .await
                .success();
            samples.push(t.elapsed());
        }
        summary(
            &format!("POST /messages to a channel of {} members", members.len()),
            samples,
        );
    }

    // send→event to 1,000 waiting long-polls (members of the largest channel).
    let engine = app.ctx.events.engine().clone();
    let big = channel_count - 1;
    let pollers: Vec<(UserId, String)> = plan.members[big]
        .iter()
        .take(1000)
        .map(|m| {
            let user = UserId(user_ids[*m]);
            (user, engine.register(QueueOptions::new(user)).0)
        })
        .collect();
    let mut last: Vec<Option<i64>> = vec![None; pollers.len()];
    let mut delivery = Vec::new();
    let sender = accounts[plan.members[big][0]].clone();
    for n in 0..20 {
        let waits: Vec<_> = pollers
            .iter()
            .zip(&last)
            .map(|((user, queue), last)| {
                let engine = engine.clone();
                let (user, queue, last) = (*user, queue.clone(), *last);
                actix_web::rt::spawn(async move {
                    let events = engine.get_events(user, &queue, last, false).await.unwrap();
                    (Instant::now(), events.last().and_then(|e| e["id"].as_i64()))
                })
            })
            .collect();
        while engine.waiting_count() < pollers.len() {
            actix_web::rt::time::sleep(Duration::from_millis(2)).await;
        }
        let begun = Instant::now();
        app.post("/messages")
            .as_user(&sender)
            .param("type", "stream")
            .param("to", format!("channel {big}"))
            .param("topic", "fan-out")
            .param("content", format!("to everyone {n}"))
            .send()
            .await
            .success();
        for (i, wait) in waits.into_iter().enumerate() {
            let (at, id) = wait.await.unwrap();
            delivery.push(at.duration_since(begun));
            last[i] = id.or(last[i]);
        }
    }
    summary(
        &format!("send→event to {} waiting long-polls", pollers.len()),
        delivery,
    );
    for (user, queue) in &pollers {
        engine.delete_queue(*user, queue).unwrap();
    }

    register_heavy(&app, &heavy, per_user.n).await;
    read_pages(&app, &heavy, &accounts).await;
    mark_read(&app, &heavy).await;
    println!("load average at the end: {}", load_average());
}

/// Serves the benchmark's application on a loopback port, as `parley serve` does
/// (`parley_api::h1`, a worker per core); answers the API's base URL.
fn serve_over_http(app: &TestApp) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = parley_api::h1::serve(
        app.ctx.clone(),
        parley_api::ops::AppOptions::default(),
        listener,
        Duration::from_secs(1),
    )
    .unwrap();
    actix_web::rt::spawn(server);
    format!("http://{addr}/api/v1")
}

/// The `parley` binary at `binary` serving the seeded database in its own process, sent to over
/// HTTP at 8 senders as [`sends_over_http`]: the server's resident memory alone, without this
/// program's plan, accounts, waiting queues and seeding (its log in `dir/server.log`); then a
/// full register and the pages of [`page_cases`] from it. Answers messages a second.
async fn separate_server(
    binary: &str,
    database_url: &str,
    dir: &std::path::Path,
    (members, accounts): (&[Vec<usize>], &[Account]),
    (heavy, max_id): (&Account, i64),
    sends: usize,
) -> f64 {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = std::fs::File::create(dir.join("server.log")).unwrap();
    let mut child = std::process::Command::new(binary)
        .arg("serve")
        .arg("--bind")
        .arg(format!("127.0.0.1:{port}"))
        .arg("--data-dir")
        .arg(dir.join("server"))
        .arg("--database-url")
        .arg(database_url)
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !client
        .get(format!("{base}/health"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        assert!(Instant::now() < deadline, "the parley binary did not start");
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    let pid = child.id().to_string();
    let start = rss_mib_of(&pid);
    let peak = Rc::new(Cell::new(start));
    let sampling = Rc::new(Cell::new(true));
    {
        let (peak, sampling, pid) = (peak.clone(), sampling.clone(), pid.clone());
        actix_web::rt::spawn(async move {
            while sampling.get() {
                peak.set(peak.get().max(rss_mib_of(&pid)));
                actix_web::rt::time::sleep(Duration::from_millis(20)).await;
            }
        });
    }
    let rate = sends_over_http(&format!("{base}/api/v1"), members, accounts, 8, sends).await;
    sampling.set(false);
    actix_web::rt::time::sleep(Duration::from_secs(2)).await;
    let after = rss_mib_of(&pid);
    // The server gives memory back after 10 s without a request (`memory::IDLE_AFTER`), at its
    // next look: within 20 s.
    actix_web::rt::time::sleep(Duration::from_secs(23)).await;
    println!(
        "RSS of the parley binary (its own process): {start:.0} MiB once started, peak {:.0} MiB under the sends, {after:.0} MiB 2 s after, {:.0} MiB 25 s after (idle)",
        peak.get(),
        rss_mib_of(&pid)
    );
    register_over_http(&client, &base, heavy).await;
    pages_over_http(&client, &base, max_id, heavy, accounts).await;
    child.kill().unwrap();
    child.wait().unwrap();
    rate
}

/// A full `POST /register` for the user with the largest history from the `parley` binary at
/// `base`, timed to the last byte of its body (median of 10; the in-process figure also counts
/// the test client's parsing of the response).
async fn register_over_http(client: &reqwest::Client, base: &str, heavy: &Account) {
    let mut samples = Vec::new();
    let mut size = 0;
    for _ in 0..10 {
        let t = Instant::now();
        let response = client
            .post(format!("{base}/api/v1/register"))
            .basic_auth(&heavy.email, Some(&heavy.api_key))
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "register failed");
        size = response.bytes().await.unwrap().len();
        samples.push(t.elapsed());
    }
    summary(
        &format!(
            "POST /register (full) from the parley binary for the user with the largest history ({} KB)",
            size / 1024
        ),
        samples,
    );
}

/// `POST /messages` over HTTP from `senders` concurrent clients, `sends` each, to channels
/// chosen at random as in the in-process run; answers messages a second.
async fn sends_over_http(
    url: &str,
    members: &[Vec<usize>],
    accounts: &[Account],
    senders: usize,
    sends: usize,
) -> f64 {
    let client = reqwest::Client::new();
    let started = Instant::now();
    let tasks: Vec<_> = (0..senders)
        .map(|s| {
            let (client, url) = (client.clone(), format!("{url}/messages"));
            async move {
                let mut rng = Rng(0x5eed + s as u64 * 7919 + senders as u64);
                for n in 0..sends {
                    let channel = rng.below(members.len());
                    let who = &accounts[members[channel][rng.below(members[channel].len())]];
                    let response = client
                        .post(&url)
                        .basic_auth(&who.email, Some(&who.api_key))
                        .form(&[
                            ("type", "stream".to_owned()),
                            ("to", format!("channel {channel}")),
                            ("topic", format!("http {}", n % 7)),
                            (
                                "content",
                                format!("http message {n} about the **release** {COMMON}"),
                            ),
                        ])
                        .send()
                        .await
                        .unwrap();
                    assert!(
                        response.status().is_success(),
                        "send failed: {}",
                        response.status()
                    );
                    response.bytes().await.unwrap();
                }
            }
        })
        .collect();
    futures_util::future::join_all(tasks).await;
    (senders * sends) as f64 / started.elapsed().as_secs_f64()
}

/// A full `POST /register` for the user with the largest history (median of 10), its unread
/// count checked.
async fn register_heavy(app: &TestApp, heavy: &Account, rows: i64) {
    // The expected count from the storage query that lists unread IDs (the flag narrows'
    // condition), not from register's capped summary.
    let engine = app.ctx.events.engine().clone();
    let mut conn = app.ctx.db.conn().unwrap();
    let unread = parley_storage::messages::unread_ids(&mut conn, heavy.user_id)
        .unwrap()
        .len() as i64;
    drop(conn);
    let mut samples = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let snapshot = app.register(heavy, &[]).await;
        samples.push(t.elapsed());
        assert_eq!(
            snapshot["unread_msgs"]["count"].as_i64(),
            Some(unread),
            "register's unread count is exact"
        );
        let queue = snapshot["queue_id"].as_str().unwrap();
        engine.delete_queue(heavy.user_id, queue).unwrap();
    }
    summary(
        &format!(
            "POST /register (full) for the user with {} rows, {unread} unread",
            rows
        ),
        samples,
    );
    // Each part alone (`fetch_event_types`), with the size of its JSON: where the time goes.
    let parts: [&[&str]; 7] = [
        &["realm"],
        &["realm_user"],
        &["subscription"],
        &["stream"],
        &["message", "update_message_flags"],
        &["presence"],
        &["user_group"],
    ];
    for part in parts {
        let mut samples = Vec::new();
        let mut bytes = 0;
        for _ in 0..5 {
            let t = Instant::now();
            let snapshot = app
                .register(heavy, &[("fetch_event_types", json!(part))])
                .await;
            samples.push(t.elapsed());
            bytes = snapshot.to_string().len();
            let queue = snapshot["queue_id"].as_str().unwrap();
            engine.delete_queue(heavy.user_id, queue).unwrap();
        }
        summary(
            &format!("  POST /register {part:?} only ({} KB)", bytes / 1024),
            samples,
        );
    }
}

/// Marking read (once each, as they change the state): the 100 newest unread messages in one
/// `POST /messages/flags`, then `POST /mark_all_as_read` for the rest.
/// Topics the heavy user follows, for the `is:followed` page: the first [`FOLLOWED`] topics
/// (by channel and name) of the channels they are subscribed to.
async fn follow_topics(app: &TestApp, heavy: &Account) {
    #[derive(QueryableByName)]
    struct Topic {
        #[diesel(sql_type = BigInt)]
        channel_id: i64,
        #[diesel(sql_type = diesel::sql_types::Text)]
        topic: String,
    }
    let mut conn = app.ctx.db.conn().unwrap();
    let topics: Vec<Topic> = diesel::sql_query(format!(
        "SELECT channel_id, MIN(topic) AS topic FROM messages WHERE channel_id IN \
         (SELECT channel_id FROM subscription_spans WHERE user_id = {} \
          AND end_message_id IS NULL) \
         GROUP BY channel_id, topic_key ORDER BY channel_id, topic_key LIMIT {FOLLOWED}",
        heavy.user_id.0
    ))
    .load::<Topic>(&mut **conn)
    .unwrap();
    drop(conn);
    for t in &topics {
        app.post("/user_topics")
            .as_user(heavy)
            .param("stream_id", t.channel_id)
            .param("topic", &t.topic)
            .param("visibility_policy", 3)
            .send()
            .await
            .success();
    }
    println!("the heavy user follows {} topics", topics.len());
}

/// How many topics the heavy user follows.
const FOLLOWED: usize = 24;

async fn mark_read(app: &TestApp, heavy: &Account) {
    let unread = {
        let mut conn = app.ctx.db.conn().unwrap();
        parley_storage::messages::unread_ids(&mut conn, heavy.user_id).unwrap()
    };
    let newest: Vec<i64> = unread.iter().rev().take(100).map(|m| m.0).collect();
    let t = Instant::now();
    app.post("/messages/flags")
        .as_user(heavy)
        .json_param("messages", &json!(newest))
        .param("op", "add")
        .param("flag", "read")
        .send()
        .await
        .success();
    println!(
        "POST /messages/flags read, {} unread messages: {:.1} ms",
        newest.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    let t = Instant::now();
    app.post("/mark_all_as_read")
        .as_user(heavy)
        .send()
        .await
        .success();
    println!(
        "POST /mark_all_as_read, {} unread messages: {:.1} ms",
        unread.len() - newest.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    let mut conn = app.ctx.db.conn().unwrap();
    assert!(
        parley_storage::messages::unread_ids(&mut conn, heavy.user_id)
            .unwrap()
            .is_empty()
    );
}

/// One timed `GET /messages` page: label, reader, narrow, anchor, `num_before`, `num_after`.
type PageCase<'a> = (
    &'static str,
    &'a Account,
    serde_json::Value,
    String,
    i64,
    i64,
);

/// The pages the benchmark times: search pages for a common word (newest, and from an anchor
/// in the middle of the history), for a word in one message, for the common word within a
/// channel and for a user with a small history; then unnarrowed, channel, topic, first unread,
/// direct, followed, unread, starred (newest, middle anchor, in a channel) and mentioned pages.
/// `max_id` is the newest message's ID (the middle anchor is half of it).
fn page_cases<'a>(max_id: i64, heavy: &'a Account, accounts: &'a [Account]) -> Vec<PageCase<'a>> {
    let middle = max_id / 2;
    // `content()` numbers each message: that number is a word of one message only.
    let rare = format!("{}", max_id / 3);
    let light = &accounts[accounts.len() / 2];
    let newest = || "newest".to_owned();
    vec![
        (
            "search, common word, newest",
            heavy,
            json!([["search", COMMON]]),
            newest(),
            100,
            0,
        ),
        (
            "search, common word, middle anchor",
            heavy,
            json!([["search", COMMON]]),
            middle.to_string(),
            50,
            50,
        ),
        (
            "search, one-message word, newest",
            heavy,
            json!([["search", rare]]),
            newest(),
            100,
            0,
        ),
        (
            "search, one-message word, middle anchor",
            heavy,
            json!([["search", rare]]),
            middle.to_string(),
            50,
            50,
        ),
        (
            "search, common word in a channel",
            heavy,
            json!([["channel", "channel 0"], ["search", COMMON]]),
            newest(),
            100,
            0,
        ),
        (
            "search, common word in a topic",
            heavy,
            json!([
                ["channel", "channel 0"],
                ["topic", "topic 7"],
                ["search", COMMON]
            ]),
            newest(),
            100,
            0,
        ),
        (
            "search, common word, user with a small history",
            light,
            json!([["search", COMMON]]),
            newest(),
            100,
            0,
        ),
        (
            "GET /messages newest 100 (own history)",
            heavy,
            json!([]),
            newest(),
            100,
            0,
        ),
        (
            "GET /messages newest 100 (own history, user with a small history)",
            light,
            json!([]),
            newest(),
            100,
            0,
        ),
        (
            "GET /messages middle anchor (own history)",
            heavy,
            json!([]),
            middle.to_string(),
            50,
            50,
        ),
        (
            "GET /messages newest 100 in a channel",
            heavy,
            json!([["channel", "channel 0"]]),
            newest(),
            100,
            0,
        ),
        (
            "GET /messages newest 100 in a topic",
            heavy,
            json!([["channel", "channel 0"], ["topic", "topic 7"]]),
            newest(),
            100,
            0,
        ),
        (
            "GET /messages first unread, 50 around it (all messages)",
            heavy,
            json!([]),
            "first_unread".to_owned(),
            50,
            50,
        ),
        (
            "GET /messages first unread, 50 around it (unread)",
            heavy,
            json!([["is", "unread"]]),
            "first_unread".to_owned(),
            50,
            50,
        ),
        (
            "GET /messages first unread, 50 around it (a channel)",
            heavy,
            json!([["channel", "channel 0"]]),
            "first_unread".to_owned(),
            50,
            50,
        ),
        (
            "GET /messages newest 100 direct messages",
            heavy,
            json!([["is", "dm"]]),
            newest(),
            100,
            0,
        ),
        (
            "GET /messages newest 100 in followed topics",
            heavy,
            json!([["is", "followed"]]),
            newest(),
            100,
            0,
        ),
        (
            "GET /messages newest 100 with a link (the seeded messages have none)",
            heavy,
            json!([["has", "link"]]),
            newest(),
            100,
            0,
        ),
        (
            "GET /messages newest 100 in resolved topics (none seeded)",
            heavy,
            json!([["is", "resolved"]]),
            newest(),
            100,
            0,
        ),
        (
            "GET /messages newest 100 unread",
            heavy,
            json!([["is", "unread"]]),
            newest(),
            100,
            0,
        ),
        (
            "GET /messages newest 100 starred",
            heavy,
            json!([["is", "starred"]]),
            newest(),
            100,
            0,
        ),
        (
            "GET /messages middle anchor starred",
            heavy,
            json!([["is", "starred"]]),
            middle.to_string(),
            50,
            50,
        ),
        (
            "GET /messages newest 100 starred in a channel",
            heavy,
            json!([["channel", "channel 0"], ["is", "starred"]]),
            newest(),
            100,
            0,
        ),
        (
            "GET /messages newest 100 mentioned",
            heavy,
            json!([["is", "mentioned"]]),
            newest(),
            100,
            0,
        ),
    ]
}

/// `GET /messages` pages ([`page_cases`]) in-process, timed (median of 20) with the rows they
/// return; the time includes the test client's parsing of each response.
async fn read_pages(app: &TestApp, heavy: &Account, accounts: &[Account]) {
    let mut conn = app.ctx.db.conn().unwrap();
    let max_id = count(&mut conn, "SELECT COALESCE(MAX(id), 0) AS n FROM messages");
    let common = count(
        &mut conn,
        &format!("SELECT COUNT(*) AS n FROM messages WHERE content LIKE '%{COMMON}%'"),
    );
    drop(conn);
    println!("{common} of {max_id} messages contain {COMMON:?}");
    for (label, who, narrow, anchor, before, after) in page_cases(max_id, heavy, accounts) {
        let mut samples = Vec::new();
        let mut rows = 0;
        for _ in 0..20 {
            let t = Instant::now();
            let page = app
                .get("/messages")
                .as_user(who)
                .param("anchor", anchor.clone())
                .param("num_before", before)
                .param("num_after", after)
                .json_param("narrow", &narrow)
                .send()
                .await
                .success();
            samples.push(t.elapsed());
            rows = page["messages"].as_array().map_or(0, Vec::len);
        }
        summary(&format!("{label} ({rows} rows)"), samples);
    }
}

/// The same pages from the `parley` binary at `base`, each timed to the last byte of its body
/// (median of 8: the reader's 200 requests a minute also cover the register before them).
async fn pages_over_http(
    client: &reqwest::Client,
    base: &str,
    max_id: i64,
    heavy: &Account,
    accounts: &[Account],
) {
    for (label, who, narrow, anchor, before, after) in page_cases(max_id, heavy, accounts) {
        let mut samples = Vec::new();
        let mut size = 0;
        for _ in 0..8 {
            let t = Instant::now();
            let response = client
                .get(format!("{base}/api/v1/messages"))
                .basic_auth(&who.email, Some(&who.api_key))
                .query(&[
                    ("anchor", anchor.clone()),
                    ("num_before", before.to_string()),
                    ("num_after", after.to_string()),
                    ("narrow", narrow.to_string()),
                ])
                .send()
                .await
                .unwrap();
            assert!(
                response.status().is_success(),
                "{label}: {}",
                response.status()
            );
            size = response.bytes().await.unwrap().len();
            samples.push(t.elapsed());
        }
        summary(
            &format!("from the parley binary: {label} ({} KB)", size / 1024),
            samples,
        );
    }
}

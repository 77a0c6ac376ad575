//! Prometheus metrics: the process-wide recorder (the `metrics` facade, rendered by
//! `metrics-exporter-prometheus`), and the gauges sampled at each scrape.
//!
//! | metric | kind | what |
//! |---|---|---|
//! | `parley_http_requests_total{method,route,status}` | counter | requests by route pattern |
//! | `parley_http_request_duration_seconds{method,route}` | histogram | their latency |
//! | `parley_event_queues` | gauge | event queues |
//! | `parley_event_polls_waiting` | gauge | `GET /events` long-polls waiting |
//! | `parley_events_delivered_total` | counter | events handed to clients |
//! | `parley_messages_sent_total` | counter | messages sent |
//! | `parley_db_pool_connections{state}` | gauge | open connections, `idle` and `in_use` |
//! | `parley_db_pool_max_connections` | gauge | pool size |
//! | `parley_db_pool_wait_seconds` | histogram | time to get a connection |
//! | `parley_db_pool_timeouts_total` | counter | requests that got none in time |
//! | `parley_db_writer_wait_seconds` | histogram | time waiting for the writer (SQLite's writes, PostgreSQL's logged ones) |
//! | `parley_db_writer_batch_size` | histogram | transactions committed together (group commit) |

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use parley_actions::Context;
use parley_api::ops::MetricsExport;
use std::sync::{Arc, OnceLock};

/// Latency buckets, in seconds: from a cached read to a heartbeat-long poll.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 120.0,
];

/// Batch-size buckets: how many transactions SQLite's writer commits together.
const BATCH_BUCKETS: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

/// The recorder, installed on first use (once per process).
fn handle() -> anyhow::Result<PrometheusHandle> {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), BUCKETS)?
        .set_buckets_for_metric(Matcher::Suffix("_batch_size".into()), BATCH_BUCKETS)?
        .build_recorder();
    let handle = recorder.handle();
    // Only the first install counts; a second start in the same process keeps the first.
    if metrics::set_global_recorder(recorder).is_ok() {
        let _ = HANDLE.set(handle);
    }
    HANDLE
        .get()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("another metrics recorder is installed"))
}

/// Installs the recorder and returns `/metrics` for this server, its gauges read from `ctx`.
pub fn export(ctx: &Context, token: Option<String>) -> anyhow::Result<MetricsExport> {
    let handle = handle()?;
    let ctx = ctx.clone();
    metrics::describe_counter!("parley_messages_sent_total", "Messages sent");
    Ok(MetricsExport {
        token,
        render: Arc::new(move || {
            let engine = ctx.events.engine();
            metrics::gauge!("parley_event_queues").set(engine.queue_count() as f64);
            metrics::gauge!("parley_event_polls_waiting").set(engine.waiting_count() as f64);
            let pool = ctx.db.pool_use();
            metrics::gauge!("parley_db_pool_max_connections").set(pool.max_size);
            metrics::gauge!("parley_db_pool_connections", "state" => "idle").set(pool.idle);
            metrics::gauge!("parley_db_pool_connections", "state" => "in_use")
                .set(pool.open.saturating_sub(pool.idle));
            handle.run_upkeep();
            handle.render()
        }),
    })
}

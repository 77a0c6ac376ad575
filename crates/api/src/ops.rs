//! Operations endpoints outside the Zulip API: `GET /health` (the process serves), `GET /ready`
//! (the database answers and is migrated), `GET /metrics` (Prometheus text, when configured),
//! and the middleware that counts and times every request by route pattern and status.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{web, HttpRequest, HttpResponse};
use parley_actions::health::check_ready;
use parley_actions::Context;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

/// `GET /metrics` as configured: the text to serve and the bearer token it needs, if any.
#[derive(Clone)]
pub struct MetricsExport {
    /// When set, a scrape must send `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Renders the current metrics in Prometheus' text format.
    pub render: Arc<dyn Fn() -> String + Send + Sync>,
}

/// What the application serves besides the API.
#[derive(Clone, Default)]
pub struct AppOptions {
    /// `GET /metrics` on this application (the public port); absent means 404.
    pub metrics: Option<MetricsExport>,
}

/// GET /health — the process is up and serving; touches nothing else.
pub async fn health() -> HttpResponse {
    HttpResponse::Ok().json(json!({"result": "success", "msg": "", "status": "alive"}))
}

/// GET /ready — the database answers and every migration is applied; 503 with the reason
/// otherwise.
pub async fn ready(ctx: web::Data<Context>) -> HttpResponse {
    match check_ready(&ctx).await {
        Ok(()) => {
            HttpResponse::Ok().json(json!({"result": "success", "msg": "", "status": "ready"}))
        }
        Err(not_ready) => HttpResponse::ServiceUnavailable().json(json!({
            "result": "error",
            "msg": not_ready.reason(),
            "code": "NOT_READY",
        })),
    }
}

/// GET /metrics — Prometheus text; 401 without the configured bearer token.
pub async fn metrics(req: HttpRequest, export: web::Data<MetricsExport>) -> HttpResponse {
    if let Some(token) = &export.token {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default();
        if !parley_actions::secrets::api_keys_match(given.trim(), token) {
            return HttpResponse::Unauthorized()
                .insert_header((header::WWW_AUTHENTICATE, "Bearer"))
                .json(json!({
                    "result": "error",
                    "msg": "Invalid or missing metrics token",
                    "code": "UNAUTHORIZED",
                }));
        }
    }
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body((export.render)())
}

/// Requests answered since the process started, for telling a server that went idle.
static REQUESTS_SERVED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many requests this process has answered so far (every route, every status).
pub fn requests_served() -> u64 {
    REQUESTS_SERVED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Middleware: counts each request by method, route pattern (never the raw path, so the number of
/// series stays bounded) and status, and records its latency.
pub async fn record_metrics(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let method = req.method().as_str().to_owned();
    let response = next.call(req).await?;
    let route = response
        .request()
        .match_pattern()
        .unwrap_or_else(|| "unmatched".to_owned());
    let status = response.status().as_u16().to_string();
    let elapsed = started.elapsed();
    REQUESTS_SERVED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    metrics::counter!(
        "parley_http_requests_total",
        "method" => method.clone(),
        "route" => route.clone(),
        "status" => status
    )
    .increment(1);
    metrics::histogram!(
        "parley_http_request_duration_seconds",
        "method" => method,
        "route" => route
    )
    .record(elapsed);
    Ok(response)
}

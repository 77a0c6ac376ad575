//! The access log: one line per request with method, path, status, duration and caller. The
//! query string is left out, since credentials and message text can travel in it.

use crate::auth::CallerId;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::HttpMessage;
use std::time::Instant;

/// Middleware function that logs each request when its response is ready.
pub async fn log_request(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.path().to_owned();
    let response = next.call(req).await?;
    let caller = response
        .request()
        .extensions()
        .get::<CallerId>()
        .map(|c| c.0 .0);
    let status = response.status().as_u16();
    let micros = started.elapsed().as_micros() as u64;
    match caller {
        Some(user_id) => tracing::info!(%method, %path, status, micros, user_id, "request"),
        None => tracing::info!(%method, %path, status, micros, "request"),
    }
    Ok(response)
}

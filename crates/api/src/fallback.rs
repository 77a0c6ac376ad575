//! Answers for requests that reach no handler: unknown routes (404) and known routes with the
//! wrong method (405), both in the error envelope.

use crate::error::error_body;
use actix_web::http::header;
use actix_web::HttpResponse;
use parley_domain::RequestError;

/// 404 for an unknown route.
pub async fn not_found() -> HttpResponse {
    let err = RequestError::bad_request("Not Found").with_status(404);
    HttpResponse::NotFound().json(error_body(&err))
}

/// 405 for a route that does not serve this method; lists the methods it does serve.
pub fn method_not_allowed(allowed: &[&str]) -> HttpResponse {
    let methods: Vec<String> = allowed.iter().map(|m| m.to_ascii_uppercase()).collect();
    let err = RequestError::bad_request("Method Not Allowed")
        .with_status(405)
        .with("allowed_methods", methods.clone());
    HttpResponse::MethodNotAllowed()
        .insert_header((header::ALLOW, methods.join(", ")))
        .json(error_body(&err))
}

//! Mapping every failure to the error envelope `{"result":"error","code":..,"msg":..}` with its
//! HTTP status. Client mistakes keep their code; infrastructure failures are logged with their
//! cause and answered with a generic 500 that leaks nothing.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use parley_actions::ActionError;
use parley_domain::{ErrorCode, RequestError};
use serde_json::{Map, Value};
use std::fmt;

/// An error on its way to becoming an HTTP response.
#[derive(Debug)]
pub struct ApiError(pub RequestError);

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<RequestError> for ApiError {
    fn from(err: RequestError) -> Self {
        ApiError(err)
    }
}

impl From<ActionError> for ApiError {
    fn from(err: ActionError) -> Self {
        match err {
            ActionError::Request(err) => ApiError(err),
            other => {
                tracing::error!(error = %other, "request failed on the server's side");
                ApiError(RequestError::new(
                    ErrorCode::InternalServerError,
                    "Internal server error",
                ))
            }
        }
    }
}

/// The JSON body of an error.
pub fn error_body(err: &RequestError) -> Value {
    let mut body = Map::new();
    body.insert("result".into(), "error".into());
    body.insert("msg".into(), err.msg.clone().into());
    body.insert("code".into(), err.code.as_str().into());
    for (key, value) in &err.data {
        body.insert(key.clone(), value.clone());
    }
    Value::Object(body)
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::BAD_REQUEST)
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        if self.0.code == ErrorCode::Unauthorized {
            response.insert_header((header::WWW_AUTHENTICATE, "Basic realm=\"zulip\""));
        }
        if let Some(retry) = self.0.data.get("retry-after").and_then(Value::as_f64) {
            response.insert_header((header::RETRY_AFTER, retry.ceil().to_string()));
        }
        response.json(error_body(&self.0))
    }
}

/// Results of handlers.
pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::to_bytes;

    #[actix_web::test]
    async fn request_errors_keep_code_fields_and_status() {
        let err = ApiError(RequestError::missing_param("content"));
        let response = err.error_response();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let body: Value =
            serde_json::from_slice(&to_bytes(response.into_body()).await.unwrap()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"result": "error", "code": "REQUEST_VARIABLE_MISSING",
                "msg": "Missing 'content' argument", "var_name": "content"})
        );
    }

    #[actix_web::test]
    async fn infrastructure_failures_are_generic_500s() {
        let err: ApiError = ActionError::Internal("disk on fire at /secret/path".into()).into();
        let response = err.error_response();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = to_bytes(response.into_body()).await.unwrap();
        assert!(!String::from_utf8_lossy(&body).contains("secret"));
    }

    #[actix_web::test]
    async fn unauthorized_asks_for_basic_auth() {
        let err = ApiError(RequestError::new(ErrorCode::Unauthorized, "x"));
        let response = err.error_response();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert!(response.headers().contains_key(header::WWW_AUTHENTICATE));
    }
}

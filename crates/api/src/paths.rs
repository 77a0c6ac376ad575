//! Refuses request paths that carry a NUL character (`%00`), in one place for every route: no
//! text column can store a NUL (PostgreSQL refuses it outright), and a path segment is a
//! parameter like any other, so it gets the same 400 envelope as a NUL in a parameter.

use crate::error::ApiError;
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::ResponseError;
use parley_domain::RequestError;

/// Whether the percent-decoded `path` holds a NUL byte. `%2500` is a literal `%00`, not a NUL.
pub fn has_nul(path: &str) -> bool {
    percent_encoding::percent_decode_str(path).any(|b| b == 0)
}

/// The answer to a path with a NUL in it.
pub fn nul_in_path() -> ApiError {
    ApiError(RequestError::bad_request(
        "The URL path contains NULL (0x00) characters.",
    ))
}

/// Middleware function: answers 400 before routing when the path holds a NUL.
pub async fn refuse_nul(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    if has_nul(req.path()) {
        let response = nul_in_path().error_response();
        return Ok(req.into_response(response).map_into_right_body());
    }
    Ok(next.call(req).await?.map_into_left_body())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_encoded_nuls_only() {
        assert!(has_nul("/join/a%00b/"));
        assert!(has_nul("/user_uploads/1/%00"));
        assert!(!has_nul("/user_uploads/1/a%2500b"));
        assert!(!has_nul("/join/abc/"));
        assert!(!has_nul("/x/%zz%0"));
    }
}

//! Uploaded avatars: `/users/me/avatar` and the images at `/user_avatars/{user_id}.png`.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::{ApiError, ApiResult};
use crate::params;
use crate::params::Params;
use crate::routes::uploads::{file_response, read_files};
use actix_multipart::Multipart;
use actix_web::{web, HttpResponse};
use parley_actions::avatars;
use parley_actions::Context;
use parley_domain::upload::MAX_AVATAR_FILE_SIZE_MIB;

params! {
    /// `DELETE /users/me/avatar`.
    pub struct NoParams {}
}

/// POST /users/me/avatar — set the caller's avatar (one image, multipart); answers its URL.
pub async fn upload(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    body: Multipart,
) -> ApiResult<Success> {
    let mut files = read_files(body, MAX_AVATAR_FILE_SIZE_MIB).await?;
    let count = files.len();
    let bytes = files.pop().map(|f| f.bytes).unwrap_or_default();
    let url = avatars::do_upload_avatar(&ctx, me, count, bytes).await?;
    Ok(Success::empty().with("avatar_url", url))
}

/// DELETE /users/me/avatar — back to the Gravatar of the caller's address.
pub async fn delete(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    avatars::do_delete_avatar(&ctx, me).await?;
    Ok(Success::empty())
}

/// GET /user_avatars/{file} — an uploaded avatar image (public).
pub async fn image(ctx: web::Data<Context>, path: web::Path<String>) -> HttpResponse {
    match avatars::avatar_image(&ctx, &path.into_inner()).await {
        Ok(file) => file_response(file),
        Err(e) => actix_web::ResponseError::error_response(&ApiError::from(e)),
    }
}

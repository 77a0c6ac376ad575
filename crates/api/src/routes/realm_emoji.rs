//! Custom emoji: `/realm/emoji` and the images at `/user_avatars/{realm_id}/emoji/images/...`.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::{ApiError, ApiResult};
use crate::params;
use crate::params::Params;
use crate::routes::uploads::{file_response, read_files};
use actix_multipart::Multipart;
use actix_web::{web, HttpResponse};
use parley_actions::realm_emoji;
use parley_actions::Context;
use parley_domain::upload::MAX_EMOJI_FILE_SIZE_MIB;

params! {
    /// `GET /realm/emoji` and `DELETE /realm/emoji/{emoji_name}`.
    pub struct NoParams {}
}

/// GET /realm/emoji — every custom emoji, keyed by ID.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(_me): Auth,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let emoji = realm_emoji::get_realm_emoji(&ctx).await?;
    Ok(Success::empty().with("emoji", emoji))
}

/// POST /realm/emoji/{emoji_name} — add a custom emoji (one image, multipart).
pub async fn add(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    body: Multipart,
) -> ApiResult<Success> {
    let mut files = read_files(body, MAX_EMOJI_FILE_SIZE_MIB).await?;
    let count = files.len();
    let bytes = files.pop().map(|f| f.bytes).unwrap_or_default();
    realm_emoji::do_add_realm_emoji(&ctx, me, path.into_inner(), count, bytes).await?;
    Ok(Success::empty())
}

/// DELETE /realm/emoji/{emoji_name} — deactivate a custom emoji.
pub async fn delete(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    realm_emoji::do_remove_realm_emoji(&ctx, me, path.into_inner()).await?;
    Ok(Success::empty())
}

/// GET /user_avatars/{realm_id}/emoji/images/{file} — a custom emoji's image (public).
pub async fn image(ctx: web::Data<Context>, path: web::Path<(i64, String)>) -> HttpResponse {
    let (realm, file) = path.into_inner();
    match realm_emoji::emoji_image(&ctx, realm, &file).await {
        Ok(file) => file_response(file),
        Err(e) => actix_web::ResponseError::error_response(&ApiError::from(e)),
    }
}

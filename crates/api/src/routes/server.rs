//! Endpoints a client calls before it has credentials.

use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::Params;
use actix_web::{web, HttpResponse};
use parley_actions::{auth, server_settings, Context};

params! {
    /// No parameters.
    pub struct NoParams {}
}

/// GET /server_settings — the server's version, login methods and organization profile.
pub async fn server_settings(ctx: web::Data<Context>, _: Params<NoParams>) -> ApiResult<Success> {
    let settings = server_settings::get_server_settings(&ctx).await?;
    Ok(Success::from_fields(settings))
}

params! {
    /// `POST /fetch_api_key`.
    pub struct FetchApiKey {
        username: String,
        password: String,
    }
}

/// POST /fetch_api_key — trade a login address and password for the API key.
pub async fn fetch_api_key(
    ctx: web::Data<Context>,
    Params(p): Params<FetchApiKey>,
) -> ApiResult<Success> {
    let grant = auth::do_fetch_api_key(&ctx, p.username, p.password).await?;
    Ok(Success::from_fields(grant))
}

/// The organization's square logo, which `realm_icon` points to.
pub async fn icon() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("image/svg+xml")
        .insert_header(("Cache-Control", "public, max-age=86400"))
        .body(include_str!("../../assets/parley-icon.svg"))
}

/// The Unicode emoji table that `server_emoji_data_url` names (the mobile app fetches it).
pub async fn emoji_data() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .insert_header(("Cache-Control", "public, max-age=86400"))
        .body(parley_actions::emoji_data::server_emoji_data())
}

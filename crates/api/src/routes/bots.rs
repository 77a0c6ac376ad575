//! Bots: `POST /bots`, `GET /bots`, `PATCH /bots/{bot_id}`, `DELETE /bots/{bot_id}`,
//! `POST /bots/{bot_id}/api_key/regenerate`.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Json, Params};
use actix_web::web;
use parley_actions::bots::{self, CreateBot, UpdateBot};
use parley_actions::Context;
use parley_domain::UserId;
use serde_json::{Map, Value};

params! {
    /// `POST /bots`.
    pub struct CreateBotParams {
        full_name: String,
        short_name: String,
        bot_type: Json<i64> = Json(1),
        payload_url: Option<Json<String>>,
        interface_type: Json<i64> = Json(1),
        service_name: Option<String>,
        config_data: Option<Json<Map<String, Value>>>,
        default_sending_stream: Option<String>,
        default_events_register_stream: Option<String>,
        default_all_public_streams: Option<bool>,
    }
}

/// POST /bots — create a bot owned by the caller.
pub async fn create(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<CreateBotParams>,
) -> ApiResult<Success> {
    let request = CreateBot {
        full_name: p.full_name,
        short_name: p.short_name,
        bot_type: p.bot_type.0,
        payload_url: p.payload_url.map(|u| u.0).unwrap_or_default(),
        interface_type: p.interface_type.0,
        service_name: p.service_name,
        config_data: p.config_data.map(|c| c.0).unwrap_or_default(),
        default_sending_stream: p.default_sending_stream,
        default_events_register_stream: p.default_events_register_stream,
        default_all_public_streams: p.default_all_public_streams,
    };
    let created = bots::create_bot(&ctx, &me, request).await?;
    Ok(Success::from_fields(created))
}

params! {
    /// `GET /bots`.
    pub struct ListBots {}
}

/// GET /bots — the caller's own active bots.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<ListBots>,
) -> ApiResult<Success> {
    let list = bots::list_own_bots(&ctx, &me).await?;
    Ok(Success::empty().with("bots", list))
}

params! {
    /// `PATCH /bots/{bot_id}`.
    pub struct UpdateBotParams {
        full_name: Option<String>,
        role: Option<Json<i64>>,
        bot_owner_id: Option<Json<UserId>>,
        config_data: Option<Json<Map<String, Value>>>,
        service_payload_url: Option<Json<String>>,
        service_interface: Json<i64> = Json(1),
        default_sending_stream: Option<String>,
        default_events_register_stream: Option<String>,
        default_all_public_streams: Option<bool>,
    }
}

/// PATCH /bots/{bot_id} — the bot's owner or an administrator reconfigures it.
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<UpdateBotParams>,
) -> ApiResult<Success> {
    let bot = path_param::<UserId>("bot_id", &path.into_inner())?;
    let request = UpdateBot {
        full_name: p.full_name,
        role: p.role.map(|r| r.0),
        bot_owner_id: p.bot_owner_id.map(|o| o.0),
        config_data: p.config_data.map(|c| c.0),
        service_payload_url: p.service_payload_url.map(|u| u.0),
        service_interface: p.service_interface.0,
        default_sending_stream: p.default_sending_stream,
        default_events_register_stream: p.default_events_register_stream,
        default_all_public_streams: p.default_all_public_streams,
    };
    let fields = bots::update_bot(&ctx, &me, bot, request).await?;
    Ok(Success::from_fields(fields))
}

params! {
    /// `DELETE /bots/{bot_id}`.
    pub struct DeactivateBot {}
}

/// DELETE /bots/{bot_id} — deactivate a bot.
pub async fn deactivate(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<DeactivateBot>,
) -> ApiResult<Success> {
    let bot = path_param::<UserId>("bot_id", &path.into_inner())?;
    bots::deactivate_bot(&ctx, &me, bot).await?;
    Ok(Success::empty())
}

params! {
    /// `POST /bots/{bot_id}/api_key/regenerate`.
    pub struct RegenerateKey {}
}

/// POST /bots/{bot_id}/api_key/regenerate — a new API key for the bot.
pub async fn regenerate_api_key(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<RegenerateKey>,
) -> ApiResult<Success> {
    let bot = path_param::<UserId>("bot_id", &path.into_inner())?;
    let api_key = bots::regenerate_bot_api_key(&ctx, &me, bot).await?;
    Ok(Success::empty().with("api_key", api_key))
}

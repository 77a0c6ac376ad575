//! People's statuses: a short text and an emoji.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Params};
use actix_web::web;
use parley_actions::user_status;
use parley_actions::Context;
use parley_domain::user_status::StatusRequest;
use parley_domain::UserId;

params! {
    /// `POST /users/me/status`.
    pub struct OwnStatusParams {
        status_text: Option<String>,
        away: Option<bool>,
        emoji_name: Option<String>,
        emoji_code: Option<String>,
        reaction_type: Option<String>,
    }
}

params! {
    /// `POST /users/{user_id}/status` (no deprecated `away`: it was never part of this one).
    pub struct UserStatusParams {
        status_text: Option<String>,
        emoji_name: Option<String>,
        emoji_code: Option<String>,
        reaction_type: Option<String>,
    }
}

params! {
    /// `GET /users/{user_id}/status`.
    pub struct GetStatusParams {}
}

fn user_id(raw: &str) -> ApiResult<UserId> {
    path_param::<UserId>("user_id", raw)
}

/// POST /users/me/status — change the caller's status text and emoji.
pub async fn update_own(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<OwnStatusParams>,
) -> ApiResult<Success> {
    let request = StatusRequest {
        status_text: p.status_text,
        away: p.away,
        emoji_name: p.emoji_name,
        emoji_code: p.emoji_code,
        reaction_type: p.reaction_type,
    };
    user_status::do_update_own_status(&ctx, me, request).await?;
    Ok(Success::empty())
}

/// POST /users/{user_id}/status — an administrator changes someone's status.
pub async fn update_user(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<UserStatusParams>,
) -> ApiResult<Success> {
    let request = StatusRequest {
        status_text: p.status_text,
        away: None,
        emoji_name: p.emoji_name,
        emoji_code: p.emoji_code,
        reaction_type: p.reaction_type,
    };
    user_status::do_update_user_status(&ctx, me, user_id(&path)?, request).await?;
    Ok(Success::empty())
}

/// GET /users/{user_id}/status — someone's status (`{}` when none is set).
pub async fn get(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<GetStatusParams>,
) -> ApiResult<Success> {
    let status = user_status::get_user_status(&ctx, me, user_id(&path)?).await?;
    Ok(Success::empty().with("status", status))
}

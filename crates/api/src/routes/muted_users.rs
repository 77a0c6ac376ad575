//! Muting people.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Params};
use actix_web::web;
use parley_actions::muted_users;
use parley_actions::Context;
use parley_domain::UserId;

params! {
    /// `POST` and `DELETE /users/me/muted_users/{muted_user_id}`.
    pub struct MuteParams {}
}

fn muted_user_id(raw: &str) -> ApiResult<UserId> {
    path_param::<UserId>("muted_user_id", raw)
}

/// POST /users/me/muted_users/{muted_user_id} — mute someone.
pub async fn mute(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<MuteParams>,
) -> ApiResult<Success> {
    muted_users::do_mute_user(&ctx, me, muted_user_id(&path)?).await?;
    Ok(Success::empty())
}

/// DELETE /users/me/muted_users/{muted_user_id} — unmute someone.
pub async fn unmute(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<MuteParams>,
) -> ApiResult<Success> {
    muted_users::do_unmute_user(&ctx, me, muted_user_id(&path)?).await?;
    Ok(Success::empty())
}

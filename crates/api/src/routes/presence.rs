//! Presence: reporting one's own and reading everybody's.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Params};
use actix_web::web;
use parley_actions::presence::{self, PresenceReport};
use parley_actions::users::UserRef;
use parley_actions::Context;
use parley_domain::UserId;

params! {
    /// `POST /users/me/presence`.
    pub struct UpdatePresence {
        status: String,
        last_update_id: Option<i64>,
        history_limit_days: Option<i64>,
        ping_only: bool = false,
        new_user_input: bool = false,
        slim_presence: bool = false,
    }
}

/// POST /users/me/presence — report being active or idle; get everybody's presence back.
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<UpdatePresence>,
) -> ApiResult<Success> {
    let report = PresenceReport {
        status: p.status,
        last_update_id: p.last_update_id,
        history_limit_days: p.history_limit_days,
        ping_only: p.ping_only,
        new_user_input: p.new_user_input,
        slim_presence: p.slim_presence,
    };
    let fields = presence::update_presence(&ctx, me, report).await?;
    Ok(Success::from_fields(fields))
}

params! {
    /// `GET /users/{user_id_or_email}/presence`.
    pub struct GetUserPresence {
        slim_presence: bool = false,
    }
}

/// GET /users/{user_id_or_email}/presence — one user's presence.
pub async fn get_user(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<GetUserPresence>,
) -> ApiResult<Success> {
    let segment = path.into_inner();
    let target = if segment.bytes().all(|b| b.is_ascii_digit()) {
        UserRef::Id(path_param::<UserId>("user_id_or_email", &segment)?)
    } else {
        UserRef::Email(path_param::<String>("user_id_or_email", &segment)?)
    };
    let found = presence::user_presence(&ctx, me, target, p.slim_presence).await?;
    Ok(Success::empty().with("presence", found))
}

params! {
    /// `GET /realm/presence`.
    pub struct GetRealmPresence {}
}

/// GET /realm/presence — everybody's presence, legacy format.
pub async fn realm(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<GetRealmPresence>,
) -> ApiResult<Success> {
    let fields = presence::realm_presence(&ctx, me).await?;
    Ok(Success::from_fields(fields))
}

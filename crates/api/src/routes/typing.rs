//! Typing notifications, while composing a message or editing one.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{Json, Params};
use crate::routes::messages::message_id;
use actix_web::web;
use parley_actions::typing::{self, TypingRequest};
use parley_actions::Context;
use parley_domain::{ChannelId, UserId};

params! {
    /// `POST /typing`.
    pub struct SetTyping {
        op: String,
        r#type: Option<String>,
        to: Option<Json<Vec<UserId>>>,
        stream_id: Option<i64>,
        topic: Option<String>,
    }
}

/// POST /typing — say that one started or stopped typing a message.
pub async fn set(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<SetTyping>,
) -> ApiResult<Success> {
    let request = TypingRequest {
        op: p.op,
        kind: p.r#type,
        to: p.to.map(|ids| ids.0),
        stream_id: p.stream_id.map(ChannelId),
        topic: p.topic,
    };
    typing::send_typing(&ctx, me, request).await?;
    Ok(Success::empty())
}

params! {
    /// `POST /messages/{message_id}/typing`.
    pub struct SetEditTyping {
        op: String,
    }
}

/// POST /messages/{message_id}/typing — say that one started or stopped editing a message.
pub async fn set_for_edit(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<SetEditTyping>,
) -> ApiResult<Success> {
    typing::send_edit_typing(&ctx, me, message_id(&path)?, p.op).await?;
    Ok(Success::empty())
}

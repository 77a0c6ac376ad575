//! Drafts synchronized between a person's clients.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Json, Params};
use actix_web::web;
use parley_actions::drafts;
use parley_actions::Context;
use serde_json::Value;

params! {
    /// `GET /drafts` and `DELETE /drafts/{draft_id}`.
    pub struct NoParams {}
}

params! {
    /// `POST /drafts`.
    pub struct CreateDraftsParams {
        drafts: Json<Vec<Value>> = Json(Vec::new()),
    }
}

params! {
    /// `PATCH /drafts/{draft_id}`.
    pub struct EditDraftParams {
        draft: Json<Value>,
    }
}

/// GET /drafts — the caller's drafts, least recently edited first.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let list = drafts::get_drafts(&ctx, me).await?;
    Ok(Success::empty()
        .with("count", list.len())
        .with("drafts", list))
}

/// POST /drafts — create drafts; answers their IDs in the order sent.
pub async fn create(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<CreateDraftsParams>,
) -> ApiResult<Success> {
    let ids = drafts::do_create_drafts(&ctx, me, p.drafts.0).await?;
    Ok(Success::empty().with("ids", ids))
}

/// PATCH /drafts/{draft_id} — replace a draft.
pub async fn edit(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<EditDraftParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("draft_id", &path)?;
    drafts::do_edit_draft(&ctx, me, id, p.draft.0).await?;
    Ok(Success::empty())
}

/// DELETE /drafts/{draft_id} — delete a draft.
pub async fn delete(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("draft_id", &path)?;
    drafts::do_delete_draft(&ctx, me, id).await?;
    Ok(Success::empty())
}

//! Linkifiers: patterns whose matches in messages and topics become links.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Json, Params};
use actix_web::web;
use parley_actions::linkifiers;
use parley_actions::Context;

params! {
    /// `GET /realm/linkifiers` and `DELETE /realm/filters/{filter_id}`.
    pub struct NoParams {}
}

params! {
    /// `POST /realm/filters` and `PATCH /realm/filters/{filter_id}`.
    pub struct LinkifierParams {
        pattern: String,
        url_template: String,
    }
}

params! {
    /// `PATCH /realm/linkifiers`.
    pub struct ReorderParams {
        ordered_linkifier_ids: Json<Vec<i64>>,
    }
}

/// GET /realm/linkifiers — every linkifier, in processing order.
pub async fn list(ctx: web::Data<Context>, _: Auth, _: Params<NoParams>) -> ApiResult<Success> {
    let list = linkifiers::get_linkifiers(&ctx).await?;
    Ok(Success::empty().with("linkifiers", list))
}

/// PATCH /realm/linkifiers — an administrator sets the processing order.
pub async fn reorder(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<ReorderParams>,
) -> ApiResult<Success> {
    linkifiers::do_reorder_linkifiers(&ctx, &me, p.ordered_linkifier_ids.0).await?;
    Ok(Success::empty())
}

/// POST /realm/filters — an administrator adds a linkifier; answers its ID.
pub async fn create(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<LinkifierParams>,
) -> ApiResult<Success> {
    let id = linkifiers::do_add_linkifier(&ctx, &me, p.pattern, p.url_template).await?;
    Ok(Success::empty().with("id", id))
}

/// PATCH /realm/filters/{filter_id} — an administrator changes a linkifier.
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<LinkifierParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("filter_id", &path)?;
    linkifiers::do_update_linkifier(&ctx, &me, id, p.pattern, p.url_template).await?;
    Ok(Success::empty())
}

/// DELETE /realm/filters/{filter_id} — an administrator removes a linkifier.
pub async fn delete(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("filter_id", &path)?;
    linkifiers::do_remove_linkifier(&ctx, &me, id).await?;
    Ok(Success::empty())
}

//! Code playgrounds: where code blocks of a language can be opened.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Params};
use actix_web::web;
use parley_actions::playgrounds;
use parley_actions::Context;

params! {
    /// `POST /realm/playgrounds`.
    pub struct AddParams {
        name: String,
        pygments_language: String,
        url_template: String,
    }
}

params! {
    /// `DELETE /realm/playgrounds/{playground_id}`.
    pub struct NoParams {}
}

/// POST /realm/playgrounds — an administrator adds a code playground; answers its ID.
pub async fn create(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<AddParams>,
) -> ApiResult<Success> {
    let id = playgrounds::do_add_playground(&ctx, &me, p.name, p.pygments_language, p.url_template)
        .await?;
    Ok(Success::empty().with("id", id))
}

/// DELETE /realm/playgrounds/{playground_id} — an administrator removes a code playground.
pub async fn delete(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("playground_id", &path)?;
    playgrounds::do_remove_playground(&ctx, &me, id).await?;
    Ok(Success::empty())
}

//! Saved snippets: a person's reusable message text.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Params};
use actix_web::web;
use parley_actions::saved_snippets;
use parley_actions::Context;

params! {
    /// `GET /saved_snippets` and `DELETE /saved_snippets/{saved_snippet_id}`.
    pub struct NoParams {}
}

params! {
    /// `POST /saved_snippets`.
    pub struct CreateSnippetParams {
        title: String,
        content: String,
    }
}

params! {
    /// `PATCH /saved_snippets/{saved_snippet_id}`.
    pub struct EditSnippetParams {
        title: Option<String>,
        content: Option<String>,
    }
}

/// GET /saved_snippets — the caller's saved snippets.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let list = saved_snippets::get_saved_snippets(&ctx, me).await?;
    Ok(Success::empty().with("saved_snippets", list))
}

/// POST /saved_snippets — save a snippet; answers its ID.
pub async fn create(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<CreateSnippetParams>,
) -> ApiResult<Success> {
    let id = saved_snippets::do_create_saved_snippet(&ctx, me, p.title, p.content).await?;
    Ok(Success::empty().with("saved_snippet_id", id))
}

/// PATCH /saved_snippets/{saved_snippet_id} — change a snippet's title and/or content.
pub async fn edit(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<EditSnippetParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("saved_snippet_id", &path)?;
    saved_snippets::do_edit_saved_snippet(&ctx, me, id, p.title, p.content).await?;
    Ok(Success::empty())
}

/// DELETE /saved_snippets/{saved_snippet_id} — delete a snippet.
pub async fn delete(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("saved_snippet_id", &path)?;
    saved_snippets::do_delete_saved_snippet(&ctx, me, id).await?;
    Ok(Success::empty())
}

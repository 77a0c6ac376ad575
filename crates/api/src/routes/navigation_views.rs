//! Navigation views: the sidebar views a person pinned, hid or defined. A view's path segment
//! is its fragment, URL-encoded (slashes included, encoded or not).

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Params};
use actix_web::web;
use parley_actions::navigation_views;
use parley_actions::Context;

params! {
    /// `GET /navigation_views` and `DELETE /navigation_views/{fragment}`.
    pub struct NoParams {}
}

params! {
    /// `POST /navigation_views`.
    pub struct AddViewParams {
        fragment: String,
        is_pinned: bool,
        name: Option<String>,
    }
}

params! {
    /// `PATCH /navigation_views/{fragment}`.
    pub struct UpdateViewParams {
        is_pinned: Option<bool>,
        name: Option<String>,
    }
}

/// GET /navigation_views — the caller's navigation views.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let list = navigation_views::get_navigation_views(&ctx, me).await?;
    Ok(Success::empty().with("navigation_views", list))
}

/// POST /navigation_views — add a view (or settings for a built-in view).
pub async fn add(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<AddViewParams>,
) -> ApiResult<Success> {
    navigation_views::do_add_navigation_view(&ctx, me, p.fragment, p.is_pinned, p.name).await?;
    Ok(Success::empty())
}

/// PATCH /navigation_views/{fragment} — pin, unpin or rename a view.
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<UpdateViewParams>,
) -> ApiResult<Success> {
    let fragment = path_param::<String>("fragment", &path)?;
    navigation_views::do_update_navigation_view(&ctx, me, fragment, p.is_pinned, p.name).await?;
    Ok(Success::empty())
}

/// DELETE /navigation_views/{fragment} — remove a view.
pub async fn remove(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let fragment = path_param::<String>("fragment", &path)?;
    navigation_views::do_remove_navigation_view(&ctx, me, fragment).await?;
    Ok(Success::empty())
}

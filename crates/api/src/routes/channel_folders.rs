//! Channel folders: named, ordered groups of channels for the sidebar.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Json, Params};
use actix_web::web;
use parley_actions::channel_folders::{self, FolderChange};
use parley_actions::Context;

params! {
    /// `GET /channel_folders`.
    pub struct ListParams {
        include_archived: bool = false,
    }
}

params! {
    /// `POST /channel_folders/create`.
    pub struct CreateParams {
        name: String,
        description: String = String::new(),
    }
}

params! {
    /// `PATCH /channel_folders`.
    pub struct ReorderParams {
        order: Json<Vec<i64>>,
    }
}

params! {
    /// `PATCH /channel_folders/{channel_folder_id}`.
    pub struct UpdateParams {
        name: Option<String>,
        description: Option<String>,
        is_archived: Option<bool>,
    }
}

/// GET /channel_folders — the organization's folders in order.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(_me): Auth,
    Params(p): Params<ListParams>,
) -> ApiResult<Success> {
    let folders = channel_folders::get_channel_folders(&ctx, p.include_archived).await?;
    Ok(Success::empty().with("channel_folders", folders))
}

/// POST /channel_folders/create — an administrator creates a folder; answers its ID.
pub async fn create(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<CreateParams>,
) -> ApiResult<Success> {
    let id = channel_folders::do_create_channel_folder(&ctx, me, p.name, p.description).await?;
    Ok(Success::empty().with("channel_folder_id", id))
}

/// PATCH /channel_folders — an administrator orders every folder.
pub async fn reorder(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<ReorderParams>,
) -> ApiResult<Success> {
    channel_folders::do_reorder_channel_folders(&ctx, me, p.order.0).await?;
    Ok(Success::empty())
}

/// PATCH /channel_folders/{channel_folder_id} — rename, describe, archive or unarchive.
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<UpdateParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("channel_folder_id", &path)?;
    let change = FolderChange {
        name: p.name,
        description: p.description,
        is_archived: p.is_archived,
    };
    channel_folders::do_update_channel_folder(&ctx, me, id, change).await?;
    Ok(Success::empty())
}

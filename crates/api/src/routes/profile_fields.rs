//! Custom profile fields: definitions and each person's values.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Json, Params};
use actix_web::web;
use parley_actions::profile_fields::{self, CreateProfileField, UpdateProfileField};
use parley_actions::Context;
use parley_domain::ProfileFieldId;
use serde::Deserialize;
use serde_json::Value;

params! {
    /// `GET /realm/profile_fields`.
    pub struct ListFields {}
}

/// GET /realm/profile_fields — every field definition, in display order.
pub async fn list(ctx: web::Data<Context>, _: Auth, _: Params<ListFields>) -> ApiResult<Success> {
    let fields = profile_fields::list_profile_fields(&ctx).await?;
    Ok(Success::empty().with("custom_fields", fields))
}

params! {
    /// `POST /realm/profile_fields`.
    pub struct CreateField {
        name: String,
        field_type: i64,
        hint: String = String::new(),
        field_data: Option<Json<Value>>,
        display_in_profile_summary: bool = false,
        required: bool = false,
    }
}

/// POST /realm/profile_fields — an administrator adds a field.
pub async fn create(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<CreateField>,
) -> ApiResult<Success> {
    let request = CreateProfileField {
        name: p.name,
        hint: p.hint,
        field_type: p.field_type,
        field_data: p.field_data.map(|d| d.0.to_string()).unwrap_or_default(),
        display_in_profile_summary: p.display_in_profile_summary,
        required: p.required,
    };
    let id = profile_fields::create_profile_field(&ctx, &me, request).await?;
    Ok(Success::empty().with("id", id))
}

/// One entry of `PATCH /users/me/profile_data`'s `data`.
#[derive(Debug, Deserialize)]
pub struct ProfileDataEntry {
    /// Field ID.
    pub id: ProfileFieldId,
    /// New value: text, or a list of user IDs; null or empty clears it.
    #[serde(default)]
    pub value: Option<Value>,
}

params! {
    /// `PATCH /users/me/profile_data`.
    pub struct UpdateOwnData {
        data: Json<Vec<ProfileDataEntry>>,
    }
}

/// PATCH /users/me/profile_data — set the caller's own field values.
pub async fn update_own(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<UpdateOwnData>,
) -> ApiResult<Success> {
    let values = p.data.0.into_iter().map(|e| (e.id, e.value)).collect();
    profile_fields::do_set_profile_values(&ctx, me, values).await?;
    Ok(Success::empty())
}

params! {
    /// `DELETE /users/me/profile_data`.
    pub struct DeleteOwnData {
        data: Json<Vec<ProfileFieldId>>,
    }
}

/// DELETE /users/me/profile_data — clear the caller's values of these fields.
pub async fn delete_own(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<DeleteOwnData>,
) -> ApiResult<Success> {
    profile_fields::do_clear_profile_values(&ctx, me, p.data.0).await?;
    Ok(Success::empty())
}

params! {
    /// `PATCH /realm/profile_fields/{field_id}`.
    pub struct UpdateField {
        name: Option<String>,
        hint: Option<String>,
        field_data: Option<Json<Value>>,
        display_in_profile_summary: Option<bool>,
        required: Option<bool>,
    }
}

fn field_id(path: web::Path<String>) -> Result<ProfileFieldId, crate::error::ApiError> {
    path_param::<i64>("field_id", &path.into_inner()).map(ProfileFieldId)
}

/// PATCH /realm/profile_fields/{field_id} — an administrator edits a field.
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<UpdateField>,
) -> ApiResult<Success> {
    let id = field_id(path)?;
    let request = UpdateProfileField {
        name: p.name,
        hint: p.hint,
        field_data: p.field_data.map(|d| d.0.to_string()),
        display_in_profile_summary: p.display_in_profile_summary,
        required: p.required,
    };
    profile_fields::update_profile_field(&ctx, &me, id, request).await?;
    Ok(Success::empty())
}

params! {
    /// `DELETE /realm/profile_fields/{field_id}`.
    pub struct DeleteField {}
}

/// DELETE /realm/profile_fields/{field_id} — an administrator deletes a field and its values.
pub async fn delete(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<DeleteField>,
) -> ApiResult<Success> {
    let id = field_id(path)?;
    profile_fields::delete_profile_field(&ctx, &me, id).await?;
    Ok(Success::empty())
}

params! {
    /// `PATCH /realm/profile_fields`.
    pub struct ReorderFields {
        order: Json<Vec<ProfileFieldId>>,
    }
}

/// PATCH /realm/profile_fields — an administrator reorders the fields.
pub async fn reorder(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<ReorderFields>,
) -> ApiResult<Success> {
    profile_fields::reorder_profile_fields(&ctx, &me, p.order.0).await?;
    Ok(Success::empty())
}

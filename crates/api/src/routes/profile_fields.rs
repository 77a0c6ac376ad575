//! Custom profile fields.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{Json, Params};
use actix_web::web;
use parley_actions::profile_fields::{self, CreateProfileField};
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
    /// New value: text, or a JSON value such as a list of user IDs.
    pub value: Value,
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
    let values = p
        .data
        .0
        .into_iter()
        .map(|entry| {
            let text = match entry.value {
                Value::String(s) => s,
                other => other.to_string(),
            };
            (entry.id, text)
        })
        .collect();
    profile_fields::do_set_profile_values(&ctx, me.id, values).await?;
    Ok(Success::empty())
}

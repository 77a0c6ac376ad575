//! Custom profile fields: definitions (administrators) and each person's values.

use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::channels::active_users;
use crate::notify::users::{profile_fields_changed, profile_value_changed};
use parley_domain::permissions::check_is_admin;
use parley_domain::profile_field::{ProfileField, ProfileFieldType};
use parley_domain::user::User;
use parley_domain::{ProfileFieldId, RequestError, UserId};
use parley_storage::profile_fields::{self, NewProfileField, ProfileValue};
use parley_storage::StorageError;
use std::collections::HashMap;

/// `GET /realm/profile_fields`: every field definition in display order.
pub async fn list_profile_fields(ctx: &Context) -> ActionResult<Vec<ProfileField>> {
    Ok(ctx.db.run(profile_fields::all).await?)
}

/// A new field definition as requested.
#[derive(Debug, Clone)]
pub struct CreateProfileField {
    /// Name; must be unique.
    pub name: String,
    /// Help text.
    pub hint: String,
    /// Type code.
    pub field_type: i64,
    /// Type-specific JSON text.
    pub field_data: String,
    /// Shown in the user card summary.
    pub display_in_profile_summary: bool,
    /// Users must fill it in.
    pub required: bool,
}

/// `POST /realm/profile_fields`: administrators add a field.
pub async fn create_profile_field(
    ctx: &Context,
    caller: &User,
    request: CreateProfileField,
) -> ActionResult<ProfileFieldId> {
    check_is_admin(caller)?;
    if ProfileFieldType::from_code(request.field_type).is_none() {
        return Err(RequestError::invalid_param("field_type", "Invalid field type.").into());
    }
    let name = request.name.trim().to_owned();
    if name.is_empty() {
        return Err(RequestError::invalid_param("name", "Label cannot be blank.").into());
    }
    let new = NewProfileField {
        name,
        hint: request.hint,
        field_type: request.field_type,
        field_data: request.field_data,
        display_in_profile_summary: request.display_in_profile_summary,
        required: request.required,
    };
    ctx.write(move |conn, events| {
        let id = match profile_fields::insert(conn, &new) {
            Err(StorageError::UniqueViolation(_)) => {
                return Err(RequestError::invalid_param(
                    "name",
                    "A field with that label already exists.",
                )
                .into())
            }
            other => other?,
        };
        events.push(profile_fields_changed(conn)?);
        Ok(id)
    })
    .await
}

/// `PATCH /users/me/profile_data`: sets some of a user's field values in one transaction;
/// Markdown-capable types store their rendering too. An unknown field fails the whole change.
pub async fn do_set_profile_values(
    ctx: &Context,
    user_id: UserId,
    values: Vec<(ProfileFieldId, String)>,
) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        let fields = profile_fields::all(conn)?;
        let current: HashMap<ProfileFieldId, ProfileValue> =
            profile_fields::values_of(conn, Some(&[user_id]))?
                .into_iter()
                .map(|v| (v.field_id, v))
                .collect();
        let people = active_users(conn)?;
        for (field_id, value) in values {
            let field = fields.iter().find(|f| f.id == field_id).ok_or_else(|| {
                RequestError::invalid_param("data", format!("Field id {field_id} not found."))
            })?;
            let markdown = ProfileFieldType::from_code(field.field_type)
                .is_some_and(ProfileFieldType::is_markdown);
            let rendered_value = markdown.then(|| parley_markdown::render(&value));
            let new = ProfileValue {
                user_id,
                field_id,
                value,
                rendered_value,
            };
            if current.get(&field_id) == Some(&new) {
                continue;
            }
            profile_fields::set_value(conn, &new)?;
            events.push(profile_value_changed(
                user_id,
                field_id,
                Some(&new.value),
                new.rendered_value.as_deref(),
                &people,
            ));
        }
        Ok(())
    })
    .await
}

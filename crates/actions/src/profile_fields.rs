//! Custom profile fields: definitions (administrators create, edit, reorder and delete them) and
//! each person's values (set by themselves, or by an administrator through `PATCH /users/{id}`).

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::users::{profile_fields_changed, profile_value_changed};
use crate::publish::Events;
use parley_domain::permissions::check_is_admin;
use parley_domain::profile_field::{
    check_field_data, check_value, ProfileField, ProfileFieldType, MAX_HINT_LENGTH, MAX_NAME_LENGTH,
};
use parley_domain::user::User;
use parley_domain::{ProfileFieldId, RequestError, UserId};
use parley_storage::profile_fields::{self, FieldChange, NewProfileField, ProfileValue};
use parley_storage::{users, DbConn, StorageError};
use parley_wire::realm::CustomProfileField;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// How many fields may be shown in the user card summary.
const MAX_SUMMARY_FIELDS: usize = 2;

/// `GET /realm/profile_fields`: every field definition in display order.
pub async fn list_profile_fields(ctx: &Context) -> ActionResult<Vec<CustomProfileField>> {
    Ok(ctx.run(crate::present::realm::profile_fields).await?)
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

fn check_name_and_hint(name: &str, hint: &str) -> Result<String, RequestError> {
    let name = name.trim().to_owned();
    if name.is_empty() {
        return Err(RequestError::invalid_param(
            "name",
            "Label cannot be blank.",
        ));
    }
    if name.chars().count() > MAX_NAME_LENGTH {
        return Err(RequestError::invalid_param(
            "name",
            format!("name is too long (limit: {MAX_NAME_LENGTH} characters)"),
        ));
    }
    if hint.chars().count() > MAX_HINT_LENGTH {
        return Err(RequestError::invalid_param(
            "hint",
            format!("hint is too long (limit: {MAX_HINT_LENGTH} characters)"),
        ));
    }
    Ok(name)
}

fn name_taken() -> ActionError {
    RequestError::invalid_param("name", "A field with that label already exists.").into()
}

fn check_summary_limit(
    fields: &[ProfileField],
    except: Option<ProfileFieldId>,
) -> Result<(), RequestError> {
    let shown = fields
        .iter()
        .filter(|f| f.display_in_profile_summary && Some(f.id) != except)
        .count();
    if shown >= MAX_SUMMARY_FIELDS {
        return Err(RequestError::invalid_param(
            "display_in_profile_summary",
            "Only 2 custom profile fields can be displayed in the profile summary.",
        ));
    }
    Ok(())
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
    let name = check_name_and_hint(&request.name, &request.hint)?;
    check_field_data(request.field_type, &request.field_data)?;
    let new = NewProfileField {
        name,
        hint: request.hint,
        field_type: request.field_type,
        field_data: request.field_data,
        display_in_profile_summary: request.display_in_profile_summary,
        required: request.required,
    };
    ctx.write(move |conn, events| {
        if new.display_in_profile_summary {
            check_summary_limit(&profile_fields::all(conn)?, None)?;
        }
        let id = match profile_fields::insert(conn, &new) {
            Err(StorageError::UniqueViolation(_)) => return Err(name_taken()),
            other => other?,
        };
        events.push(profile_fields_changed(conn)?);
        Ok(id)
    })
    .await
}

/// A `PATCH /realm/profile_fields/{field_id}` request: the parts sent.
#[derive(Debug, Clone, Default)]
pub struct UpdateProfileField {
    /// New name.
    pub name: Option<String>,
    /// New hint.
    pub hint: Option<String>,
    /// New type-specific JSON text.
    pub field_data: Option<String>,
    /// Shown in the user card summary.
    pub display_in_profile_summary: Option<bool>,
    /// Users must fill it in.
    pub required: Option<bool>,
}

fn field_or_missing(
    fields: &[ProfileField],
    id: ProfileFieldId,
) -> Result<ProfileField, RequestError> {
    fields
        .iter()
        .find(|f| f.id == id)
        .cloned()
        .ok_or_else(|| RequestError::bad_request(format!("Field id {id} not found.")))
}

/// `PATCH /realm/profile_fields/{field_id}`: administrators edit a definition; everyone gets
/// `custom_profile_fields`.
pub async fn update_profile_field(
    ctx: &Context,
    caller: &User,
    id: ProfileFieldId,
    request: UpdateProfileField,
) -> ActionResult<()> {
    check_is_admin(caller)?;
    ctx.write(move |conn, events| {
        let fields = profile_fields::all(conn)?;
        let field = field_or_missing(&fields, id)?;
        let hint = request.hint.unwrap_or(field.hint.clone());
        let name = check_name_and_hint(request.name.as_deref().unwrap_or(&field.name), &hint)?;
        let field_data = request.field_data.unwrap_or(field.field_data.clone());
        check_field_data(field.field_type, &field_data)?;
        let summary = request
            .display_in_profile_summary
            .unwrap_or(field.display_in_profile_summary);
        if summary && !field.display_in_profile_summary {
            check_summary_limit(&fields, Some(id))?;
        }
        let change = FieldChange {
            name,
            hint,
            field_data,
            display_in_profile_summary: summary,
            required: request.required.unwrap_or(field.required),
        };
        match profile_fields::update(conn, id, &change) {
            Err(StorageError::UniqueViolation(_)) => return Err(name_taken()),
            other => other?,
        }
        events.push(profile_fields_changed(conn)?);
        Ok(())
    })
    .await
}

/// `DELETE /realm/profile_fields/{field_id}`: administrators remove a field and its values.
pub async fn delete_profile_field(
    ctx: &Context,
    caller: &User,
    id: ProfileFieldId,
) -> ActionResult<()> {
    check_is_admin(caller)?;
    ctx.write(move |conn, events| {
        field_or_missing(&profile_fields::all(conn)?, id)?;
        profile_fields::delete(conn, id)?;
        events.push(profile_fields_changed(conn)?);
        Ok(())
    })
    .await
}

/// `PATCH /realm/profile_fields`: administrators reorder the fields; `order` must list every
/// field exactly once.
pub async fn reorder_profile_fields(
    ctx: &Context,
    caller: &User,
    order: Vec<ProfileFieldId>,
) -> ActionResult<()> {
    check_is_admin(caller)?;
    ctx.write(move |conn, events| {
        let fields = profile_fields::all(conn)?;
        let existing: HashSet<ProfileFieldId> = fields.iter().map(|f| f.id).collect();
        let sent: HashSet<ProfileFieldId> = order.iter().copied().collect();
        if existing != sent || sent.len() != order.len() {
            return Err(RequestError::invalid_param("order", "Invalid order mapping.").into());
        }
        profile_fields::set_order(conn, &order)?;
        events.push(profile_fields_changed(conn)?);
        Ok(())
    })
    .await
}

/// Sets or (for a null or empty value) clears some of `target`'s values, checking each against
/// its field's type; changed values send `realm_user` `update` events to those who can access
/// `target`. An unknown field fails the whole change.
pub(crate) fn apply_values(
    conn: &mut DbConn,
    events: &mut Events,
    target: &User,
    entries: Vec<(ProfileFieldId, Option<Value>)>,
) -> ActionResult<()> {
    let fields = profile_fields::all(conn)?;
    let current: HashMap<ProfileFieldId, ProfileValue> =
        profile_fields::values_of(conn, Some(&[target.id]))?
            .into_iter()
            .map(|v| (v.field_id, v))
            .collect();
    let active: HashSet<UserId> = users::all(conn)?
        .into_iter()
        .filter(|u| u.is_active)
        .map(|u| u.id)
        .collect();
    let mut checked = Vec::new();
    for (field_id, value) in entries {
        let field = fields.iter().find(|f| f.id == field_id).ok_or_else(|| {
            RequestError::invalid_param("data", format!("Field id {field_id} not found."))
        })?;
        let empty = match &value {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            Some(_) => false,
        };
        let text = match value {
            Some(v) if !empty => Some(check_value(field, &v, |u| active.contains(&u))?),
            _ => None,
        };
        checked.push((field.clone(), text));
    }
    for (field, text) in checked {
        match text {
            None => {
                if profile_fields::delete_value(conn, target.id, field.id)? {
                    events.push(profile_value_changed(conn, target, field.id, None, None)?);
                }
            }
            Some(value) => {
                let markdown = ProfileFieldType::from_code(field.field_type)
                    .is_some_and(ProfileFieldType::is_markdown);
                let rendered_value = markdown.then(|| parley_markdown::render(&value));
                let new = ProfileValue {
                    user_id: target.id,
                    field_id: field.id,
                    value,
                    rendered_value,
                };
                if current.get(&field.id) == Some(&new) {
                    continue;
                }
                profile_fields::set_value(conn, &new)?;
                events.push(profile_value_changed(
                    conn,
                    target,
                    field.id,
                    Some(&new.value),
                    new.rendered_value.as_deref(),
                )?);
            }
        }
    }
    Ok(())
}

/// `PATCH /users/me/profile_data`: sets (or, with an empty value, clears) some of the caller's
/// own values in one transaction.
pub async fn do_set_profile_values(
    ctx: &Context,
    user: User,
    values: Vec<(ProfileFieldId, Option<Value>)>,
) -> ActionResult<()> {
    ctx.write(move |conn, events| apply_values(conn, events, &user, values))
        .await
}

/// `DELETE /users/me/profile_data`: clears the caller's values of these fields.
pub async fn do_clear_profile_values(
    ctx: &Context,
    user: User,
    fields: Vec<ProfileFieldId>,
) -> ActionResult<()> {
    let entries = fields.into_iter().map(|id| (id, None)).collect();
    ctx.write(move |conn, events| apply_values(conn, events, &user, entries))
        .await
}

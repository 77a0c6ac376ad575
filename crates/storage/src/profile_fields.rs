//! Custom profile field definitions and each user's values.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{custom_profile_field_values as values, custom_profile_fields as fields};
use diesel::prelude::*;
use parley_domain::profile_field::ProfileField;
use parley_domain::{ProfileFieldId, UserId};

/// A new field definition.
#[derive(Debug, Clone)]
pub struct NewProfileField {
    /// Name, unique in the organization.
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

/// One user's value of one field.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileValue {
    /// Whose value.
    pub user_id: UserId,
    /// Which field.
    pub field_id: ProfileFieldId,
    /// The raw value.
    pub value: String,
    /// HTML, for Markdown-capable field types.
    pub rendered_value: Option<String>,
}

/// Every field definition in display order.
pub fn all(conn: &mut DbConn) -> Result<Vec<ProfileField>, StorageError> {
    let rows = fields::table
        .order((fields::sort_order, fields::id))
        .select((
            fields::id,
            fields::field_type,
            fields::sort_order,
            fields::name,
            fields::hint,
            fields::field_data,
            fields::display_in_profile_summary,
            fields::required,
        ))
        .load::<(i64, i64, i64, String, String, String, bool, bool)>(conn)?;
    Ok(rows
        .into_iter()
        .map(
            |(id, field_type, order, name, hint, field_data, summary, required)| ProfileField {
                id: ProfileFieldId(id),
                field_type,
                order,
                name,
                hint,
                field_data,
                display_in_profile_summary: summary,
                required,
            },
        )
        .collect())
}

/// Adds a field at the end of the display order; a taken name is a unique violation.
pub fn insert(conn: &mut DbConn, new: &NewProfileField) -> Result<ProfileFieldId, StorageError> {
    let next_order: Option<i64> = fields::table
        .select(diesel::dsl::max(fields::sort_order))
        .first(conn)?;
    let id = diesel::insert_into(fields::table)
        .values((
            fields::name.eq(&new.name),
            fields::hint.eq(&new.hint),
            fields::field_type.eq(new.field_type),
            fields::field_data.eq(&new.field_data),
            fields::display_in_profile_summary.eq(new.display_in_profile_summary),
            fields::required.eq(new.required),
            fields::sort_order.eq(next_order.map_or(0, |o| o + 1)),
        ))
        .returning(fields::id)
        .get_result::<i64>(conn)?;
    Ok(ProfileFieldId(id))
}

/// Sets (or replaces) a user's value of a field.
pub fn set_value(conn: &mut DbConn, value: &ProfileValue) -> Result<(), StorageError> {
    diesel::delete(
        values::table
            .filter(values::user_id.eq(value.user_id.0))
            .filter(values::field_id.eq(value.field_id.0)),
    )
    .execute(conn)?;
    diesel::insert_into(values::table)
        .values((
            values::user_id.eq(value.user_id.0),
            values::field_id.eq(value.field_id.0),
            values::value.eq(&value.value),
            values::rendered_value.eq(&value.rendered_value),
        ))
        .execute(conn)?;
    Ok(())
}

/// The values of these users (all users when `user_ids` is None).
pub fn values_of(
    conn: &mut DbConn,
    user_ids: Option<&[UserId]>,
) -> Result<Vec<ProfileValue>, StorageError> {
    let mut query = values::table
        .select((
            values::user_id,
            values::field_id,
            values::value,
            values::rendered_value,
        ))
        .order((values::user_id, values::field_id))
        .into_boxed();
    if let Some(ids) = user_ids {
        query = query.filter(values::user_id.eq_any(ids.iter().map(|id| id.0).collect::<Vec<_>>()));
    }
    Ok(query
        .load::<(i64, i64, String, Option<String>)>(conn)?
        .into_iter()
        .map(|(user_id, field_id, value, rendered_value)| ProfileValue {
            user_id: UserId(user_id),
            field_id: ProfileFieldId(field_id),
            value,
            rendered_value,
        })
        .collect())
}

/// The changeable parts of a field definition.
#[derive(Debug, Clone)]
pub struct FieldChange {
    /// Name.
    pub name: String,
    /// Help text.
    pub hint: String,
    /// Type-specific JSON text.
    pub field_data: String,
    /// Shown in the user card summary.
    pub display_in_profile_summary: bool,
    /// Users must fill it in.
    pub required: bool,
}

/// Rewrites a field definition; a taken name is a unique violation.
pub fn update(
    conn: &mut DbConn,
    id: ProfileFieldId,
    change: &FieldChange,
) -> Result<(), StorageError> {
    diesel::update(fields::table.find(id.0))
        .set((
            fields::name.eq(&change.name),
            fields::hint.eq(&change.hint),
            fields::field_data.eq(&change.field_data),
            fields::display_in_profile_summary.eq(change.display_in_profile_summary),
            fields::required.eq(change.required),
        ))
        .execute(conn)?;
    Ok(())
}

/// Deletes a field definition and every value of it.
pub fn delete(conn: &mut DbConn, id: ProfileFieldId) -> Result<(), StorageError> {
    diesel::delete(values::table.filter(values::field_id.eq(id.0))).execute(conn)?;
    diesel::delete(fields::table.find(id.0)).execute(conn)?;
    Ok(())
}

/// Sets the display order: `order[i]` gets position `i`.
pub fn set_order(conn: &mut DbConn, order: &[ProfileFieldId]) -> Result<(), StorageError> {
    for (position, id) in order.iter().enumerate() {
        diesel::update(fields::table.find(id.0))
            .set(fields::sort_order.eq(position as i64))
            .execute(conn)?;
    }
    Ok(())
}

/// Removes a user's value of a field; whether there was one.
pub fn delete_value(
    conn: &mut DbConn,
    user: UserId,
    field: ProfileFieldId,
) -> Result<bool, StorageError> {
    let n = diesel::delete(
        values::table
            .filter(values::user_id.eq(user.0))
            .filter(values::field_id.eq(field.0)),
    )
    .execute(conn)?;
    Ok(n > 0)
}

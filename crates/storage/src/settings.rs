//! Stored personal settings and the organization's defaults for new users: only values that
//! were set, as JSON text by name; the registry in `parley_domain::settings` supplies the rest.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{realm_user_defaults, user_settings};
use diesel::prelude::*;
use parley_domain::UserId;
use std::collections::HashMap;

/// Stored values of these users, by user then name.
pub fn of_users(
    conn: &mut DbConn,
    users: &[UserId],
) -> Result<HashMap<UserId, HashMap<String, String>>, StorageError> {
    let ids: Vec<i64> = users.iter().map(|u| u.0).collect();
    let mut out: HashMap<UserId, HashMap<String, String>> = HashMap::new();
    for chunk in ids.chunks(500) {
        let rows: Vec<(i64, String, String)> = user_settings::table
            .filter(user_settings::user_id.eq_any(chunk))
            .select((
                user_settings::user_id,
                user_settings::name,
                user_settings::value,
            ))
            .load(conn)?;
        for (user, name, value) in rows {
            out.entry(UserId(user)).or_default().insert(name, value);
        }
    }
    Ok(out)
}

/// Stores one value of a user.
pub fn set(conn: &mut DbConn, user: UserId, name: &str, value: &str) -> Result<(), StorageError> {
    diesel::delete(
        user_settings::table
            .filter(user_settings::user_id.eq(user.0))
            .filter(user_settings::name.eq(name)),
    )
    .execute(conn)?;
    diesel::insert_into(user_settings::table)
        .values((
            user_settings::user_id.eq(user.0),
            user_settings::name.eq(name),
            user_settings::value.eq(value),
        ))
        .execute(conn)?;
    Ok(())
}

/// The organization's stored defaults for new users.
pub fn realm_defaults(conn: &mut DbConn) -> Result<HashMap<String, String>, StorageError> {
    Ok(realm_user_defaults::table
        .select((realm_user_defaults::name, realm_user_defaults::value))
        .load::<(String, String)>(conn)?
        .into_iter()
        .collect())
}

/// Stores one organization default.
pub fn set_realm_default(conn: &mut DbConn, name: &str, value: &str) -> Result<(), StorageError> {
    diesel::delete(realm_user_defaults::table.filter(realm_user_defaults::name.eq(name)))
        .execute(conn)?;
    diesel::insert_into(realm_user_defaults::table)
        .values((
            realm_user_defaults::name.eq(name),
            realm_user_defaults::value.eq(value),
        ))
        .execute(conn)?;
    Ok(())
}

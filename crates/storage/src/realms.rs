//! The organization row: one per deployment.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{realm_permissions, realms};
use diesel::prelude::*;
use parley_domain::realm::Realm;
use std::collections::HashMap;

#[derive(Queryable, Selectable)]
#[diesel(table_name = realms)]
struct RealmRow {
    id: i64,
    name: String,
    description: String,
    deactivated: bool,
    enable_spectator_access: bool,
    date_created: i64,
}

impl From<RealmRow> for Realm {
    fn from(row: RealmRow) -> Realm {
        Realm {
            id: row.id,
            name: row.name,
            description: row.description,
            deactivated: row.deactivated,
            enable_spectator_access: row.enable_spectator_access,
            date_created: row.date_created,
        }
    }
}

/// The organization, if it has been created.
pub fn get(conn: &mut DbConn) -> Result<Option<Realm>, StorageError> {
    Ok(realms::table
        .order(realms::id)
        .select(RealmRow::as_select())
        .get_result(conn)
        .optional()?
        .map(Realm::from))
}

/// Creates the organization.
pub fn create(
    conn: &mut DbConn,
    name: &str,
    description: &str,
    now: i64,
) -> Result<Realm, StorageError> {
    let id = diesel::insert_into(realms::table)
        .values((
            realms::name.eq(name),
            realms::description.eq(description),
            realms::date_created.eq(now),
        ))
        .returning(realms::id)
        .get_result::<i64>(conn)?;
    Ok(Realm {
        id,
        name: name.to_owned(),
        description: description.to_owned(),
        deactivated: false,
        enable_spectator_access: false,
        date_created: now,
    })
}

/// The URL the server was last started at, if it has been recorded.
pub fn server_url(conn: &mut DbConn) -> Result<Option<String>, StorageError> {
    Ok(realms::table
        .order(realms::id)
        .select(realms::server_url)
        .first::<Option<String>>(conn)
        .optional()?
        .flatten())
}

/// Records the URL the server is serving at.
pub fn set_server_url(conn: &mut DbConn, url: &str) -> Result<(), StorageError> {
    diesel::update(realms::table)
        .set(realms::server_url.eq(url))
        .execute(conn)?;
    Ok(())
}

/// The key that signs temporary upload URLs: the stored one, or `generated` stored now when
/// there is none yet (the first writer wins, so concurrent callers agree).
pub fn url_signing_key(conn: &mut DbConn, generated: &str) -> Result<String, StorageError> {
    diesel::update(realms::table.filter(realms::url_signing_key.is_null()))
        .set(realms::url_signing_key.eq(generated))
        .execute(conn)?;
    Ok(realms::table
        .order(realms::id)
        .select(realms::url_signing_key)
        .first::<Option<String>>(conn)
        .optional()?
        .flatten()
        .unwrap_or_else(|| generated.to_owned()))
}

/// The stored key that signs temporary upload URLs, if there is one yet.
pub fn stored_url_signing_key(conn: &mut DbConn) -> Result<Option<String>, StorageError> {
    Ok(realms::table
        .order(realms::id)
        .select(realms::url_signing_key)
        .first::<Option<String>>(conn)
        .optional()?
        .flatten())
}

/// Renames the organization.
pub fn set_name(conn: &mut DbConn, name: &str) -> Result<(), StorageError> {
    diesel::update(realms::table)
        .set(realms::name.eq(name))
        .execute(conn)?;
    Ok(())
}

/// Turns public (spectator) access to web-public channels on or off.
pub fn set_spectator_access(conn: &mut DbConn, enabled: bool) -> Result<(), StorageError> {
    diesel::update(realms::table)
        .set(realms::enable_spectator_access.eq(enabled))
        .execute(conn)?;
    Ok(())
}

/// Every stored organization permission and limit, by name (values are JSON text).
pub fn permissions(conn: &mut DbConn) -> Result<HashMap<String, String>, StorageError> {
    Ok(realm_permissions::table
        .select((realm_permissions::name, realm_permissions::value))
        .load::<(String, String)>(conn)?
        .into_iter()
        .collect())
}

/// Stores one organization permission or limit.
pub fn set_permission(conn: &mut DbConn, name: &str, value: &str) -> Result<(), StorageError> {
    diesel::delete(realm_permissions::table.find(name)).execute(conn)?;
    diesel::insert_into(realm_permissions::table)
        .values((
            realm_permissions::name.eq(name),
            realm_permissions::value.eq(value),
        ))
        .execute(conn)?;
    Ok(())
}

/// Changes the organization's (Markdown) description.
pub fn set_description(conn: &mut DbConn, description: &str) -> Result<(), StorageError> {
    diesel::update(realms::table)
        .set(realms::description.eq(description))
        .execute(conn)?;
    Ok(())
}

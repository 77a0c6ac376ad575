//! The organization's code playgrounds: where a code block of a given language can be opened.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::realm_playgrounds;
use diesel::prelude::*;

/// A code playground as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct Playground {
    /// Its ID.
    pub id: i64,
    /// The name users pick it by.
    pub name: String,
    /// The Pygments language of the code blocks it serves.
    pub pygments_language: String,
    /// The RFC 6570 URL template with the one variable `code`.
    pub url_template: String,
}

type Columns = (
    realm_playgrounds::id,
    realm_playgrounds::name,
    realm_playgrounds::pygments_language,
    realm_playgrounds::url_template,
);

const COLUMNS: Columns = (
    realm_playgrounds::id,
    realm_playgrounds::name,
    realm_playgrounds::pygments_language,
    realm_playgrounds::url_template,
);

/// Every playground, oldest first.
pub fn all(conn: &mut DbConn) -> Result<Vec<Playground>, StorageError> {
    Ok(realm_playgrounds::table
        .order(realm_playgrounds::id)
        .select(COLUMNS)
        .load(conn)?)
}

/// Stores a new playground; returns its ID. A language and name pair that is already used is a
/// [`StorageError::UniqueViolation`].
pub fn insert(
    conn: &mut DbConn,
    name: &str,
    pygments_language: &str,
    url_template: &str,
) -> Result<i64, StorageError> {
    Ok(diesel::insert_into(realm_playgrounds::table)
        .values((
            realm_playgrounds::name.eq(name),
            realm_playgrounds::pygments_language.eq(pygments_language),
            realm_playgrounds::url_template.eq(url_template),
        ))
        .returning(realm_playgrounds::id)
        .get_result(conn)?)
}

/// Deletes a playground; false when there was no such playground.
pub fn delete(conn: &mut DbConn, id: i64) -> Result<bool, StorageError> {
    let deleted = diesel::delete(realm_playgrounds::table.filter(realm_playgrounds::id.eq(id)))
        .execute(conn)?;
    Ok(deleted > 0)
}

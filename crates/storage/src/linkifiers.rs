//! The organization's linkifiers: patterns whose matches in messages and topics become links,
//! applied in `sort_order` (then ID) order.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::linkifiers;
use diesel::prelude::*;

/// A linkifier as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct Linkifier {
    /// Its ID.
    pub id: i64,
    /// The regular expression (named groups feed the template).
    pub pattern: String,
    /// The RFC 6570 URL template.
    pub url_template: String,
    /// Position in the processing order; ties fall back to the ID.
    pub sort_order: i64,
}

type Columns = (
    linkifiers::id,
    linkifiers::pattern,
    linkifiers::url_template,
    linkifiers::sort_order,
);

const COLUMNS: Columns = (
    linkifiers::id,
    linkifiers::pattern,
    linkifiers::url_template,
    linkifiers::sort_order,
);

/// Every linkifier in processing order.
pub fn all(conn: &mut DbConn) -> Result<Vec<Linkifier>, StorageError> {
    Ok(linkifiers::table
        .order((linkifiers::sort_order, linkifiers::id))
        .select(COLUMNS)
        .load(conn)?)
}

/// One linkifier, if it exists.
pub fn get(conn: &mut DbConn, id: i64) -> Result<Option<Linkifier>, StorageError> {
    Ok(linkifiers::table
        .filter(linkifiers::id.eq(id))
        .select(COLUMNS)
        .first(conn)
        .optional()?)
}

/// Stores a new linkifier after every existing one; returns its ID. A pattern that is already
/// used is a [`StorageError::UniqueViolation`].
pub fn insert(conn: &mut DbConn, pattern: &str, url_template: &str) -> Result<i64, StorageError> {
    let last: Option<i64> = linkifiers::table
        .select(diesel::dsl::max(linkifiers::sort_order))
        .first(conn)?;
    Ok(diesel::insert_into(linkifiers::table)
        .values((
            linkifiers::pattern.eq(pattern),
            linkifiers::url_template.eq(url_template),
            linkifiers::sort_order.eq(last.map_or(0, |l| l + 1)),
        ))
        .returning(linkifiers::id)
        .get_result(conn)?)
}

/// Replaces a linkifier's pattern and template; false when there is no such linkifier.
pub fn update(
    conn: &mut DbConn,
    id: i64,
    pattern: &str,
    url_template: &str,
) -> Result<bool, StorageError> {
    let changed = diesel::update(linkifiers::table.filter(linkifiers::id.eq(id)))
        .set((
            linkifiers::pattern.eq(pattern),
            linkifiers::url_template.eq(url_template),
        ))
        .execute(conn)?;
    Ok(changed > 0)
}

/// Gives each listed linkifier its position in `ordered_ids` as its order.
pub fn reorder(conn: &mut DbConn, ordered_ids: &[i64]) -> Result<(), StorageError> {
    for (position, id) in ordered_ids.iter().enumerate() {
        diesel::update(linkifiers::table.filter(linkifiers::id.eq(*id)))
            .set(linkifiers::sort_order.eq(position as i64))
            .execute(conn)?;
    }
    Ok(())
}

/// Deletes a linkifier; false when there was no such linkifier.
pub fn delete(conn: &mut DbConn, id: i64) -> Result<bool, StorageError> {
    let deleted = diesel::delete(linkifiers::table.filter(linkifiers::id.eq(id))).execute(conn)?;
    Ok(deleted > 0)
}

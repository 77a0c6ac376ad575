//! The organization's custom emoji: name, image file and who added it. Deactivated emoji keep
//! their row, so old messages and reactions still find their image.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::realm_emoji;
use diesel::prelude::*;
use parley_domain::UserId;

/// A custom emoji as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct RealmEmojiRow {
    /// Its ID (also its `emoji_code` in reactions).
    pub id: i64,
    /// Its name, without colons.
    pub name: String,
    /// The image's file name in the organization's emoji folder.
    pub file_name: String,
    /// Whether the image is animated.
    pub is_animated: bool,
    /// Whether it was removed from the picker.
    pub deactivated: bool,
    /// Who added it, when known.
    pub author_id: Option<i64>,
}

type Columns = (
    realm_emoji::id,
    realm_emoji::name,
    realm_emoji::file_name,
    realm_emoji::is_animated,
    realm_emoji::deactivated,
    realm_emoji::author_id,
);

const COLUMNS: Columns = (
    realm_emoji::id,
    realm_emoji::name,
    realm_emoji::file_name,
    realm_emoji::is_animated,
    realm_emoji::deactivated,
    realm_emoji::author_id,
);

/// Every custom emoji, active or not, by ID.
pub fn all(conn: &mut DbConn) -> Result<Vec<RealmEmojiRow>, StorageError> {
    Ok(realm_emoji::table
        .order(realm_emoji::id)
        .select(COLUMNS)
        .load(conn)?)
}

/// The active emoji of this name.
pub fn active_by_name(
    conn: &mut DbConn,
    name: &str,
) -> Result<Option<RealmEmojiRow>, StorageError> {
    Ok(realm_emoji::table
        .filter(realm_emoji::name.eq(name))
        .filter(realm_emoji::deactivated.eq(false))
        .select(COLUMNS)
        .first(conn)
        .optional()?)
}

/// One emoji by ID, active or not.
pub fn by_id(conn: &mut DbConn, id: i64) -> Result<Option<RealmEmojiRow>, StorageError> {
    Ok(realm_emoji::table
        .filter(realm_emoji::id.eq(id))
        .select(COLUMNS)
        .first(conn)
        .optional()?)
}

/// Adds an emoji with a provisional file name; returns its ID.
pub fn insert(
    conn: &mut DbConn,
    name: &str,
    is_animated: bool,
    author: UserId,
) -> Result<i64, StorageError> {
    Ok(diesel::insert_into(realm_emoji::table)
        .values((
            realm_emoji::name.eq(name),
            realm_emoji::file_name.eq(""),
            realm_emoji::is_animated.eq(is_animated),
            realm_emoji::deactivated.eq(false),
            realm_emoji::author_id.eq(Some(author.0)),
        ))
        .returning(realm_emoji::id)
        .get_result(conn)?)
}

/// Sets the image file name of an emoji (known only once its ID is).
pub fn set_file_name(conn: &mut DbConn, id: i64, file_name: &str) -> Result<(), StorageError> {
    diesel::update(realm_emoji::table.filter(realm_emoji::id.eq(id)))
        .set(realm_emoji::file_name.eq(file_name))
        .execute(conn)?;
    Ok(())
}

/// Deactivates an emoji.
pub fn deactivate(conn: &mut DbConn, id: i64) -> Result<(), StorageError> {
    diesel::update(realm_emoji::table.filter(realm_emoji::id.eq(id)))
        .set(realm_emoji::deactivated.eq(true))
        .execute(conn)?;
    Ok(())
}

//! Channel folders: named, ordered groups of channels.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::channel_folders as cf;
use diesel::prelude::*;

/// A channel folder as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = cf)]
pub struct ChannelFolder {
    /// ID.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Markdown description.
    pub description: String,
    /// Its HTML.
    pub rendered_description: String,
    /// Who created it.
    pub creator_id: Option<i64>,
    /// When, Unix seconds.
    pub date_created: i64,
    /// Archived folders hold no channels and are hidden.
    pub is_archived: bool,
    /// Position in the sidebar, from 0.
    pub folder_order: i64,
}

/// Every folder, in the administrators' order.
pub fn all(conn: &mut DbConn) -> Result<Vec<ChannelFolder>, StorageError> {
    Ok(cf::table
        .order((cf::folder_order, cf::id))
        .select(ChannelFolder::as_select())
        .load(conn)?)
}

/// One folder.
pub fn get(conn: &mut DbConn, id: i64) -> Result<Option<ChannelFolder>, StorageError> {
    Ok(cf::table
        .find(id)
        .select(ChannelFolder::as_select())
        .first(conn)
        .optional()?)
}

/// Stores a new folder at the end of the order; returns it.
pub fn insert(
    conn: &mut DbConn,
    name: &str,
    description: &str,
    rendered_description: &str,
    creator: i64,
    now: i64,
) -> Result<ChannelFolder, StorageError> {
    let count: i64 = cf::table.count().get_result(conn)?;
    let id = diesel::insert_into(cf::table)
        .values((
            cf::name.eq(name),
            cf::description.eq(description),
            cf::rendered_description.eq(rendered_description),
            cf::creator_id.eq(creator),
            cf::date_created.eq(now),
            cf::folder_order.eq(count),
        ))
        .returning(cf::id)
        .get_result::<i64>(conn)?;
    get(conn, id)?.ok_or(StorageError::from(diesel::result::Error::NotFound))
}

/// Saves a folder's name, description and archived state.
pub fn update(conn: &mut DbConn, folder: &ChannelFolder) -> Result<(), StorageError> {
    diesel::update(cf::table.find(folder.id))
        .set((
            cf::name.eq(&folder.name),
            cf::description.eq(&folder.description),
            cf::rendered_description.eq(&folder.rendered_description),
            cf::is_archived.eq(folder.is_archived),
        ))
        .execute(conn)?;
    Ok(())
}

/// Puts the folders in this order (every folder's ID, once).
pub fn set_order(conn: &mut DbConn, ids: &[i64]) -> Result<(), StorageError> {
    for (position, id) in ids.iter().enumerate() {
        diesel::update(cf::table.find(id))
            .set(cf::folder_order.eq(position as i64))
            .execute(conn)?;
    }
    Ok(())
}

/// How many unarchived channels are in a folder.
pub fn channel_count(conn: &mut DbConn, id: i64) -> Result<i64, StorageError> {
    use crate::schema::channels;
    Ok(channels::table
        .filter(channels::folder_id.eq(id))
        .filter(channels::is_archived.eq(false))
        .count()
        .get_result(conn)?)
}

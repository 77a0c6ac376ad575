//! People's message drafts, synchronized between their clients. A draft belongs to one person
//! and is only ever read by them.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::drafts;
use diesel::prelude::*;
use parley_domain::UserId;

/// A draft as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct Draft {
    /// Its ID.
    pub id: i64,
    /// Whose.
    pub user_id: i64,
    /// `""` (unaddressed), `"stream"` or `"private"`.
    pub draft_type: String,
    /// The recipients' IDs, comma-separated (see [`join_ids`]).
    pub to_ids: String,
    /// The tentative topic ("" unless a channel draft).
    pub topic: String,
    /// The text.
    pub content: String,
    /// When last edited, Unix seconds.
    pub last_edit_time: i64,
}

impl Draft {
    /// The recipients' IDs.
    pub fn to(&self) -> Vec<i64> {
        self.to_ids
            .split(',')
            .filter_map(|s| s.parse().ok())
            .collect()
    }
}

/// A draft's fields before it is stored (or as it replaces a stored one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftFields {
    /// `""`, `"stream"` or `"private"`.
    pub draft_type: String,
    /// The recipients' IDs.
    pub to: Vec<i64>,
    /// The tentative topic.
    pub topic: String,
    /// The text.
    pub content: String,
    /// When last edited, Unix seconds.
    pub last_edit_time: i64,
}

/// IDs as the `to_ids` column holds them.
pub fn join_ids(ids: &[i64]) -> String {
    ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

type Columns = (
    drafts::id,
    drafts::user_id,
    drafts::draft_type,
    drafts::to_ids,
    drafts::topic,
    drafts::content,
    drafts::last_edit_time,
);

const COLUMNS: Columns = (
    drafts::id,
    drafts::user_id,
    drafts::draft_type,
    drafts::to_ids,
    drafts::topic,
    drafts::content,
    drafts::last_edit_time,
);

/// Stores a new draft of `user`; returns it with its ID.
pub fn insert(conn: &mut DbConn, user: UserId, new: &DraftFields) -> Result<Draft, StorageError> {
    Ok(diesel::insert_into(drafts::table)
        .values((
            drafts::user_id.eq(user.0),
            drafts::draft_type.eq(&new.draft_type),
            drafts::to_ids.eq(join_ids(&new.to)),
            drafts::topic.eq(&new.topic),
            drafts::content.eq(&new.content),
            drafts::last_edit_time.eq(new.last_edit_time),
        ))
        .returning(COLUMNS)
        .get_result(conn)?)
}

/// One draft of `user`, if it exists and is theirs.
pub fn get(conn: &mut DbConn, user: UserId, id: i64) -> Result<Option<Draft>, StorageError> {
    Ok(drafts::table
        .filter(drafts::id.eq(id))
        .filter(drafts::user_id.eq(user.0))
        .select(COLUMNS)
        .first(conn)
        .optional()?)
}

/// The drafts of `user` by last edit, oldest first (`newest_first` reverses), at most `limit`.
pub fn of_user(
    conn: &mut DbConn,
    user: UserId,
    newest_first: bool,
    limit: i64,
) -> Result<Vec<Draft>, StorageError> {
    let query = drafts::table
        .filter(drafts::user_id.eq(user.0))
        .select(COLUMNS)
        .limit(limit);
    Ok(if newest_first {
        query
            .order((drafts::last_edit_time.desc(), drafts::id.desc()))
            .load(conn)?
    } else {
        query
            .order((drafts::last_edit_time, drafts::id))
            .load(conn)?
    })
}

/// Replaces the fields of a draft of `user`; false when there is no such draft.
pub fn update(
    conn: &mut DbConn,
    user: UserId,
    id: i64,
    fields: &DraftFields,
) -> Result<bool, StorageError> {
    let changed = diesel::update(
        drafts::table
            .filter(drafts::id.eq(id))
            .filter(drafts::user_id.eq(user.0)),
    )
    .set((
        drafts::draft_type.eq(&fields.draft_type),
        drafts::to_ids.eq(join_ids(&fields.to)),
        drafts::topic.eq(&fields.topic),
        drafts::content.eq(&fields.content),
        drafts::last_edit_time.eq(fields.last_edit_time),
    ))
    .execute(conn)?;
    Ok(changed > 0)
}

/// Deletes a draft of `user`; false when there was no such draft.
pub fn delete(conn: &mut DbConn, user: UserId, id: i64) -> Result<bool, StorageError> {
    let deleted = diesel::delete(
        drafts::table
            .filter(drafts::id.eq(id))
            .filter(drafts::user_id.eq(user.0)),
    )
    .execute(conn)?;
    Ok(deleted > 0)
}

/// Deletes every draft of `user`; returns how many there were.
pub fn delete_all(conn: &mut DbConn, user: UserId) -> Result<usize, StorageError> {
    Ok(diesel::delete(drafts::table.filter(drafts::user_id.eq(user.0))).execute(conn)?)
}

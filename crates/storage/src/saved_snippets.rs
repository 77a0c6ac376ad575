//! People's saved snippets: titled message text they insert into messages they compose.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::saved_snippets;
use diesel::prelude::*;
use parley_domain::UserId;

/// A saved snippet as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct SavedSnippet {
    /// Its ID.
    pub id: i64,
    /// Whose.
    pub user_id: i64,
    /// The title.
    pub title: String,
    /// The Markdown text.
    pub content: String,
    /// When created, Unix seconds.
    pub date_created: i64,
}

type Columns = (
    saved_snippets::id,
    saved_snippets::user_id,
    saved_snippets::title,
    saved_snippets::content,
    saved_snippets::date_created,
);

const COLUMNS: Columns = (
    saved_snippets::id,
    saved_snippets::user_id,
    saved_snippets::title,
    saved_snippets::content,
    saved_snippets::date_created,
);

/// Stores a new snippet of `user`; returns it with its ID.
pub fn insert(
    conn: &mut DbConn,
    user: UserId,
    title: &str,
    content: &str,
    now: i64,
) -> Result<SavedSnippet, StorageError> {
    Ok(diesel::insert_into(saved_snippets::table)
        .values((
            saved_snippets::user_id.eq(user.0),
            saved_snippets::title.eq(title),
            saved_snippets::content.eq(content),
            saved_snippets::date_created.eq(now),
        ))
        .returning(COLUMNS)
        .get_result(conn)?)
}

/// One snippet of `user`, if it exists and is theirs.
pub fn get(conn: &mut DbConn, user: UserId, id: i64) -> Result<Option<SavedSnippet>, StorageError> {
    Ok(saved_snippets::table
        .filter(saved_snippets::id.eq(id))
        .filter(saved_snippets::user_id.eq(user.0))
        .select(COLUMNS)
        .first(conn)
        .optional()?)
}

/// Every snippet of `user`, oldest first.
pub fn of_user(conn: &mut DbConn, user: UserId) -> Result<Vec<SavedSnippet>, StorageError> {
    Ok(saved_snippets::table
        .filter(saved_snippets::user_id.eq(user.0))
        .order(saved_snippets::id)
        .select(COLUMNS)
        .load(conn)?)
}

/// Replaces the title and content of a snippet of `user`.
pub fn update(
    conn: &mut DbConn,
    user: UserId,
    id: i64,
    title: &str,
    content: &str,
) -> Result<bool, StorageError> {
    let changed = diesel::update(
        saved_snippets::table
            .filter(saved_snippets::id.eq(id))
            .filter(saved_snippets::user_id.eq(user.0)),
    )
    .set((
        saved_snippets::title.eq(title),
        saved_snippets::content.eq(content),
    ))
    .execute(conn)?;
    Ok(changed > 0)
}

/// Deletes a snippet of `user`; false when there was no such snippet.
pub fn delete(conn: &mut DbConn, user: UserId, id: i64) -> Result<bool, StorageError> {
    let deleted = diesel::delete(
        saved_snippets::table
            .filter(saved_snippets::id.eq(id))
            .filter(saved_snippets::user_id.eq(user.0)),
    )
    .execute(conn)?;
    Ok(deleted > 0)
}

//! People's statuses: a short text and an emoji, one row per person who ever set one.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{user_status, users};
use diesel::prelude::*;
use parley_domain::UserId;

/// The emoji namespace a cleared emoji is stored with, as in the reference.
pub const DEFAULT_REACTION_TYPE: &str = "unicode_emoji";

/// One person's stored status. Empty strings mean "not set".
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct UserStatus {
    /// Whose.
    pub user_id: i64,
    /// The text; empty when cleared.
    pub status_text: String,
    /// The emoji's name; empty when no emoji is set.
    pub emoji_name: String,
    /// The emoji's code within `reaction_type`.
    pub emoji_code: String,
    /// The emoji's namespace.
    pub reaction_type: String,
    /// When it last changed, Unix seconds.
    pub last_updated: i64,
}

impl UserStatus {
    /// Whether nothing is set (a row left behind by clearing both parts).
    pub fn is_empty(&self) -> bool {
        self.status_text.is_empty() && self.emoji_name.is_empty() && self.emoji_code.is_empty()
    }
}

/// What a change sets; `None` leaves that part as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusUpdate {
    /// New text ("" clears it).
    pub status_text: Option<String>,
    /// New emoji: name, code, namespace (all empty-name = cleared).
    pub emoji: Option<(String, String, String)>,
}

type Columns = (
    user_status::user_id,
    user_status::status_text,
    user_status::emoji_name,
    user_status::emoji_code,
    user_status::reaction_type,
    user_status::last_updated,
);

const COLUMNS: Columns = (
    user_status::user_id,
    user_status::status_text,
    user_status::emoji_name,
    user_status::emoji_code,
    user_status::reaction_type,
    user_status::last_updated,
);

/// One person's status row, if they ever set one.
pub fn get(conn: &mut DbConn, user: UserId) -> Result<Option<UserStatus>, StorageError> {
    Ok(user_status::table
        .find(user.0)
        .select(COLUMNS)
        .first(conn)
        .optional()?)
}

/// The statuses of active people that have something set, by user ID.
pub fn all_active(conn: &mut DbConn) -> Result<Vec<UserStatus>, StorageError> {
    let rows: Vec<UserStatus> = user_status::table
        .inner_join(users::table.on(users::id.eq(user_status::user_id)))
        .filter(users::is_active.eq(true))
        .order(user_status::user_id)
        .select(COLUMNS)
        .load(conn)?;
    Ok(rows.into_iter().filter(|s| !s.is_empty()).collect())
}

/// Applies a change, creating the row on first use.
pub fn update(
    conn: &mut DbConn,
    user: UserId,
    change: &StatusUpdate,
    now: i64,
) -> Result<(), StorageError> {
    let existing = get(conn, user)?;
    let exists = existing.is_some();
    let mut row = existing.unwrap_or_else(|| UserStatus {
        user_id: user.0,
        status_text: String::new(),
        emoji_name: String::new(),
        emoji_code: String::new(),
        reaction_type: DEFAULT_REACTION_TYPE.to_owned(),
        last_updated: now,
    });
    if let Some(text) = &change.status_text {
        row.status_text = text.clone();
    }
    if let Some((name, code, kind)) = &change.emoji {
        row.emoji_name = name.clone();
        row.emoji_code = code.clone();
        row.reaction_type = kind.clone();
    }
    let values = (
        user_status::status_text.eq(&row.status_text),
        user_status::emoji_name.eq(&row.emoji_name),
        user_status::emoji_code.eq(&row.emoji_code),
        user_status::reaction_type.eq(&row.reaction_type),
        user_status::last_updated.eq(now),
    );
    if exists {
        diesel::update(user_status::table.find(user.0))
            .set(values)
            .execute(conn)?;
    } else {
        diesel::insert_into(user_status::table)
            .values((user_status::user_id.eq(user.0), values))
            .execute(conn)?;
    }
    Ok(())
}

//! Browser sessions: one row per signed-in browser, found by the SHA-256 of its cookie's token.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::sessions;
use diesel::prelude::*;
use parley_domain::UserId;

/// A stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// SHA-256 of the cookie's token, hex: the session's key.
    pub token_hash: String,
    /// Whose session it is.
    pub user_id: UserId,
    /// The token state-changing requests of this session must carry (`X-CSRFToken`).
    pub csrf_token: String,
    /// When it was made (Unix seconds).
    pub created: i64,
    /// When it was last used, to the precision the caller chose to record.
    pub last_used: i64,
    /// When it stops working.
    pub expires: i64,
}

type Row = (String, i64, String, i64, i64, i64);

fn from_row((token_hash, user_id, csrf_token, created, last_used, expires): Row) -> Session {
    Session {
        token_hash,
        user_id: UserId(user_id),
        csrf_token,
        created,
        last_used,
        expires,
    }
}

/// Stores a new session.
pub fn insert(conn: &mut DbConn, session: &Session) -> Result<(), StorageError> {
    diesel::insert_into(sessions::table)
        .values((
            sessions::token_hash.eq(&session.token_hash),
            sessions::user_id.eq(session.user_id.0),
            sessions::csrf_token.eq(&session.csrf_token),
            sessions::created.eq(session.created),
            sessions::last_used.eq(session.last_used),
            sessions::expires.eq(session.expires),
        ))
        .execute(conn)?;
    Ok(())
}

/// The session with this key, expired or not.
pub fn by_hash(conn: &mut DbConn, token_hash: &str) -> Result<Option<Session>, StorageError> {
    Ok(sessions::table
        .find(token_hash)
        .select((
            sessions::token_hash,
            sessions::user_id,
            sessions::csrf_token,
            sessions::created,
            sessions::last_used,
            sessions::expires,
        ))
        .first::<Row>(conn)
        .optional()?
        .map(from_row))
}

/// Records a use of the session.
pub fn touch(conn: &mut DbConn, token_hash: &str, now: i64) -> Result<(), StorageError> {
    diesel::update(sessions::table.find(token_hash))
        .set(sessions::last_used.eq(now))
        .execute(conn)?;
    Ok(())
}

/// Ends one session; whether it existed.
pub fn delete(conn: &mut DbConn, token_hash: &str) -> Result<bool, StorageError> {
    Ok(diesel::delete(sessions::table.find(token_hash)).execute(conn)? > 0)
}

/// Ends every session of `user` except `keep` (the one making a change that ends the others);
/// how many ended.
pub fn delete_for_user(
    conn: &mut DbConn,
    user: UserId,
    keep: Option<&str>,
) -> Result<usize, StorageError> {
    let mine = sessions::table.filter(sessions::user_id.eq(user.0));
    Ok(match keep {
        Some(keep) => diesel::delete(mine.filter(sessions::token_hash.ne(keep))).execute(conn)?,
        None => diesel::delete(mine).execute(conn)?,
    })
}

/// Drops the sessions that expired before `now`; how many.
pub fn delete_expired(conn: &mut DbConn, now: i64) -> Result<usize, StorageError> {
    Ok(diesel::delete(sessions::table.filter(sessions::expires.le(now))).execute(conn)?)
}

/// The sessions of `user`, oldest first.
pub fn for_user(conn: &mut DbConn, user: UserId) -> Result<Vec<Session>, StorageError> {
    Ok(sessions::table
        .filter(sessions::user_id.eq(user.0))
        .order(sessions::created.asc())
        .select((
            sessions::token_hash,
            sessions::user_id,
            sessions::csrf_token,
            sessions::created,
            sessions::last_used,
            sessions::expires,
        ))
        .load::<Row>(conn)?
        .into_iter()
        .map(from_row)
        .collect())
}

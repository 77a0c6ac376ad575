//! Whom each person muted, and since when.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::muted_users;
use diesel::prelude::*;
use parley_domain::UserId;

/// A person's mutes as `(muted person, when, Unix seconds)`, oldest first.
pub fn of_user(conn: &mut DbConn, user: UserId) -> Result<Vec<(UserId, i64)>, StorageError> {
    Ok(muted_users::table
        .filter(muted_users::user_id.eq(user.0))
        .order((muted_users::date_muted, muted_users::muted_user_id))
        .select((muted_users::muted_user_id, muted_users::date_muted))
        .load::<(i64, i64)>(conn)?
        .into_iter()
        .map(|(id, when)| (UserId(id), when))
        .collect())
}

/// Whether `user` muted `muted`.
pub fn is_muted(conn: &mut DbConn, user: UserId, muted: UserId) -> Result<bool, StorageError> {
    Ok(muted_users::table
        .find((user.0, muted.0))
        .select(muted_users::date_muted)
        .first::<i64>(conn)
        .optional()?
        .is_some())
}

/// Records a mute. Muting twice is a `UniqueViolation`.
pub fn add(conn: &mut DbConn, user: UserId, muted: UserId, now: i64) -> Result<(), StorageError> {
    diesel::insert_into(muted_users::table)
        .values((
            muted_users::user_id.eq(user.0),
            muted_users::muted_user_id.eq(muted.0),
            muted_users::date_muted.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// Removes a mute; returns whether there was one.
pub fn remove(conn: &mut DbConn, user: UserId, muted: UserId) -> Result<bool, StorageError> {
    let removed = diesel::delete(muted_users::table.find((user.0, muted.0))).execute(conn)?;
    Ok(removed > 0)
}

/// Every mute of the organization as `(muter, muted)`: few, read whole by the organization
/// cache so that a send need not ask who muted its sender.
pub fn all(conn: &mut DbConn) -> Result<Vec<(UserId, UserId)>, StorageError> {
    Ok(muted_users::table
        .select((muted_users::user_id, muted_users::muted_user_id))
        .load::<(i64, i64)>(conn)?
        .into_iter()
        .map(|(user, muted)| (UserId(user), UserId(muted)))
        .collect())
}

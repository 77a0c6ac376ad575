//! Pending email address changes, confirmed by a mailed link.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{email_changes, users};
use diesel::prelude::*;
use parley_domain::UserId;

/// Records a pending change (replacing the user's earlier pending one).
pub fn create(
    conn: &mut DbConn,
    token: &str,
    user: UserId,
    new_email: &str,
    now: i64,
) -> Result<(), StorageError> {
    diesel::delete(email_changes::table.filter(email_changes::user_id.eq(user.0))).execute(conn)?;
    diesel::insert_into(email_changes::table)
        .values((
            email_changes::token.eq(token),
            email_changes::user_id.eq(user.0),
            email_changes::new_email.eq(new_email),
            email_changes::created.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// Takes a pending change by its token: (user, new address, creation time).
pub fn take(conn: &mut DbConn, token: &str) -> Result<Option<(UserId, String, i64)>, StorageError> {
    let found = email_changes::table
        .find(token)
        .select((
            email_changes::user_id,
            email_changes::new_email,
            email_changes::created,
        ))
        .first::<(i64, String, i64)>(conn)
        .optional()?;
    diesel::delete(email_changes::table.find(token)).execute(conn)?;
    Ok(found.map(|(user, email, created)| (UserId(user), email, created)))
}

/// Changes a user's real address.
pub fn set_delivery_email(
    conn: &mut DbConn,
    user: UserId,
    email: &str,
) -> Result<(), StorageError> {
    diesel::update(users::table.find(user.0))
        .set(users::delivery_email.eq(email))
        .execute(conn)?;
    Ok(())
}

//! Presence rows: per user, the last activity and connection times and the realm-wide
//! `last_update_id` of the row's last change, drawn from the one-row `presence_sequence`.
//!
//! Writers call [`next_update_id`] first: on PostgreSQL its `UPDATE` row-locks the counter until
//! the transaction ends (on SQLite writers are serialised anyway), so presence writes happen one
//! at a time and their IDs commit in increasing order — a client that has seen ID `n` never
//! misses a change committed later with a smaller ID.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{presence_sequence, user_presence};
use diesel::prelude::*;
use parley_domain::presence::PresenceTimes;
use parley_domain::UserId;

/// One user's stored presence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresenceRow {
    /// Whose.
    pub user_id: UserId,
    /// The times.
    pub times: PresenceTimes,
    /// The counter's value when the row last changed.
    pub last_update_id: i64,
}

type Raw = (i64, Option<i64>, i64, i64);

const COLUMNS: (
    user_presence::user_id,
    user_presence::last_active_time,
    user_presence::last_connected_time,
    user_presence::last_update_id,
) = (
    user_presence::user_id,
    user_presence::last_active_time,
    user_presence::last_connected_time,
    user_presence::last_update_id,
);

fn row((user_id, last_active_time, last_connected_time, last_update_id): Raw) -> PresenceRow {
    PresenceRow {
        user_id: UserId(user_id),
        times: PresenceTimes {
            last_active_time,
            last_connected_time,
        },
        last_update_id,
    }
}

/// A user's presence, if they ever reported one.
pub fn of_user(conn: &mut DbConn, user: UserId) -> Result<Option<PresenceRow>, StorageError> {
    Ok(user_presence::table
        .find(user.0)
        .select(COLUMNS)
        .first::<Raw>(conn)
        .optional()?
        .map(row))
}

/// Takes the next `last_update_id`. Call it before reading the row to change: it is what makes
/// presence writers wait for each other (see the module documentation).
pub fn next_update_id(conn: &mut DbConn) -> Result<i64, StorageError> {
    Ok(diesel::update(presence_sequence::table.find(1_i64))
        .set(presence_sequence::last_update_id.eq(presence_sequence::last_update_id + 1_i64))
        .returning(presence_sequence::last_update_id)
        .get_result::<i64>(conn)?)
}

/// Stores a user's presence with this `last_update_id`, creating the row if needed.
pub fn save(
    conn: &mut DbConn,
    user: UserId,
    times: PresenceTimes,
    last_update_id: i64,
) -> Result<(), StorageError> {
    let updated = diesel::update(user_presence::table.find(user.0))
        .set((
            user_presence::last_active_time.eq(times.last_active_time),
            user_presence::last_connected_time.eq(times.last_connected_time),
            user_presence::last_update_id.eq(last_update_id),
        ))
        .execute(conn)?;
    if updated == 0 {
        diesel::insert_into(user_presence::table)
            .values((
                user_presence::user_id.eq(user.0),
                user_presence::last_active_time.eq(times.last_active_time),
                user_presence::last_connected_time.eq(times.last_connected_time),
                user_presence::last_update_id.eq(last_update_id),
            ))
            .execute(conn)?;
    }
    Ok(())
}

/// Which rows a fetch wants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PresenceFilter {
    /// Only rows changed after this `last_update_id`.
    pub after_update_id: Option<i64>,
    /// Only rows whose last connection is at or after this time.
    pub connected_since: Option<i64>,
}

/// The rows matching `filter`, in user ID order.
pub fn fetch(conn: &mut DbConn, filter: PresenceFilter) -> Result<Vec<PresenceRow>, StorageError> {
    let mut query = user_presence::table
        .select(COLUMNS)
        .order(user_presence::user_id)
        .into_boxed();
    if let Some(after) = filter.after_update_id {
        query = query.filter(user_presence::last_update_id.gt(after));
    }
    if let Some(since) = filter.connected_since {
        query = query.filter(user_presence::last_connected_time.ge(since));
    }
    Ok(query.load::<Raw>(conn)?.into_iter().map(row).collect())
}

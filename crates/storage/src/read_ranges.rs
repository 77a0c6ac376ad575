//! Per-(user, channel) read ranges (issue 15): every message of the channel with an ID in
//! `[low, high]` is read by the user. Ranges are kept maximal (two ranges with no message of the
//! channel between them are one), so their number follows the unread messages, not the
//! history, and a new message, above every range, is unread without a write.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{messages, read_ranges as ranges};
use diesel::prelude::*;
use parley_domain::{ChannelId, UserId};

/// The range with the smallest `high` at or above `id`.
fn at_or_above(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    id: i64,
) -> Result<Option<(i64, i64)>, StorageError> {
    Ok(ranges::table
        .filter(ranges::user_id.eq(user.0))
        .filter(ranges::channel_id.eq(channel.0))
        .filter(ranges::high.ge(id))
        .order(ranges::high.asc())
        .select((ranges::low, ranges::high))
        .first(conn)
        .optional()?)
}

/// The range with the largest `high` below `id`.
fn below(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    id: i64,
) -> Result<Option<(i64, i64)>, StorageError> {
    Ok(ranges::table
        .filter(ranges::user_id.eq(user.0))
        .filter(ranges::channel_id.eq(channel.0))
        .filter(ranges::high.lt(id))
        .order(ranges::high.desc())
        .select((ranges::low, ranges::high))
        .first(conn)
        .optional()?)
}

/// The channel's message just before `id`.
fn previous(conn: &mut DbConn, channel: ChannelId, id: i64) -> Result<Option<i64>, StorageError> {
    Ok(messages::table
        .filter(messages::channel_id.eq(channel.0))
        .filter(messages::id.lt(id))
        .select(diesel::dsl::max(messages::id))
        .first(conn)?)
}

/// The channel's message just after `id`.
fn following(conn: &mut DbConn, channel: ChannelId, id: i64) -> Result<Option<i64>, StorageError> {
    Ok(messages::table
        .filter(messages::channel_id.eq(channel.0))
        .filter(messages::id.gt(id))
        .select(diesel::dsl::min(messages::id))
        .first(conn)?)
}

fn delete(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    high: i64,
) -> Result<(), StorageError> {
    diesel::delete(ranges::table.find((user.0, channel.0, high))).execute(conn)?;
    Ok(())
}

fn insert(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    low: i64,
    high: i64,
) -> Result<(), StorageError> {
    diesel::insert_into(ranges::table)
        .values((
            ranges::user_id.eq(user.0),
            ranges::channel_id.eq(channel.0),
            ranges::low.eq(low),
            ranges::high.eq(high),
        ))
        .execute(conn)?;
    Ok(())
}

/// Whether the user's ranges of the channel contain `id`.
pub fn contains(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    id: i64,
) -> Result<bool, StorageError> {
    Ok(at_or_above(conn, user, channel, id)?.is_some_and(|(low, _)| low <= id))
}

/// Marks message `id` of the channel read: adds `[id, id]`, merged with the neighbouring
/// ranges when no message of the channel lies between.
pub fn add(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    id: i64,
) -> Result<(), StorageError> {
    let right = at_or_above(conn, user, channel, id)?;
    if right.is_some_and(|(low, _)| low <= id) {
        return Ok(());
    }
    let left = below(conn, user, channel, id)?;
    let merge_left = match left {
        Some((_, high)) => previous(conn, channel, id)?.is_none_or(|p| p <= high),
        None => false,
    };
    let merge_right = match right {
        Some((low, _)) => following(conn, channel, id)?.is_none_or(|n| n >= low),
        None => false,
    };
    let mut low = id;
    let mut high = id;
    if let (true, Some((l, h))) = (merge_left, left) {
        delete(conn, user, channel, h)?;
        low = l;
    }
    if let (true, Some((_, h))) = (merge_right, right) {
        delete(conn, user, channel, h)?;
        high = h;
    }
    insert(conn, user, channel, low, high)
}

/// Marks message `id` of the channel unread: the range containing it is split around it, at
/// the channel's messages before and after it.
pub fn remove(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    id: i64,
) -> Result<(), StorageError> {
    let Some((low, high)) = at_or_above(conn, user, channel, id)? else {
        return Ok(());
    };
    if low > id {
        return Ok(());
    }
    delete(conn, user, channel, high)?;
    if let Some(p) = previous(conn, channel, id)?.filter(|p| *p >= low) {
        insert(conn, user, channel, low, p)?;
    }
    if let Some(n) = following(conn, channel, id)?.filter(|n| *n <= high) {
        insert(conn, user, channel, n, high)?;
    }
    Ok(())
}

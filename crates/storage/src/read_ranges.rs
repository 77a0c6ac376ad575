//! Per-(user, channel) read ranges (issue 15): every message of the channel with an ID in
//! `[low, high]` is read by the user. Ranges are kept maximal (two ranges with no message of the
//! channel between them are one), so their number follows the unread messages, not the
//! history, and a new message, above every range, is unread without a write.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{messages, read_ranges as ranges};
use crate::sql::SqlBuilder;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::BigInt;
use parley_domain::{ChannelId, UserId};
use std::collections::HashMap;

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
        .get_result(conn)?)
}

/// The channel's message just after `id`.
fn following(conn: &mut DbConn, channel: ChannelId, id: i64) -> Result<Option<i64>, StorageError> {
    Ok(messages::table
        .filter(messages::channel_id.eq(channel.0))
        .filter(messages::id.gt(id))
        .select(diesel::dsl::min(messages::id))
        .get_result(conn)?)
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
/// ranges when no message of the channel lies between (once the channel's sends in progress
/// have committed, `spans::settle`, before the ranges are read: a send in progress may extend
/// one of them).
pub fn add(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    id: i64,
) -> Result<(), StorageError> {
    crate::spans::settle(conn, channel)?;
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

/// Marks a message just written to the channel read (a sender's copy of their own message, a
/// muted sender's message): it joins the range that ends at the channel's message before it, or
/// starts its own. One statement in the common case, two when it starts a range, where [`add`]
/// takes five; a message just written has no range above it to merge with (IDs are taken in
/// commit order, on PostgreSQL under the ID's lock: every message below it has committed, and
/// none above it exists).
pub fn add_newest(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    id: i64,
) -> Result<(), StorageError> {
    if let DbConn::Pg(pg) = conn {
        AddNewest {
            user: user.0,
            channel: channel.0,
            id,
        }
        .execute(pg)?;
        return Ok(());
    }
    let previous = messages::table
        .filter(messages::channel_id.eq(channel.0))
        .filter(messages::id.lt(id))
        .select(diesel::dsl::max(messages::id))
        .single_value();
    let joined = diesel::update(
        ranges::table
            .filter(ranges::user_id.eq(user.0))
            .filter(ranges::channel_id.eq(channel.0))
            .filter(ranges::high.nullable().eq(previous)),
    )
    .set(ranges::high.eq(id))
    .execute(conn)?;
    if joined == 0 {
        insert(conn, user, channel, id, id)?;
    }
    Ok(())
}

/// [`add_newest`] on PostgreSQL: the join, or the new range when nothing was joined, in one
/// statement that stays prepared (`crate::prepared`). It runs in every send with a read copy
/// (the web and mobile apps send with `read_by_sender`), between the message's `INSERT` and its
/// commit, while the ID's lock is held (migration 000110); as two statements, the first one's
/// subquery unprepared, it was 0.3–0.6 ms of the send there.
struct AddNewest {
    user: i64,
    channel: i64,
    id: i64,
}

crate::prepared::prepared_pg_statement!(AddNewest);

impl QueryFragment<Pg> for AddNewest {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH joined AS (UPDATE read_ranges SET high = ");
        out.push_bind_param::<BigInt, _>(&self.id)?;
        out.push_sql(" WHERE user_id = ");
        out.push_bind_param::<BigInt, _>(&self.user)?;
        out.push_sql(" AND channel_id = ");
        out.push_bind_param::<BigInt, _>(&self.channel)?;
        out.push_sql(" AND high = (SELECT max(id) FROM messages WHERE channel_id = ");
        out.push_bind_param::<BigInt, _>(&self.channel)?;
        out.push_sql(" AND id < ");
        out.push_bind_param::<BigInt, _>(&self.id)?;
        out.push_sql(
            ") RETURNING 1) \
             INSERT INTO read_ranges (user_id, channel_id, low, high) SELECT ",
        );
        out.push_bind_param::<BigInt, _>(&self.user)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.channel)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.id)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.id)?;
        out.push_sql(" WHERE NOT EXISTS (SELECT 1 FROM joined)");
        Ok(())
    }
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

/// Marks the channel's messages `ids` (ascending, distinct) read in one pass: the ranges around
/// them are read once (the one below the lowest, those between, the one above the highest),
/// merged with the new IDs, and two neighbours are joined when no message of the channel lies
/// between them (the channel's next message after each pair that involves a new ID, asked in one
/// statement: pairs of old ranges were maximal already). Only the ranges that changed are
/// rewritten.
pub fn add_many(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    ids: &[i64],
) -> Result<(), StorageError> {
    let (Some(&lowest), Some(&highest)) = (ids.first(), ids.last()) else {
        return Ok(());
    };
    if ids.len() == 1 {
        return add(conn, user, channel, lowest);
    }
    crate::spans::settle(conn, channel)?;
    let old = around(conn, user, channel, lowest, highest)?;
    let merged = merge_overlapping(&old, ids);
    // A pair is joined when nothing lies between; the joined range's end is always the end of
    // one of `merged`, so every probe needed is of such an end, read in one statement.
    let probed: Vec<i64> = merged
        .windows(2)
        .filter(|pair| pair[0].1 || pair[1].1)
        .map(|pair| pair[0].0 .1)
        .collect();
    let next = following_each(conn, channel, &probed)?;
    let mut new: Vec<(i64, i64)> = Vec::with_capacity(merged.len());
    for (range, _) in merged {
        match new.last_mut() {
            // (a pair not probed is two old ranges, which were maximal: something lies between)
            Some(last)
                if next
                    .get(&last.1)
                    .is_some_and(|n| n.is_none_or(|n| n >= range.0)) =>
            {
                last.1 = range.1;
            }
            _ => new.push(range),
        }
    }
    for range in old.iter().filter(|r| !new.contains(r)) {
        delete(conn, user, channel, range.1)?;
    }
    for range in new.iter().filter(|r| !old.contains(r)) {
        insert(conn, user, channel, range.0, range.1)?;
    }
    Ok(())
}

#[derive(QueryableByName)]
struct Following {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
    next: Option<i64>,
}

/// For each of `ids`, the channel's next message after it (None: none), in one statement.
fn following_each(
    conn: &mut DbConn,
    channel: ChannelId,
    ids: &[i64],
) -> Result<HashMap<i64, Option<i64>>, StorageError> {
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let values: Vec<String> = chunk.iter().map(|id| format!("({id})")).collect();
        let mut sql = SqlBuilder::new();
        sql.push(&format!(
            "WITH x(id) AS (VALUES {}) SELECT CAST(x.id AS BIGINT) AS id, \
             (SELECT MIN(m.id) FROM messages m WHERE m.channel_id = {} AND m.id > x.id) AS next \
             FROM x",
            values.join(", "),
            channel.0
        ));
        out.extend(
            sql.load::<Following>(conn)?
                .into_iter()
                .map(|f| (f.id, f.next)),
        );
    }
    Ok(out)
}

/// The user's ranges of the channel that meet `[low, high]`, with the nearest one below and the
/// nearest one above, in order.
fn around(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    low: i64,
    high: i64,
) -> Result<Vec<(i64, i64)>, StorageError> {
    let mut out: Vec<(i64, i64)> = below(conn, user, channel, low)?.into_iter().collect();
    out.extend(
        ranges::table
            .filter(ranges::user_id.eq(user.0))
            .filter(ranges::channel_id.eq(channel.0))
            .filter(ranges::high.ge(low))
            .filter(ranges::low.le(high))
            .order(ranges::high.asc())
            .select((ranges::low, ranges::high))
            .load::<(i64, i64)>(conn)?,
    );
    if let Some(above) = at_or_above(conn, user, channel, high.saturating_add(1))? {
        if above.0 > high {
            out.push(above);
        }
    }
    Ok(out)
}

/// The old ranges (ascending, disjoint) and the new IDs as one ascending list of disjoint
/// ranges, each marked when it holds an ID no old range did.
fn merge_overlapping(old: &[(i64, i64)], ids: &[i64]) -> Vec<((i64, i64), bool)> {
    let mut all: Vec<((i64, i64), bool)> = old.iter().map(|r| (*r, false)).collect();
    all.extend(ids.iter().map(|id| ((*id, *id), true)));
    // an old range before a new ID with the same start, so that the ID is absorbed unmarked
    all.sort_unstable_by_key(|(range, fresh)| (range.0, *fresh));
    let mut out: Vec<((i64, i64), bool)> = Vec::with_capacity(all.len());
    for (range, fresh) in all {
        match out.last_mut() {
            Some((last, _)) if range.0 <= last.1 => last.1 = last.1.max(range.1),
            _ => out.push((range, fresh)),
        }
    }
    out
}

//! A user's unread messages without reading their history (issue 15): for channel messages, the
//! gaps between the read ranges inside each of the user's spans, each read from the channel's
//! index (`messages_by_channel`); for the rest, the rows with `read` clear that no span covers
//! (direct messages, historical rows, a sender's copy outside the channel). The cost is
//! O(spans + ranges + unread), never the history.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{messages, read_ranges, subscription_spans as spans};
use crate::sql::SqlBuilder;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use parley_domain::message::flags;
use parley_domain::{MessageId, UserId};

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The IDs of the user's unread messages, in ID order.
pub fn ids(conn: &mut DbConn, user: UserId) -> Result<Vec<MessageId>, StorageError> {
    let mut out = channel_unread(conn, user)?;
    let mut sql = SqlBuilder::new();
    sql.push(&format!(
        "SELECT um.message_id AS id FROM user_messages um JOIN messages m ON m.id = um.message_id \
         WHERE um.user_id = {u} AND (um.flags & {read}) = 0 \
           AND NOT (m.channel_id IS NOT NULL AND {covered})",
        u = user.0,
        read = flags::READ,
        covered = crate::reader_flags::covered_sql(&user.0.to_string()),
    ));
    out.extend(sql.load::<IdRow>(conn)?.into_iter().map(|r| r.id));
    out.sort_unstable();
    out.dedup();
    Ok(out.into_iter().map(MessageId).collect())
}

/// The unread channel messages: per span, the channel's messages in the span outside every read
/// range.
fn channel_unread(conn: &mut DbConn, user: UserId) -> Result<Vec<i64>, StorageError> {
    let all: Vec<(i64, i64, Option<i64>)> = spans::table
        .filter(spans::user_id.eq(user.0))
        .select((
            spans::channel_id,
            spans::first_message_id,
            spans::end_message_id,
        ))
        .load(conn)?;
    let mut out = Vec::new();
    for (channel, first, end) in all {
        let last = end.map_or(i64::MAX, |e| e - 1);
        let ranges: Vec<(i64, i64)> = read_ranges::table
            .filter(read_ranges::user_id.eq(user.0))
            .filter(read_ranges::channel_id.eq(channel))
            .filter(read_ranges::high.ge(first))
            .filter(read_ranges::low.le(last))
            .order(read_ranges::high.asc())
            .select((read_ranges::low, read_ranges::high))
            .load(conn)?;
        let mut from = first;
        for (low, high) in ranges {
            if low > from {
                out.extend(in_channel(conn, channel, from, low - 1)?);
            }
            from = from.max(high.saturating_add(1));
        }
        if from <= last {
            out.extend(in_channel(conn, channel, from, last)?);
        }
    }
    Ok(out)
}

/// The channel's message IDs in `[low, high]`.
fn in_channel(
    conn: &mut DbConn,
    channel: i64,
    low: i64,
    high: i64,
) -> Result<Vec<i64>, StorageError> {
    Ok(messages::table
        .filter(messages::channel_id.eq(channel))
        .filter(messages::id.ge(low))
        .filter(messages::id.le(high))
        .select(messages::id)
        .load(conn)?)
}

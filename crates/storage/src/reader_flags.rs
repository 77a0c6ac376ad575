//! A reader's flags on a message in the representation of issue 15 (`docs/architecture.md`,
//! "The write path at scale"): subscription spans say who received a channel message, read
//! ranges which of them are read, `messages.stream_wildcard_mentioned` carries `@all`, and
//! `user_messages` holds the rest.
//!
//! For a channel message covered by one of the reader's spans of its channel, the flags are the
//! row's bits other than `read` and `stream_wildcard_mentioned` (no row: none), `read` when a
//! read range contains the message, and `stream_wildcard_mentioned` from the message (such a
//! row stores `read` set, see [`covered_row`]). For any
//! other message (direct messages, historical rows, the copy of a sender who is not subscribed)
//! the row is the flags, as before; no row and no span: not received.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{messages, user_messages};
use crate::sql::{id_list, SqlBuilder};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable};
use parley_domain::message::flags;
use parley_domain::{ChannelId, MessageId, UserId};

/// The bits of a span-covered row that say nothing: they come from the read ranges and the
/// message.
pub const DERIVED_BITS: i64 = flags::READ | flags::STREAM_WILDCARD_MENTIONED;

/// The row stored for a span-covered message whose flags are `bits`: the bits the row keeps,
/// with `read` always set, or None when no such bit is left (no row). `read` in a covered row is
/// ignored (the ranges say it) but set, so that the partial index of rows with `read` clear
/// (`user_messages_unread`) holds only the rows whose `read` means something: otherwise every
/// mention and star a user ever had stays in it, and each unread count and `is:unread` page
/// reads them all (649 rows, 3 ms, for the benchmark's largest history).
pub fn covered_row(bits: i64) -> Option<i64> {
    let kept = bits & !DERIVED_BITS;
    (kept != 0).then_some(kept | flags::READ)
}

/// How a query finds the end of the reader's span of `m`'s channel around `m`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanEnd {
    /// A probe of the span primary key wherever the query asks: twice per message when both
    /// the condition that the reader received it and the flags ask.
    Probe,
    /// The column `sp.span_end` of [`span_end_join`], one probe per message for every use:
    /// PostgreSQL's message queries (`messages::matching_among`), where the flags are also
    /// conditions (`is:unread`) and the probes were up to three per message. The newest 100 of
    /// the benchmark's heaviest user 1.04 → 0.77 ms, a page of 100 unread messages by ID
    /// 1.0–1.5 → 0.77 ms. SQLite has no `LATERAL`.
    Joined,
}

/// The `LATERAL` join of [`SpanEnd::Joined`]: `sp.span_end`, the end of the reader's span that
/// contains `m` or begins below it (the span with the largest start at or below the message;
/// `i64::MAX` while it is open), NULL when there is none. PostgreSQL only. `reader` is SQL: a
/// user ID or a column.
pub fn span_end_join(reader: &str) -> String {
    format!(
        " LEFT JOIN LATERAL (SELECT COALESCE(s.end_message_id, {max}) AS span_end \
           FROM subscription_spans s WHERE s.user_id = {u} AND s.channel_id = m.channel_id \
           AND s.first_message_id <= m.id ORDER BY s.first_message_id DESC LIMIT 1) sp ON true",
        max = i64::MAX,
        u = reader
    )
}

/// SQL that is true when one of the reader's spans of `m`'s channel contains `m`: one probe of
/// the span primary key (the span with the largest start at or below the message), or the
/// joined column of [`span_end_join`]. `reader` is SQL: a user ID or a column.
pub fn covered_sql(reader: &str, span: SpanEnd) -> String {
    let end = match span {
        SpanEnd::Probe => format!(
            "(SELECT COALESCE(s.end_message_id, {max}) FROM subscription_spans s \
               WHERE s.user_id = {u} AND s.channel_id = m.channel_id AND s.first_message_id <= m.id \
               ORDER BY s.first_message_id DESC LIMIT 1)",
            max = i64::MAX,
            u = reader
        ),
        SpanEnd::Joined => "sp.span_end".to_owned(),
    };
    format!("(COALESCE({end}, 0) > m.id)")
}

/// SQL that is true when one of the reader's read ranges of `m`'s channel contains `m` (one
/// probe: the range with the smallest `high` at or above the message).
pub fn in_read_range_sql(reader: &str) -> String {
    format!(
        "(COALESCE((SELECT r.low FROM read_ranges r \
           WHERE r.user_id = {u} AND r.channel_id = m.channel_id AND r.high >= m.id \
           ORDER BY r.high LIMIT 1), m.id + 1) <= m.id)",
        u = reader
    )
}

/// SQL for the reader's flags on message `m`, whose row (if any) is `um`; NULL when the reader
/// neither received the message nor has a row for it. `reader` is SQL: a user ID or a column.
pub fn flags_sql(reader: &str, span: SpanEnd) -> String {
    format!(
        "(CASE WHEN m.channel_id IS NOT NULL AND {covered} THEN \
           (COALESCE(um.flags, 0) & ({keep})) \
           | (CASE WHEN {read} THEN {read_bit} ELSE 0 END) \
           | (CASE WHEN m.stream_wildcard_mentioned THEN {swm} ELSE 0 END) \
         ELSE um.flags END)",
        covered = covered_sql(reader, span),
        keep = !DERIVED_BITS,
        read = in_read_range_sql(reader),
        read_bit = flags::READ,
        swm = flags::STREAM_WILDCARD_MENTIONED,
    )
}

#[derive(QueryableByName)]
struct FlagsRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    flags: Option<i64>,
}

/// `reader`'s flags on each of these messages that exists (None: not received and no row), in
/// ID order.
pub fn flags_for(
    conn: &mut DbConn,
    reader: UserId,
    ids: &[MessageId],
) -> Result<Vec<(MessageId, Option<i64>)>, StorageError> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let mut sql = SqlBuilder::new();
        sql.push(&format!(
            "SELECT m.id AS id, {flags} AS flags FROM messages m LEFT JOIN user_messages um \
             ON um.message_id = m.id AND um.user_id = {u} WHERE m.id IN ({list}) ORDER BY m.id",
            flags = flags_sql(&reader.0.to_string(), SpanEnd::Probe),
            u = reader.0,
            list = id_list(chunk.iter().map(|m| m.0)),
        ));
        let rows: Vec<FlagsRow> = sql.load(conn)?;
        out.extend(rows.into_iter().map(|r| (MessageId(r.id), r.flags)));
    }
    Ok(out)
}

/// What one user's flags on one message are made of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MessageState {
    /// The flags as the API shows them (None: not received, no row).
    pub flags: Option<i64>,
    /// The channel, for channel messages.
    pub channel: Option<ChannelId>,
    /// One of the user's spans covers the message.
    pub covered: bool,
    /// The message's `@all` column.
    pub stream_wildcard: bool,
    /// The user's row.
    pub row: Option<i64>,
}

#[derive(QueryableByName)]
struct StateRow {
    #[diesel(sql_type = Nullable<BigInt>)]
    channel_id: Option<i64>,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    covered: bool,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    stream_wildcard_mentioned: bool,
    #[diesel(sql_type = Nullable<BigInt>)]
    row_flags: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    flags: Option<i64>,
}

#[derive(QueryableByName)]
struct IdStateRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(embed)]
    state: StateRow,
}

impl From<StateRow> for MessageState {
    fn from(r: StateRow) -> Self {
        MessageState {
            flags: r.flags,
            channel: r.channel_id.map(ChannelId),
            covered: r.covered,
            stream_wildcard: r.stream_wildcard_mentioned,
            row: r.row_flags,
        }
    }
}

/// The [`MessageState`] of one user on each of these messages that exists, in ID order: one
/// query per 500 messages.
pub fn states(
    conn: &mut DbConn,
    user: UserId,
    ids: &[MessageId],
) -> Result<Vec<(MessageId, MessageState)>, StorageError> {
    let u = user.0.to_string();
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let mut sql = SqlBuilder::new();
        sql.push(&format!(
            "SELECT m.id AS id, m.channel_id AS channel_id, \
             (CASE WHEN m.channel_id IS NOT NULL AND {covered} THEN 1 = 1 ELSE 1 = 0 END) AS covered, \
             m.stream_wildcard_mentioned AS stream_wildcard_mentioned, um.flags AS row_flags, \
             {flags} AS flags FROM messages m LEFT JOIN user_messages um \
             ON um.message_id = m.id AND um.user_id = {u} WHERE m.id IN ({list}) ORDER BY m.id",
            covered = covered_sql(&u, SpanEnd::Probe),
            flags = flags_sql(&u, SpanEnd::Probe),
            list = id_list(chunk.iter().map(|m| m.0)),
        ));
        let rows: Vec<IdStateRow> = sql.load(conn)?;
        out.extend(rows.into_iter().map(|r| (MessageId(r.id), r.state.into())));
    }
    Ok(out)
}

/// One user's [`MessageState`] on one message; None when the message does not exist.
pub fn state(
    conn: &mut DbConn,
    user: UserId,
    message: MessageId,
) -> Result<Option<MessageState>, StorageError> {
    Ok(states(conn, user, &[message])?
        .into_iter()
        .next()
        .map(|(_, state)| state))
}

#[derive(QueryableByName)]
struct HolderRow {
    #[diesel(sql_type = BigInt)]
    user_id: i64,
    #[diesel(sql_type = BigInt)]
    flags: i64,
}

/// Everyone with flags on a message (who received it, or has a historical row), with their
/// flags, in user ID order: the spans of its channel that contain it, and its rows.
pub fn holders(conn: &mut DbConn, message: MessageId) -> Result<Vec<(UserId, i64)>, StorageError> {
    let mut sql = SqlBuilder::new();
    sql.push(&format!(
        "SELECT h.user_id AS user_id, {flags} AS flags FROM \
         (SELECT s.user_id AS user_id FROM subscription_spans s JOIN messages m0 \
            ON m0.channel_id = s.channel_id \
          WHERE m0.id = {id} AND s.first_message_id <= {id} \
            AND (s.end_message_id IS NULL OR s.end_message_id > {id}) \
          UNION SELECT user_id FROM user_messages WHERE message_id = {id}) h \
         JOIN messages m ON m.id = {id} \
         LEFT JOIN user_messages um ON um.message_id = m.id AND um.user_id = h.user_id \
         ORDER BY h.user_id",
        flags = flags_sql("h.user_id", SpanEnd::Probe),
        id = message.0,
    ));
    let rows: Vec<HolderRow> = sql.load(conn)?;
    Ok(rows
        .into_iter()
        .map(|r| (UserId(r.user_id), r.flags))
        .collect())
}

/// Replaces the user's row for the message with one holding `bits` (None: no row).
pub(crate) fn write_row(
    conn: &mut DbConn,
    user: UserId,
    message: MessageId,
    bits: Option<i64>,
) -> Result<(), StorageError> {
    diesel::delete(user_messages::table.find((user.0, message.0))).execute(conn)?;
    if let Some(bits) = bits {
        diesel::insert_into(user_messages::table)
            .values((
                user_messages::user_id.eq(user.0),
                user_messages::message_id.eq(message.0),
                user_messages::flags.eq(bits),
            ))
            .execute(conn)?;
    }
    Ok(())
}

/// Makes one user's flags on one message exactly `wanted` (None: not received, no row), in
/// whichever form holds them: for a message a span covers, the read range and the sparse row
/// (removed when no bit is left), or, when `wanted` cannot be said that way (not received, or
/// `@all` unlike the message's), the span is split around the message and the row holds the
/// flags whole; otherwise the row.
pub fn set(
    conn: &mut DbConn,
    user: UserId,
    message: MessageId,
    wanted: Option<i64>,
) -> Result<(), StorageError> {
    match state(conn, user, message)? {
        Some(now) => set_from(conn, user, message, now, wanted),
        None => Ok(()),
    }
}

/// [`set`] for a message whose state `now` was just read.
fn set_from(
    conn: &mut DbConn,
    user: UserId,
    message: MessageId,
    now: MessageState,
    wanted: Option<i64>,
) -> Result<(), StorageError> {
    if now.flags == wanted {
        return Ok(());
    }
    let (true, Some(channel)) = (now.covered, now.channel) else {
        return write_row(conn, user, message, wanted);
    };
    match wanted {
        Some(bits) if (bits & flags::STREAM_WILDCARD_MENTIONED != 0) == now.stream_wildcard => {
            let was_read = now.flags.is_some_and(|f| f & flags::READ != 0);
            let read = bits & flags::READ != 0;
            if read && !was_read {
                crate::read_ranges::add(conn, user, channel, message.0)?;
            } else if !read && was_read {
                crate::read_ranges::remove(conn, user, channel, message.0)?;
            }
            let row = covered_row(bits);
            if now.row != row {
                write_row(conn, user, message, row)?;
            }
            Ok(())
        }
        _ => {
            crate::spans::exclude(conn, user, channel, message.0)?;
            write_row(conn, user, message, wanted)
        }
    }
}

/// Sets (`add`) or clears `bit` on each of these messages the user received (or has a row for);
/// returns the IDs whose flags changed, in ID order. The states are read in one query per 500
/// messages, and marking read is one pass over each channel's read ranges
/// ([`crate::read_ranges::add_many`]) rather than a merge per message, which is what
/// mark-as-read of a long unread list costs.
pub fn set_bit(
    conn: &mut DbConn,
    user: UserId,
    ids: &[MessageId],
    bit: i64,
    add: bool,
) -> Result<Vec<MessageId>, StorageError> {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut changed = Vec::new();
    let mut read_by_channel: std::collections::BTreeMap<ChannelId, Vec<i64>> = Default::default();
    for (id, now) in states(conn, user, &ids)? {
        let Some(bits) = now.flags else {
            continue;
        };
        let new = if add { bits | bit } else { bits & !bit };
        if new == bits {
            continue;
        }
        changed.push(id);
        match (bit == flags::READ && add, now.covered, now.channel) {
            // only the read bit changes, and for a covered message it lives in the ranges
            (true, true, Some(channel)) => read_by_channel.entry(channel).or_default().push(id.0),
            _ => set_from(conn, user, id, now, Some(new))?,
        }
    }
    for (channel, ids) in read_by_channel {
        crate::read_ranges::add_many(conn, user, channel, &ids)?;
    }
    Ok(changed)
}

/// The channel and `@all` column of a message.
pub fn channel_of(
    conn: &mut DbConn,
    message: MessageId,
) -> Result<Option<(Option<i64>, bool)>, StorageError> {
    Ok(messages::table
        .find(message.0)
        .select((messages::channel_id, messages::stream_wildcard_mentioned))
        .first(conn)
        .optional()?)
}

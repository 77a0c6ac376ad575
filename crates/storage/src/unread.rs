//! A user's unread messages without reading their history (issue 15): for channel messages, the
//! gaps between the read ranges inside each of the user's spans, each read from the channel's
//! index (`messages_by_channel`); for the rest, the rows with `read` clear that no span covers
//! (direct messages, historical rows, a sender's copy outside the channel). The cost is
//! O(spans + ranges + unread), never the history.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::reader_spans::ReaderSpans;
use crate::sql::{Bind, IdRow, SqlBuilder, READER};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::sqlite::Sqlite;
use parley_domain::message::flags;
use parley_domain::{MessageId, UserId};
use std::collections::HashMap;

/// The IDs of the user's unread messages, in ID order.
pub fn ids(conn: &mut DbConn, user: UserId) -> Result<Vec<MessageId>, StorageError> {
    let mut out: Vec<i64> = read_unread::<IdRow>(conn, user, Columns::Id)?
        .into_iter()
        .map(|r| r.id)
        .collect();
    out.sort_unstable();
    out.dedup();
    Ok(out.into_iter().map(MessageId).collect())
}

/// An unread message with what the unread summary groups it by.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct UnreadRow {
    /// Message ID.
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    /// The reader's flags: exact for the mention bits (what the summary lists mentions by); of
    /// a channel message covered by a span, the other bits of the reader's row are not read.
    #[diesel(sql_type = BigInt)]
    pub flags: i64,
    /// Sender.
    #[diesel(sql_type = BigInt)]
    pub sender_id: i64,
    /// Channel, for channel messages.
    #[diesel(sql_type = Nullable<BigInt>)]
    pub channel_id: Option<i64>,
    /// Topic.
    #[diesel(sql_type = Text)]
    pub topic: String,
    /// Participants, for direct messages.
    #[diesel(sql_type = Nullable<Text>)]
    pub dm_key: Option<String>,
}

/// The user's unread messages with what register's unread summary groups them by, in ID order.
/// Their flags are known without probing ranges: a channel message found in a gap is covered by
/// a span and unread, so its mention bits are its sparse row's and the message's `@all`; any
/// other is its own row. The gaps' messages are read without their rows (a probe of the
/// reader's rows for each unread message: 5 of 13 ms for 4,864 unread on PostgreSQL); the
/// reader's rows with a mention bit are read once instead, through their partial index, and
/// added to the messages they belong to.
pub fn rows(conn: &mut DbConn, user: UserId) -> Result<Vec<UnreadRow>, StorageError> {
    let mut out = read_unread::<UnreadRow>(conn, user, Columns::Summary)?;
    out.sort_unstable_by_key(|row| row.id);
    out.dedup_by_key(|row| row.id);
    if let Some(first) = out.first() {
        let mentions = mention_rows(conn, user, first.id)?;
        for row in out.iter_mut() {
            if let Some(bits) = mentions.get(&row.id) {
                row.flags |= bits & !crate::reader_flags::DERIVED_BITS;
            }
        }
    }
    Ok(out)
}

/// The bits of a mention (`user_messages_mentioned`'s predicate).
const MENTION_BITS: i64 = flags::MENTIONED
    | flags::STREAM_WILDCARD_MENTIONED
    | flags::TOPIC_WILDCARD_MENTIONED
    | flags::GROUP_MENTIONED;

/// The reader's rows with a mention bit from message `from` on, by message.
fn mention_rows(
    conn: &mut DbConn,
    user: UserId,
    from: i64,
) -> Result<HashMap<i64, i64>, StorageError> {
    let mut sql = SqlBuilder::new();
    sql.push_for(
        &format!(
            "SELECT message_id AS id, flags FROM user_messages \
             WHERE user_id = {READER} AND (flags & {MENTION_BITS}) <> 0 AND message_id >= "
        ),
        user.0,
    )
    .bind(Bind::Int(from));
    Ok(sql
        .prepared()
        .load::<IdFlags>(conn)?
        .into_iter()
        .map(|row| (row.id, row.flags))
        .collect())
}

/// A message ID with the reader's flags.
#[derive(QueryableByName)]
struct IdFlags {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    flags: i64,
}

/// What [`read_unread`] reads of each message `m`, whose row of the reader, if any, is `um`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Columns {
    /// The ID.
    Id,
    /// An [`UnreadRow`].
    Summary,
}

impl Columns {
    /// The columns of a channel message found in a gap (covered by a span, unread).
    fn in_gap(self) -> String {
        match self {
            Columns::Id => "m.id AS id".into(),
            // The reader's row is not joined: [`rows`] adds its mention bits.
            Columns::Summary => format!(
                "m.id AS id, CAST(CASE WHEN m.stream_wildcard_mentioned THEN {swm} ELSE 0 END \
                 AS BIGINT) AS flags, {rest}",
                swm = flags::STREAM_WILDCARD_MENTIONED,
                rest = SUMMARY_REST,
            ),
        }
    }

    /// The columns of a row no span covers: the row is the reader's whole flags.
    fn own_row(self) -> String {
        match self {
            Columns::Id => "m.id AS id".into(),
            Columns::Summary => format!("m.id AS id, um.flags AS flags, {SUMMARY_REST}"),
        }
    }
}

/// The columns of an [`UnreadRow`] after its ID and flags.
const SUMMARY_REST: &str = "m.sender_id AS sender_id, m.channel_id AS channel_id, \
    m.topic AS topic, m.dm_key AS dm_key";

/// The unread messages of the user, as `columns`, in no order: the channel messages in the gaps
/// between read ranges inside the spans, and the rows with `read` clear that no span covers.
fn read_unread<T>(conn: &mut DbConn, user: UserId, columns: Columns) -> Result<Vec<T>, StorageError>
where
    T: QueryableByName<Sqlite> + QueryableByName<Pg> + 'static,
{
    let mut out = Vec::new();
    for batch in ReaderSpans::read(conn, user, None)?
        .gaps()
        .chunks(GAPS_PER_QUERY)
    {
        out.extend(in_gaps(conn, batch, columns)?);
    }
    let mut sql = SqlBuilder::new();
    sql.push_for(
        &format!(
            "SELECT {columns} FROM user_messages um JOIN messages m ON m.id = um.message_id \
             WHERE um.user_id = {READER} AND (um.flags & {read}) = 0 \
               AND NOT (m.channel_id IS NOT NULL AND {covered})",
            columns = columns.own_row(),
            read = flags::READ,
            covered = crate::reader_flags::covered_sql(READER, crate::reader_flags::SpanEnd::Probe),
        ),
        user.0,
    );
    out.extend(sql.prepared().load::<T>(conn)?);
    Ok(out)
}

/// Gaps read per statement.
const GAPS_PER_QUERY: usize = 500;

/// The messages of each gap's channel inside the gap, as `columns`: the gaps as a `VALUES`
/// list (arrays on PostgreSQL) joined to the channel's index, one index range per gap. (A
/// `UNION ALL` of one `SELECT` per gap cost PostgreSQL 7-9 ms of planning for 100 gaps; this
/// form plans in 0.1 ms.)
///
/// Both databases must read it as a loop over the gaps. PostgreSQL cannot estimate a `VALUES`
/// list's ranges; when the summary also joined the reader's rows it hashed the gaps and read
/// the whole `messages` table (65 ms instead of 12 for 4,430 unread of 300,000 messages), so
/// there the summary, which reads the messages' columns, reads each gap's messages in a
/// `LATERAL` subquery (`OFFSET 0`). The IDs alone keep the plain join, which it reads from the
/// channel index without visiting the table.
fn in_gaps<T>(
    conn: &mut DbConn,
    gaps: &[(i64, i64, i64)],
    columns: Columns,
) -> Result<Vec<T>, StorageError>
where
    T: QueryableByName<Sqlite> + QueryableByName<Pg> + 'static,
{
    if gaps.is_empty() {
        return Ok(Vec::new());
    }
    let messages = if matches!(conn, DbConn::Pg(_)) && columns == Columns::Summary {
        format!("CROSS JOIN LATERAL (SELECT * FROM messages m WHERE {IN_GAP} OFFSET 0) m")
    } else {
        format!("JOIN messages m ON {IN_GAP}")
    };
    let mut sql = SqlBuilder::new();
    sql.with_triples(gaps)
        .push(&format!(" SELECT {} FROM g {messages}", columns.in_gap()));
    sql.prepared().load::<T>(conn)
}

/// A message `m` inside a gap `g(c, l, h)` (`SqlBuilder::with_triples`).
pub(crate) const IN_GAP: &str = "m.channel_id = g.c AND m.id >= g.l AND m.id <= g.h";

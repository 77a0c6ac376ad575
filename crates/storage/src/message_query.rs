//! The one query shape every message read goes through: messages left-joined with the
//! reader's own `user_messages` row and their span, filtered by a list of [`Condition`]s (in
//! SQL both backends share), seen by an [`Audience`], paged by ID from an anchor. The page
//! readers (`messages::page`, `flag_pages`, `search_windows`, `nearest_ids`) build on it.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::message_rows::{MessageRow, ReadMessage};
use crate::reader_flags::SpanEnd;
use crate::reader_spans::ReaderSpans;
use crate::sql::{Bind, SqlBuilder, READER};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable};
use parley_domain::message::flags;
use parley_domain::{ChannelId, MessageId, UserId};

/// One filter of a message query. IDs are resolved; `Not` inverts.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// In this channel.
    Channel(ChannelId),
    /// In one of these channels.
    ChannelIn(Vec<ChannelId>),
    /// In this topic (case-insensitive).
    Topic(String),
    /// Sent by this user.
    Sender(UserId),
    /// In this direct conversation.
    DmKey(String),
    /// A direct message that this user also received.
    DmIncluding(UserId),
    /// A direct message.
    IsDm,
    /// The reader's flags include this bit (historical messages count as read).
    Flag(i64),
    /// In a resolved topic.
    Resolved,
    /// Has a link.
    HasLink,
    /// Has an image.
    HasImage,
    /// Has an attachment.
    HasAttachment,
    /// Has a reaction.
    HasReaction,
    /// This message.
    Id(MessageId),
    /// One of these messages.
    IdIn(Vec<MessageId>),
    /// Content or topic contains every word of this text (full-text, stemmed).
    Search(String),
    /// In one of these `(channel, lower-cased topic)` topics.
    TopicIn(Vec<(ChannelId, String)>),
    /// Any of these conditions (none: nothing).
    Any(Vec<Condition>),
    /// All of these conditions (none: everything).
    All(Vec<Condition>),
    /// Matches nothing.
    Nothing,
    /// The opposite.
    Not(Box<Condition>),
}

/// Which messages a reader may see: those they received, and also every message of
/// `history_channels`.
#[derive(Debug, Clone, PartialEq)]
pub struct Audience {
    /// The reader.
    pub reader: UserId,
    /// Channels whose whole history the reader may read.
    pub history_channels: Vec<ChannelId>,
    /// What the queries of one request read about the reader, read once.
    known: Known,
}

/// The reader's state as the first query of a request that needed it read it: one request's
/// page, its anchor and its other side read it once rather than once each (an
/// `anchor=first_unread` page read the reader's spans three times). Reads only: a request
/// that writes flags and reads again with the same audience sees at worst candidates that
/// every page query checks anyway.
#[derive(Debug, Clone, PartialEq, Default)]
struct Known {
    /// The reader's spans, read ranges and the newest message, in one statement.
    spans: std::sync::OnceLock<ReaderSpans>,
    /// The channels of the reader's spans.
    span_channels: std::sync::OnceLock<Vec<i64>>,
    /// The gaps between the reader's read ranges, cut at the newest message
    /// (`nearest_ids`).
    unread_gaps: std::sync::OnceLock<Vec<(i64, i64, i64)>>,
    /// The reader's spans, cut at the newest message, and its ID (`nearest_ids`).
    span_ranges: std::sync::OnceLock<(Vec<Gap>, i64)>,
    /// The same for the channels a narrow names, read for them alone: `(channels, gaps)`.
    channel_gaps: std::sync::OnceLock<(Vec<i64>, Vec<Gap>)>,
}

/// A range of one channel's message IDs, `(channel, low, high)`, inclusive: an unread gap, or
/// a span.
type Gap = (i64, i64, i64);

impl Audience {
    /// The audience of `reader`, who may also read every message of `history_channels`.
    pub fn new(reader: UserId, history_channels: Vec<ChannelId>) -> Self {
        Audience {
            reader,
            history_channels,
            known: Known::default(),
        }
    }

    /// The reader's spans and read ranges, read at the first call.
    fn spans(&self, conn: &mut DbConn) -> Result<&ReaderSpans, StorageError> {
        known(&self.known.spans, || {
            ReaderSpans::read(conn, self.reader, None)
        })
    }

    /// The channels of the reader's spans: from their spans when a query of the request read
    /// them, else alone (an index-only read; the spans with their read ranges cost several
    /// times more, for pages that need no gaps).
    fn span_channels(&self, conn: &mut DbConn) -> Result<&[i64], StorageError> {
        known(&self.known.span_channels, || match self.known.spans.get() {
            Some(spans) => Ok(spans.channels()),
            None => span_channels(conn, self.reader),
        })
        .map(Vec::as_slice)
    }

    /// The reader's spans `(channel, first, last)`, cut at the newest message: where the
    /// messages they received in channels are (`nearest_ids`); and the newest message's ID.
    /// Taken from the spans with their read ranges when the request read those, else read
    /// alone.
    pub(crate) fn span_ranges(&self, conn: &mut DbConn) -> Result<(Vec<Gap>, i64), StorageError> {
        known(&self.known.span_ranges, || {
            let spans = match self.known.spans.get() {
                Some(spans) => std::borrow::Cow::Borrowed(spans),
                None => std::borrow::Cow::Owned(ReaderSpans::read_spans(conn, self.reader)?),
            };
            Ok((
                cut_at_newest(spans.span_ranges(), spans.newest),
                spans.newest,
            ))
        })
        .cloned()
    }

    /// The reader's unread gaps `(channel, low, high)`, cut at the newest message (the gaps
    /// of current spans are open-ended) so that a walk from the newest anchor starts where the
    /// messages are and a walk upwards ends. With `channels` (a narrow that names them), only
    /// theirs: read for those channels alone unless every channel's spans were read already.
    pub(crate) fn unread_gaps(
        &self,
        conn: &mut DbConn,
        channels: Option<&[ChannelId]>,
    ) -> Result<Vec<(i64, i64, i64)>, StorageError> {
        let Some(channels) = channels else {
            return known(&self.known.unread_gaps, || Ok(cut_gaps(self.spans(conn)?)))
                .map(|gaps| gaps.to_vec());
        };
        let ids: Vec<i64> = channels.iter().map(|c| c.0).collect();
        if let Some((of, gaps)) = self.known.channel_gaps.get() {
            if *of == ids {
                return Ok(gaps.clone());
            }
        }
        let mut gaps = match self.known.spans.get() {
            Some(spans) => cut_gaps(spans),
            None => cut_gaps(&ReaderSpans::read(conn, self.reader, Some(&ids))?),
        };
        gaps.retain(|(channel, _, _)| ids.contains(channel));
        let _ = self.known.channel_gaps.set((ids, gaps.clone()));
        Ok(gaps)
    }
}

/// The gaps of `spans`, cut at the newest message.
fn cut_gaps(spans: &ReaderSpans) -> Vec<(i64, i64, i64)> {
    cut_at_newest(spans.gaps(), spans.newest)
}

/// The ranges that begin at or before `newest`, ending there at the latest.
fn cut_at_newest(ranges: Vec<Gap>, newest: i64) -> Vec<Gap> {
    ranges
        .into_iter()
        .filter(|(_, low, _)| *low <= newest)
        .map(|(channel, low, high)| (channel, low, high.min(newest)))
        .collect()
}

/// The value of `cell`, read by `read` if it has none yet.
fn known<T>(
    cell: &std::sync::OnceLock<T>,
    read: impl FnOnce() -> Result<T, StorageError>,
) -> Result<&T, StorageError> {
    if let Some(value) = cell.get() {
        return Ok(value);
    }
    let value = read()?;
    Ok(cell.get_or_init(|| value))
}

/// Which side of the anchor to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// IDs below the anchor, newest first.
    Before,
    /// IDs above the anchor, oldest first.
    After,
}

impl Direction {
    /// The SQL comparison that keeps the IDs at or beyond an edge on this side, and the order
    /// that lists them nearest the edge first: `(">=", "ASC")` after it, `("<=", "DESC")`
    /// before it.
    pub(crate) fn beyond_edge(self) -> (&'static str, &'static str) {
        match self {
            Direction::Before => ("<=", "DESC"),
            Direction::After => (">=", "ASC"),
        }
    }
}

/// One side of an anchor that a page reads: the ways of reading a page
/// (`search_windows`, `flag_pages`) take it whole.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Side {
    /// The anchor.
    pub anchor: i64,
    /// Which side of it.
    pub direction: Direction,
    /// Whether the anchor itself may be on the page.
    pub include_anchor: bool,
    /// At most this many messages.
    pub limit: i64,
}

impl Side {
    /// The ID nearest the anchor that the page may hold (the anchor, or the next ID away from
    /// it when the anchor is excluded).
    pub fn first_id(&self) -> i64 {
        let step = i64::from(!self.include_anchor);
        match self.direction {
            Direction::Before => self.anchor.saturating_sub(step),
            Direction::After => self.anchor.saturating_add(step),
        }
    }
}

/// A way of reading a page that serves some narrows (None: not this one).
pub(crate) type PageReader = fn(
    &mut DbConn,
    &Audience,
    &[Condition],
    Side,
) -> Result<Option<Vec<ReadMessage>>, StorageError>;

/// Appends one condition as SQL (`m` is the message, `um` the reader's row). Positive channel
/// and conversation terms compare the bare column so that the indexes serve them; under `NOT`
/// they are made NULL-safe, so that direct messages are not lost to SQL's three-valued logic.
pub(crate) fn push_condition(
    sql: &mut SqlBuilder,
    condition: &Condition,
    negated: bool,
    reader: UserId,
    span: SpanEnd,
) {
    match condition {
        Condition::Not(inner) => {
            sql.push("NOT (");
            push_condition(sql, inner, !negated, reader, span);
            sql.push(")");
        }
        Condition::Channel(id) => {
            let column = if negated {
                "COALESCE(m.channel_id, 0)"
            } else {
                "m.channel_id"
            };
            sql.push(&format!("{column} = ")).bind(Bind::Int(id.0));
        }
        Condition::ChannelIn(ids) if ids.is_empty() => {
            // Not `IN (0)`: under `NOT` the column is `COALESCE(m.channel_id, 0)`, which is 0
            // for every direct message (no muted channel made `first_unread` skip them).
            sql.push("1 = 0");
        }
        Condition::ChannelIn(ids) => {
            let column = if negated {
                "COALESCE(m.channel_id, 0)"
            } else {
                "m.channel_id"
            };
            sql.ids_in(column, ids.iter().map(|c| c.0));
        }
        Condition::Topic(topic) => {
            sql.push("(m.channel_id IS NOT NULL AND m.topic_key = ")
                .bind(Bind::Text(topic.to_lowercase()))
                .push(")");
        }
        Condition::Sender(id) => {
            sql.push("m.sender_id = ").bind(Bind::Int(id.0));
        }
        Condition::DmKey(key) => {
            let column = if negated {
                "COALESCE(m.dm_key, '')"
            } else {
                "m.dm_key"
            };
            sql.push(&format!("{column} = "))
                .bind(Bind::Text(key.clone()));
        }
        Condition::DmIncluding(user) => {
            sql.push("(m.dm_key IS NOT NULL AND EXISTS (SELECT 1 FROM user_messages um2 WHERE um2.message_id = m.id AND um2.user_id = ")
                .bind(Bind::Int(user.0))
                .push("))");
        }
        Condition::IsDm => {
            sql.push("m.dm_key IS NOT NULL");
        }
        Condition::Flag(bit) => {
            let default = flags::READ | flags::HISTORICAL;
            if bit & (default | crate::reader_flags::DERIVED_BITS) == 0 {
                // Bits that live in the reader's row whatever the representation; spelled as
                // the partial indexes' predicates (`user_messages_starred`,
                // `user_messages_private`), so that both databases read a page of starred or
                // direct messages from them instead of walking every message.
                sql.push(&format!(
                    "((COALESCE(um.flags, 0) & {bit}) <> 0 AND (um.flags & {bit}) <> 0)"
                ));
            } else {
                sql.push_for(
                    &format!(
                        "((COALESCE({}, {default}) & {bit}) <> 0)",
                        crate::reader_flags::flags_sql(READER, span)
                    ),
                    reader.0,
                );
            }
        }
        // The predicate of `messages_resolved`, word for word (see `HasLink` below).
        Condition::Resolved => {
            sql.push("(m.channel_id IS NOT NULL AND m.topic LIKE '\u{2714} %')");
        }
        // Written as the predicates of their partial indexes (`messages_with_link`, ...), so
        // that both databases can walk those (a bound `= true` hides the value from SQLite).
        Condition::HasLink => {
            sql.push("m.has_link");
        }
        Condition::HasImage => {
            sql.push("m.has_image");
        }
        Condition::HasAttachment => {
            sql.push("m.has_attachment");
        }
        Condition::HasReaction => {
            sql.push("EXISTS (SELECT 1 FROM reactions r WHERE r.message_id = m.id)");
        }
        Condition::Id(id) => {
            sql.push("m.id = ").bind(Bind::Int(id.0));
        }
        Condition::IdIn(ids) => {
            sql.ids_in("m.id", ids.iter().map(|m| m.0));
        }
        Condition::Search(text) => {
            sql.search(text);
        }
        Condition::TopicIn(topics) => push_topics(sql, topics),
        Condition::Any(items) => push_joined(sql, items, " OR ", "1 = 0", negated, reader, span),
        Condition::All(items) => push_joined(sql, items, " AND ", "1 = 1", negated, reader, span),
        Condition::Nothing => {
            sql.push("1 = 0");
        }
    }
}

/// `(channel, topic)` pairs; false (never NULL) for direct messages, so it negates safely.
fn push_topics(sql: &mut SqlBuilder, topics: &[(ChannelId, String)]) {
    if topics.is_empty() {
        sql.push("1 = 0");
        return;
    }
    sql.push("(m.channel_id IS NOT NULL AND (");
    for (i, (channel, topic_key)) in topics.iter().enumerate() {
        if i > 0 {
            sql.push(" OR ");
        }
        sql.push("(m.channel_id = ")
            .bind(Bind::Int(channel.0))
            .push(" AND m.topic_key = ")
            .bind(Bind::Text(topic_key.to_lowercase()))
            .push(")");
    }
    sql.push("))");
}

/// Conditions joined by `joiner`; `empty` when there are none.
fn push_joined(
    sql: &mut SqlBuilder,
    items: &[Condition],
    joiner: &str,
    empty: &str,
    negated: bool,
    reader: UserId,
    span: SpanEnd,
) {
    if items.is_empty() {
        sql.push(empty);
        return;
    }
    sql.push("(");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            sql.push(joiner);
        }
        sql.push("(");
        push_condition(sql, item, negated, reader, span);
        sql.push(")");
    }
    sql.push(")");
}

const COLUMNS: &str = "m.id, m.sender_id, m.channel_id, m.topic, m.topic_key, m.dm_key, \
    m.dm_group_id, m.recipient_user_id, m.content, m.rendered_content, m.date_sent, \
    m.last_edit_time, m.last_moved_time, m.edit_history, m.has_link, m.has_image, \
    m.has_attachment, m.client";

#[derive(QueryableByName)]
pub(crate) struct PageRow {
    #[diesel(embed)]
    pub(crate) message: MessageRow,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(crate) reader_flags: Option<i64>,
}

impl PageRow {
    pub(crate) fn into_read(self) -> ReadMessage {
        ReadMessage {
            row: self.message,
            flags: self.reader_flags,
        }
    }
}

/// The channels in which the reader has a span: the only ones whose messages they may have
/// received without a row.
fn span_channels(conn: &mut DbConn, reader: UserId) -> Result<Vec<i64>, StorageError> {
    use crate::schema::subscription_spans as spans;
    Ok(spans::table
        .filter(spans::user_id.eq(reader.0))
        .select(spans::channel_id)
        .distinct()
        .load(conn)?)
}

/// The columns of a page row and the condition that the audience may see `m` (whose reader's
/// row is `um`): the reader has a row for it, or one of their spans covers it, or it is in a
/// channel whose history they may read.
pub(crate) fn visible(
    conn: &mut DbConn,
    audience: &Audience,
    span: SpanEnd,
) -> Result<(String, SqlBuilder), StorageError> {
    let columns = format!(
        "{COLUMNS}, {} AS reader_flags",
        crate::reader_flags::flags_sql(READER, span)
    );
    let channels = audience.span_channels(conn)?.to_vec();
    let mut condition = SqlBuilder::new();
    condition.push("(um.user_id IS NOT NULL");
    if !channels.is_empty() {
        condition
            .push(" OR (")
            .ids_in("m.channel_id", channels)
            .push_for(
                &format!(" AND {})", crate::reader_flags::covered_sql(READER, span)),
                audience.reader.0,
            );
    }
    if !audience.history_channels.is_empty() {
        condition.push(" OR ").ids_in(
            "m.channel_id",
            audience.history_channels.iter().map(|c| c.0),
        );
    }
    condition.push(")");
    Ok((columns, condition))
}

/// The `need` messages of `ids` nearest the anchor on `direction`'s side that `base` (a query
/// of [`matching_among`]) selects, nearest first: a page read among candidate IDs (primary-key
/// probes), checked against every condition of the narrow.
pub(crate) fn among_ids(
    conn: &mut DbConn,
    base: &SqlBuilder,
    ids: &[i64],
    direction: Direction,
    need: i64,
) -> Result<Vec<ReadMessage>, StorageError> {
    let order = match direction {
        Direction::Before => "DESC",
        Direction::After => "ASC",
    };
    let mut sql = base.clone();
    sql.push(" AND ")
        .ids_in("m.id", ids.iter().copied())
        .push(&format!(" ORDER BY m.id {order}"))
        .limit(need);
    let rows: Vec<PageRow> = sql.prepared().load(conn)?;
    Ok(rows.into_iter().map(PageRow::into_read).collect())
}

/// Whether the condition is a plain `NOT read`.
pub(crate) fn is_unread(condition: &Condition) -> bool {
    matches!(condition, Condition::Not(inner) if matches!(**inner, Condition::Flag(flags::READ)))
}

/// Whether the conditions require the message to be unread (a plain `NOT read`).
pub fn asks_unread(conditions: &[Condition]) -> bool {
    conditions.iter().any(|c| match c {
        Condition::All(items) => asks_unread(items),
        other => is_unread(other),
    })
}

/// The query of every message the audience may see that matches every condition, and the
/// column to order and page by. Messages are read in ID order and each is checked against the
/// reader's row and spans (one probe each).
pub(crate) fn matching(
    conn: &mut DbConn,
    audience: &Audience,
    conditions: &[Condition],
) -> Result<(SqlBuilder, &'static str), StorageError> {
    matching_among(conn, audience, conditions, true, None)
}

/// [`matching`]; with `unread_list` false, a narrow that asks for unread messages is not
/// restricted to the list of the reader's unread IDs (the caller restricts it to some of them).
///
/// `bound` (an operator and an ID) is the page's anchor, for the page query ([`page`]). On
/// SQLite it also bounds the reader's rows joined. On PostgreSQL the reader's row is read per
/// message instead, a `LATERAL` primary-key probe kept apart (`OFFSET 0`), so that no plan can
/// join the reader's rows as a whole: planned for its anchor, a page from a middle anchor was a
/// merge join reading the reader's rows from the first message up to it (180 ms at 300,000
/// messages) until the bound was added; and the page query is kept prepared, whose generic plan,
/// blind to the anchor, merge-joined every row of the reader below it (3 ms against 1).
pub(crate) fn matching_among(
    conn: &mut DbConn,
    audience: &Audience,
    conditions: &[Condition],
    unread_list: bool,
    bound: Option<(&str, i64)>,
) -> Result<(SqlBuilder, &'static str), StorageError> {
    // On PostgreSQL the reader's span of each message is read once, for both the condition
    // that they received it and their flags (`reader_flags::SpanEnd`).
    let span = match &*conn {
        DbConn::Pg(_) => SpanEnd::Joined,
        DbConn::Sqlite(_) => SpanEnd::Probe,
    };
    let (columns, visible) = visible(conn, audience, span)?;
    let mut sql = SqlBuilder::new();
    let mut joined = match (bound, &*conn) {
        (Some(_), DbConn::Pg(_)) => format!(
            "LEFT JOIN LATERAL (SELECT u.user_id, u.flags FROM user_messages u \
             WHERE u.user_id = {READER} AND u.message_id = m.id OFFSET 0) um ON true"
        ),
        _ => {
            format!("LEFT JOIN user_messages um ON um.message_id = m.id AND um.user_id = {READER}")
        }
    };
    if span == SpanEnd::Joined {
        joined.push_str(&crate::reader_flags::span_end_join(READER));
    }
    sql.push_for(
        &format!("SELECT {columns} FROM messages m {joined}"),
        audience.reader.0,
    );
    if let (Some((op, id)), DbConn::Sqlite(_)) = (bound, &*conn) {
        sql.push(&format!(" AND um.message_id {op} "))
            .bind(Bind::Int(id));
    }
    sql.push(" WHERE ").append(visible);
    if unread_list && asks_unread(conditions) {
        // Unread messages are few and found without the history (`unread::ids`); the page is
        // read among them instead of walking every message for the ones outside read ranges.
        let unread = crate::unread::ids(conn, audience.reader)?;
        sql.push(" AND ").ids_in("m.id", unread.iter().map(|m| m.0));
    }
    for condition in conditions {
        sql.push(" AND ");
        push_condition(&mut sql, condition, false, audience.reader, span);
    }
    Ok((sql, "m.id"))
}

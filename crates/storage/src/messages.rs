//! Messages and who received them: writing them (sends, edits, moves, deletions, flags) and
//! the reads the API asks for (a page from an anchor, messages by ID, the first unread one),
//! each built on the one query shape of `message_query`.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::reader_flags::SpanEnd;
use crate::schema::{dm_groups, messages, user_messages};
use crate::sql::{Bind, SqlBuilder, READER};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable};
use parley_domain::message::flags;
use parley_domain::{ChannelId, MessageId, UserId};
use std::collections::HashSet;

pub use crate::message_query::{asks_unread, Audience, Condition, Direction};
use crate::message_query::{is_unread, push_condition, visible, PageReader};
pub(crate) use crate::message_query::{matching, matching_among, PageRow, Side};
pub use crate::message_rows::{MessageRow, ReadMessage};

/// A message to insert.
#[derive(Debug, Clone)]
pub struct NewMessage {
    /// Sender.
    pub sender_id: UserId,
    /// Channel, for channel messages.
    pub channel_id: Option<ChannelId>,
    /// Topic.
    pub topic: String,
    /// Conversation key, for direct messages.
    pub dm_key: Option<String>,
    /// Group conversation.
    pub dm_group_id: Option<i64>,
    /// The other party of a one-on-one conversation.
    pub recipient_user_id: Option<UserId>,
    /// Markdown.
    pub content: String,
    /// HTML.
    pub rendered_content: String,
    /// Send time.
    pub date_sent: i64,
    /// Contains a link.
    pub has_link: bool,
    /// Contains an image.
    pub has_image: bool,
    /// Links to an uploaded file.
    pub has_attachment: bool,
    /// Sending client.
    pub client: String,
}

impl NewMessage {
    /// The row this message is once inserted with `id`.
    pub fn row(&self, id: MessageId) -> MessageRow {
        MessageRow {
            id: id.0,
            sender_id: self.sender_id.0,
            channel_id: self.channel_id.map(|c| c.0),
            topic: self.topic.clone(),
            topic_key: self.topic.to_lowercase(),
            dm_key: self.dm_key.clone(),
            dm_group_id: self.dm_group_id,
            recipient_user_id: self.recipient_user_id.map(|u| u.0),
            content: self.content.clone(),
            rendered_content: self.rendered_content.clone(),
            date_sent: self.date_sent,
            last_edit_time: None,
            last_moved_time: None,
            edit_history: None,
            has_link: self.has_link,
            has_image: self.has_image,
            has_attachment: self.has_attachment,
            client: self.client.clone(),
        }
    }
}

/// Inserts a message and returns its ID. `recipients` are everyone who receives it with their
/// flags. For a channel message, those with an open span of the channel (the send's recipient
/// rule) get nothing written but the flags they do not share: a sparse row for starred,
/// mentioned, alerted and the like, a read range for `read` (the sender's own copy, muted
/// senders); `@all` goes on the message. Anyone else (a sender outside the channel, the
/// participants of a direct message) gets a whole row.
///
/// On PostgreSQL the ID's default takes a lock held to the commit (migration 000110), so IDs
/// rise in commit order and message events reach clients in ID order: call it after the
/// transaction's other locks (see `docs/architecture.md`, "Message IDs in commit order").
pub fn insert(
    conn: &mut DbConn,
    message: &NewMessage,
    recipients: &[(UserId, i64)],
) -> Result<MessageId, StorageError> {
    let spanned = match message.channel_id {
        Some(channel) => crate::spans::open_users(conn, channel)?,
        None => HashSet::new(),
    };
    insert_spanned(conn, message, recipients, &spanned)
}

/// [`insert`] with the users holding an open span of the message's channel already read
/// (`spans::open_users`, in the same state of the database).
pub fn insert_spanned(
    conn: &mut DbConn,
    message: &NewMessage,
    recipients: &[(UserId, i64)],
    spanned: &HashSet<UserId>,
) -> Result<MessageId, StorageError> {
    let stream_wildcard = recipients
        .iter()
        .any(|(user, bits)| spanned.contains(user) && bits & flags::STREAM_WILDCARD_MENTIONED != 0);
    let id = diesel::insert_into(messages::table)
        .values((
            messages::sender_id.eq(message.sender_id.0),
            messages::channel_id.eq(message.channel_id.map(|c| c.0)),
            messages::topic.eq(&message.topic),
            messages::topic_key.eq(message.topic.to_lowercase()),
            messages::dm_key.eq(&message.dm_key),
            messages::dm_group_id.eq(message.dm_group_id),
            messages::recipient_user_id.eq(message.recipient_user_id.map(|u| u.0)),
            messages::content.eq(&message.content),
            messages::rendered_content.eq(&message.rendered_content),
            messages::date_sent.eq(message.date_sent),
            messages::has_link.eq(message.has_link),
            messages::has_image.eq(message.has_image),
            messages::has_attachment.eq(message.has_attachment),
            messages::client.eq(&message.client),
            messages::stream_wildcard_mentioned.eq(stream_wildcard),
        ))
        .returning(messages::id)
        .get_result::<i64>(conn)?;
    let mut rows = Vec::new();
    for (user, bits) in recipients {
        match message.channel_id {
            Some(channel) if spanned.contains(user) => {
                if bits & flags::READ != 0 {
                    crate::read_ranges::add_newest(conn, *user, channel, id)?;
                }
                if let Some(row) = crate::reader_flags::covered_row(*bits) {
                    rows.push((user.0, row));
                }
            }
            _ => rows.push((user.0, *bits)),
        }
    }
    let rows: Vec<_> = rows
        .into_iter()
        .map(|(user, bits)| {
            (
                user_messages::user_id.eq(user),
                user_messages::message_id.eq(id),
                user_messages::flags.eq(bits),
            )
        })
        .collect();
    for chunk in rows.chunks(1000) {
        crate::on_backend!(conn, |c| diesel::insert_into(user_messages::table)
            .values(chunk)
            .execute(c))?;
    }
    Ok(MessageId(id))
}

/// The group conversation of this key, created when missing.
pub fn dm_group(conn: &mut DbConn, key: &str) -> Result<i64, StorageError> {
    if let Some(id) = dm_groups::table
        .filter(dm_groups::dm_key.eq(key))
        .select(dm_groups::id)
        .get_result::<i64>(conn)
        .optional()?
    {
        return Ok(id);
    }
    Ok(diesel::insert_into(dm_groups::table)
        .values(dm_groups::dm_key.eq(key))
        .returning(dm_groups::id)
        .get_result(conn)?)
}

/// On SQLite, a narrow with `search:` read from the full-text index in ID order: the FTS5 table
/// drives the query (its doclists are kept in rowid order, so `rowid <= anchor ORDER BY rowid
/// DESC` walks them from the anchor), each match is joined to the message and the reader's row
/// by primary key, and the `LIMIT` stops the walk once a page is found. Nothing is ranked and
/// the match set is never materialized or sorted: the cost is the matches walked (about the
/// page divided by the share of matches the reader may see), not every match. The generic
/// form (`m.id IN (SELECT rowid …)`) builds the whole match set first.
///
/// None (use [`matching`]) on PostgreSQL, which reads such pages in ID windows instead
/// (`search_windows`), and when the search is not a plain condition of the narrow.
fn matching_by_search(
    conn: &mut DbConn,
    audience: &Audience,
    conditions: &[Condition],
) -> Result<Option<(SqlBuilder, &'static str)>, StorageError> {
    if !matches!(conn, DbConn::Sqlite(_)) {
        return Ok(None);
    }
    let Some((position, text)) = conditions.iter().enumerate().find_map(|(i, c)| match c {
        Condition::Search(text) => Some((i, text)),
        _ => None,
    }) else {
        return Ok(None);
    };
    let query = crate::sql::fts5_query(text);
    if query.is_empty() {
        return Ok(None);
    }
    if conditions.iter().any(|c| matches!(c, Condition::Topic(_))) {
        return Ok(Some(topic_search(
            conn, audience, conditions, position, query,
        )?));
    }
    let (columns, visible) = visible(conn, audience, SpanEnd::Probe)?;
    let mut sql = SqlBuilder::new();
    sql.push_for(
        &format!(
            "SELECT {columns} FROM messages_fts CROSS JOIN messages m \
             ON m.id = messages_fts.rowid LEFT JOIN user_messages um \
             ON um.message_id = m.id AND um.user_id = {READER}"
        ),
        audience.reader.0,
    )
    .push(" WHERE messages_fts MATCH ")
    .bind(Bind::Text(query));
    sql.push(" AND ").append(visible);
    for (i, condition) in conditions.iter().enumerate() {
        if i != position {
            sql.push(" AND ");
            push_condition(&mut sql, condition, false, audience.reader, SpanEnd::Probe);
        }
    }
    Ok(Some((sql, "messages_fts.rowid")))
}

/// A search within one topic on SQLite: the topic's messages are few beside a common word's
/// matches (a topic of a few hundred messages against 200,000 matches of "meeting" in a million
/// messages, where walking the matches for the topic's took 52 ms), so the topic's index
/// (`messages_by_topic`) drives the query in ID order and each message is checked against the
/// full-text index by rowid (`rowid = m.id` with `MATCH`: a seek in each word's doclist).
fn topic_search(
    conn: &mut DbConn,
    audience: &Audience,
    conditions: &[Condition],
    search: usize,
    query: String,
) -> Result<(SqlBuilder, &'static str), StorageError> {
    let others: Vec<Condition> = conditions
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != search)
        .map(|(_, c)| c.clone())
        .collect();
    let (mut sql, column) = matching(conn, audience, &others)?;
    sql.push(" AND EXISTS (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ")
        .bind(Bind::Text(query))
        .push(" AND messages_fts.rowid = m.id)");
    Ok((sql, column))
}

/// Reads up to `limit` messages on one side of `anchor` that the audience may see and that
/// match every condition; `Before` returns newest first, `After` oldest first. A `search:`
/// narrow on PostgreSQL is read in ID windows (`search_windows`), a flag narrow from the
/// reader's flagged rows (`flag_pages`), anything else by the one query of [`matching`].
pub fn page(
    conn: &mut DbConn,
    audience: &Audience,
    conditions: &[Condition],
    anchor: i64,
    direction: Direction,
    include_anchor: bool,
    limit: i64,
) -> Result<Vec<ReadMessage>, StorageError> {
    if limit <= 0 {
        return Ok(Vec::new());
    }
    let side = Side {
        anchor,
        direction,
        include_anchor,
        limit,
    };
    let readers: [PageReader; 2] = [crate::search_windows::page, crate::flag_pages::page];
    for read in readers {
        if let Some(found) = read(conn, audience, conditions, side)? {
            return Ok(found);
        }
    }
    let (op, order) = match (direction, include_anchor) {
        (_, true) => direction.beyond_edge(),
        (Direction::Before, false) => ("<", "DESC"),
        (Direction::After, false) => (">", "ASC"),
    };
    let (mut sql, column) = match matching_by_search(conn, audience, conditions)? {
        Some(found) => found,
        None => matching_among(conn, audience, conditions, true, Some((op, anchor)))?,
    };
    sql.push(&format!(" AND {column} {op} "))
        .bind(Bind::Int(anchor));
    sql.push(&format!(" ORDER BY {column} {order}"));
    if matches!(conn, DbConn::Pg(_)) {
        // Kept prepared, with the limit in the text: PostgreSQL's generic plan then costs the
        // page for its `LIMIT` (bound, its estimate is a tenth of every message, and the plan
        // chosen for that merge-joined or was JIT-compiled), and planning each page was half
        // of its 1 ms. A client uses a few limits, so a few texts per narrow shape.
        sql.push(&format!(" LIMIT {limit}")).prepared();
    } else {
        sql.limit(limit);
    }
    let rows: Vec<PageRow> = sql.load(conn)?;
    Ok(rows
        .into_iter()
        .map(|r| ReadMessage {
            row: r.message,
            flags: r.reader_flags,
        })
        .collect())
}

/// The messages with these IDs that the audience may see and that match the conditions.
pub fn by_ids_for(
    conn: &mut DbConn,
    audience: &Audience,
    ids: &[MessageId],
    conditions: &[Condition],
) -> Result<Vec<ReadMessage>, StorageError> {
    let mut all = conditions.to_vec();
    all.push(Condition::IdIn(ids.to_vec()));
    // Among these IDs an unread narrow is checked message by message (the reader's flags), not
    // through the list of every unread ID (8 ms for three IDs at 5,000 unread on PostgreSQL).
    let (mut sql, column) = matching_among(conn, audience, &all, false, None)?;
    sql.push(&format!(" ORDER BY {column} ASC"));
    let rows: Vec<PageRow> = sql.load(conn)?;
    Ok(rows
        .into_iter()
        .map(|r| ReadMessage {
            row: r.message,
            flags: r.reader_flags,
        })
        .collect())
}

/// The oldest unread message matching the conditions, if any: the first message of the page
/// after ID 0, so that an unread narrow is walked from the reader's oldest unread messages
/// (`flag_pages`, `nearest_ids`) and a search through its windows. Before, every unread ID
/// was listed in one query ordered by ID, whose reader flags PostgreSQL computed for each of
/// them: 18-21 ms for 5,000 unread at 300,000 messages, on every `anchor=first_unread`.
pub fn first_unread(
    conn: &mut DbConn,
    audience: &Audience,
    conditions: &[Condition],
) -> Result<Option<i64>, StorageError> {
    if conditions.iter().all(is_unread) {
        // Unread alone (all messages or `is:unread`, nothing muted): every message the walk
        // finds is a match (`flag_pages`), so the first is the answer without reading its row
        // through the page query, whose planning alone was 0.4 ms of the heavy user's 5 ms page
        // on PostgreSQL.
        let nearest = crate::nearest_ids::NearestIds::unread(conn, audience, None)?;
        let (first, _) = nearest.take(conn, 0, Direction::After, 1)?;
        return Ok(first.first().copied());
    }
    let mut all = conditions.to_vec();
    all.push(Condition::Not(Box::new(Condition::Flag(flags::READ))));
    let first = page(conn, audience, &all, 0, Direction::After, true, 1)?;
    Ok(first.first().map(|m| m.row.id))
}

/// A message by ID, whoever may see it.
pub fn by_id(conn: &mut DbConn, id: MessageId) -> Result<Option<MessageRow>, StorageError> {
    Ok(messages::table
        .find(id.0)
        .select(MessageRow::as_select())
        .get_result(conn)
        .optional()?)
}

/// A user's flags on a message, if they received it or have a row for it.
pub fn flags_of(
    conn: &mut DbConn,
    user: UserId,
    message: MessageId,
) -> Result<Option<i64>, StorageError> {
    Ok(crate::reader_flags::state(conn, user, message)?.and_then(|s| s.flags))
}

/// The highest message ID the user received (or has a row for), or None: the newest of their
/// rows and, per span, the newest message of its channel inside it (one probe of
/// `messages_by_channel` each). The page query with no narrow gave the same answer but cost
/// PostgreSQL a millisecond of planning on every register.
pub fn max_id_for(conn: &mut DbConn, user: UserId) -> Result<Option<i64>, StorageError> {
    #[derive(QueryableByName)]
    struct MaxId {
        #[diesel(sql_type = Nullable<BigInt>)]
        id: Option<i64>,
    }
    let mut sql = SqlBuilder::new();
    sql.push("SELECT MAX(id) AS id FROM (SELECT MAX(message_id) AS id FROM user_messages WHERE user_id = ")
        .bind(Bind::Int(user.0))
        .push(
            " UNION ALL SELECT (SELECT m.id FROM messages m WHERE m.channel_id = s.channel_id \
             AND m.id >= s.first_message_id \
             AND (s.end_message_id IS NULL OR m.id < s.end_message_id) \
             ORDER BY m.id DESC LIMIT 1) AS id FROM subscription_spans s WHERE s.user_id = ",
        )
        .bind(Bind::Int(user.0))
        .push(") newest");
    Ok(sql
        .prepared()
        .load::<MaxId>(conn)?
        .first()
        .and_then(|row| row.id))
}

/// Everyone who received a message (or has a row for it).
pub fn recipients_of(conn: &mut DbConn, message: MessageId) -> Result<Vec<UserId>, StorageError> {
    Ok(crate::reader_flags::holders(conn, message)?
        .into_iter()
        .map(|(user, _)| user)
        .collect())
}

/// Distinct senders of a channel topic (its participants, with reactors added by the caller).
pub fn topic_senders(
    conn: &mut DbConn,
    channel: ChannelId,
    topic: &str,
) -> Result<Vec<UserId>, StorageError> {
    Ok(messages::table
        .filter(messages::channel_id.eq(channel.0))
        .filter(messages::topic_key.eq(topic.to_lowercase()))
        .select(messages::sender_id)
        .distinct()
        .load::<i64>(conn)?
        .into_iter()
        .map(UserId)
        .collect())
}

/// Changes flags: sets (`add`) or clears a bit on the messages the user received (or has a row
/// for); returns the IDs whose flags changed.
pub use crate::reader_flags::set_bit as update_flags;

/// Gives a user a row for a message they read from history, so that flags can be kept.
pub fn add_historical_row(
    conn: &mut DbConn,
    user: UserId,
    message: MessageId,
    bits: i64,
) -> Result<(), StorageError> {
    crate::reader_flags::write_row(conn, user, message, Some(bits))
}

/// Marks every unread message of a user matching the conditions as read; returns their IDs.
pub fn mark_read_where(
    conn: &mut DbConn,
    user: UserId,
    conditions: &[Condition],
) -> Result<Vec<MessageId>, StorageError> {
    let audience = Audience::new(user, Vec::new());
    let mut all = conditions.to_vec();
    all.push(Condition::Not(Box::new(Condition::Flag(flags::READ))));
    // Only the IDs: the page's columns (content, the reader's flags) are not needed here.
    let (inner, _) = matching(conn, &audience, &all)?;
    let mut sql = SqlBuilder::new();
    sql.push("SELECT q.id AS id FROM (");
    sql.append(inner);
    sql.push(") q ORDER BY q.id ASC");
    let ids: Vec<MessageId> = sql
        .load::<crate::sql::IdRow>(conn)?
        .into_iter()
        .map(|r| MessageId(r.id))
        .collect();
    // All at once: the read ranges of each channel are then rewritten once, not once per batch
    // of IDs (`mark_all_as_read` of 3,892 unread in 100 channels took 607 ms on PostgreSQL in
    // batches of 500).
    update_flags(conn, user, &ids, flags::READ, true)?;
    Ok(ids)
}

/// Unread counts are derived from this: the IDs of a user's unread messages, in ID order.
pub fn unread_ids(conn: &mut DbConn, user: UserId) -> Result<Vec<MessageId>, StorageError> {
    crate::unread::ids(conn, user)
}

#[derive(QueryableByName)]
struct TopicRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    topic_key: String,
    #[diesel(sql_type = BigInt)]
    max_id: i64,
}

/// A channel's topics the audience may see, newest first: the name as in the topic's latest
/// message, and that message's ID. Topics differing only in case are one topic.
pub fn topics(
    conn: &mut DbConn,
    audience: &Audience,
    channel: ChannelId,
) -> Result<Vec<(String, i64)>, StorageError> {
    let (inner, _) = matching(conn, audience, &[Condition::Channel(channel)])?;
    let mut outer = SqlBuilder::new();
    outer.push("SELECT q.topic_key AS topic_key, MAX(q.id) AS max_id FROM (");
    outer.append(inner);
    outer.push(") q GROUP BY q.topic_key ORDER BY max_id DESC");
    let rows: Vec<TopicRow> = outer.load(conn)?;
    let ids: Vec<i64> = rows.iter().map(|r| r.max_id).collect();
    let names: std::collections::HashMap<i64, String> = messages::table
        .filter(messages::id.eq_any(&ids))
        .select((messages::id, messages::topic))
        .load::<(i64, String)>(conn)?
        .into_iter()
        .collect();
    Ok(rows
        .into_iter()
        .map(|r| {
            (
                names.get(&r.max_id).cloned().unwrap_or(r.topic_key),
                r.max_id,
            )
        })
        .collect())
}

/// Deletes messages with their recipients' rows and reactions.
pub fn delete(conn: &mut DbConn, ids: &[MessageId]) -> Result<usize, StorageError> {
    let raw: Vec<i64> = ids.iter().map(|m| m.0).collect();
    diesel::delete(
        crate::schema::reactions::table.filter(crate::schema::reactions::message_id.eq_any(&raw)),
    )
    .execute(conn)?;
    diesel::delete(user_messages::table.filter(user_messages::message_id.eq_any(&raw)))
        .execute(conn)?;
    Ok(diesel::delete(messages::table.filter(messages::id.eq_any(&raw))).execute(conn)?)
}

/// A message's new content.
#[derive(Debug, Clone)]
pub struct ContentChange {
    /// Markdown.
    pub content: String,
    /// HTML.
    pub rendered_content: String,
    /// Contains a link.
    pub has_link: bool,
    /// Contains an image.
    pub has_image: bool,
    /// Links to an uploaded file.
    pub has_attachment: bool,
}

/// Replaces a message's content and records the edit.
pub fn set_content(
    conn: &mut DbConn,
    id: MessageId,
    change: &ContentChange,
    edit_time: i64,
    history: &str,
) -> Result<(), StorageError> {
    diesel::update(messages::table.find(id.0))
        .set((
            messages::content.eq(&change.content),
            messages::rendered_content.eq(&change.rendered_content),
            messages::has_link.eq(change.has_link),
            messages::has_image.eq(change.has_image),
            messages::has_attachment.eq(change.has_attachment),
            messages::last_edit_time.eq(edit_time),
            messages::edit_history.eq(history),
        ))
        .execute(conn)?;
    Ok(())
}

/// Moves a message to a channel and topic and records the move; `moved_time` is None for
/// resolving and unresolving, which are not moves. Moving to another channel keeps everyone's
/// flags as they were: whoever received the message before still has it with the same flags,
/// in the form the new channel's spans allow, and nobody receives it through a span of the new
/// channel who did not before (the callers then give and take rows by the new channel's rules).
/// A move to another channel must hold both channels' move and send locks first
/// (`spans::hold_channels_for_move`): the message arrives among the new channel's messages with
/// its old ID, and nobody may join read ranges across it before the move commits.
pub fn set_location(
    conn: &mut DbConn,
    id: MessageId,
    channel: ChannelId,
    topic: &str,
    edit_time: i64,
    moved_time: Option<i64>,
    history: &str,
) -> Result<(), StorageError> {
    let old_channel = crate::reader_flags::channel_of(conn, id)?.and_then(|(c, _)| c);
    let before = if old_channel != Some(channel.0) {
        Some(crate::reader_flags::holders(conn, id)?)
    } else {
        None
    };
    diesel::update(messages::table.find(id.0))
        .set((
            messages::channel_id.eq(channel.0),
            messages::topic.eq(topic),
            messages::topic_key.eq(topic.to_lowercase()),
            messages::last_edit_time.eq(edit_time),
            messages::edit_history.eq(history),
        ))
        .execute(conn)?;
    if let Some(moved) = moved_time {
        diesel::update(messages::table.find(id.0))
            .set(messages::last_moved_time.eq(moved))
            .execute(conn)?;
    }
    if let Some(before) = before {
        let after = crate::reader_flags::holders(conn, id)?;
        for (user, _) in &after {
            if !before.iter().any(|(u, _)| u == user) {
                crate::reader_flags::set(conn, *user, id, None)?;
            }
        }
        for (user, bits) in before {
            crate::reader_flags::set(conn, user, id, Some(bits))?;
        }
    }
    Ok(())
}

/// Sets or clears the `mentioned` flag of a message's recipients to match `mentioned`.
pub fn set_mentions(
    conn: &mut DbConn,
    id: MessageId,
    mentioned: &[UserId],
) -> Result<(), StorageError> {
    for (user, bits) in crate::reader_flags::holders(conn, id)? {
        let wanted = if mentioned.contains(&user) {
            bits | flags::MENTIONED
        } else {
            bits & !flags::MENTIONED
        };
        if wanted != bits {
            crate::reader_flags::set(conn, user, id, Some(wanted))?;
        }
    }
    Ok(())
}

/// Takes the messages away from everyone not in `keep` (who lose access after a move).
pub fn remove_rows_except(
    conn: &mut DbConn,
    ids: &[MessageId],
    keep: &[UserId],
) -> Result<(), StorageError> {
    for id in ids {
        for (user, _) in crate::reader_flags::holders(conn, *id)? {
            if !keep.contains(&user) {
                crate::reader_flags::set(conn, user, *id, None)?;
            }
        }
    }
    Ok(())
}

/// Gives `users` the messages, with `bits`, where they do not have them.
pub fn ensure_rows(
    conn: &mut DbConn,
    ids: &[MessageId],
    users: &[UserId],
    bits: i64,
) -> Result<(), StorageError> {
    for id in ids {
        let have: Vec<UserId> = crate::reader_flags::holders(conn, *id)?
            .into_iter()
            .map(|(user, _)| user)
            .collect();
        for user in users {
            if !have.contains(user) {
                crate::reader_flags::set(conn, *user, *id, Some(bits))?;
            }
        }
    }
    Ok(())
}

/// Sets when a message was sent (for imported history).
pub fn set_date_sent(conn: &mut DbConn, id: MessageId, date_sent: i64) -> Result<(), StorageError> {
    diesel::update(messages::table.find(id.0))
        .set(messages::date_sent.eq(date_sent))
        .execute(conn)?;
    Ok(())
}

/// Users who have read a message (their flags on it have `read`), in ID order.
pub fn readers(conn: &mut DbConn, id: MessageId) -> Result<Vec<UserId>, StorageError> {
    Ok(crate::reader_flags::holders(conn, id)?
        .into_iter()
        .filter(|(_, bits)| bits & flags::READ != 0)
        .map(|(user, _)| user)
        .collect())
}

/// Which of these messages the user received or has a row for.
pub fn with_rows(
    conn: &mut DbConn,
    user: UserId,
    ids: &[MessageId],
) -> Result<std::collections::HashSet<MessageId>, StorageError> {
    Ok(crate::reader_flags::flags_for(conn, user, ids)?
        .into_iter()
        .filter(|(_, bits)| bits.is_some())
        .map(|(id, _)| id)
        .collect())
}

/// Everyone who received a message (or has a row for it), with their flags.
pub fn recipient_flags(
    conn: &mut DbConn,
    message: MessageId,
) -> Result<Vec<(UserId, i64)>, StorageError> {
    crate::reader_flags::holders(conn, message)
}

/// Everyone who received any of these messages (or has a row for one).
pub fn recipients_of_any(
    conn: &mut DbConn,
    ids: &[MessageId],
) -> Result<Vec<UserId>, StorageError> {
    let mut out = Vec::new();
    for id in ids {
        out.extend(
            crate::reader_flags::holders(conn, *id)?
                .into_iter()
                .map(|(user, _)| user),
        );
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// What a send reads of its topic before it writes ([`topic_for_send`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicForSend {
    /// Whether the topic has any message.
    pub has_messages: bool,
    /// The sender's visibility policy for the topic, if they set one.
    pub sender_policy: Option<i64>,
}

/// Whether a channel's topic has any message, and `user`'s visibility policy for the topic if
/// they set one: what a send to the topic reads before it writes, in one statement.
pub fn topic_for_send(
    conn: &mut DbConn,
    channel: ChannelId,
    topic: &str,
    user: UserId,
) -> Result<TopicForSend, StorageError> {
    use crate::schema::user_topics;
    let key = topic.to_lowercase();
    Ok(diesel::select((
        diesel::dsl::exists(
            messages::table
                .filter(messages::channel_id.eq(channel.0))
                .filter(messages::topic_key.eq(&key)),
        ),
        user_topics::table
            .filter(user_topics::user_id.eq(user.0))
            .filter(user_topics::channel_id.eq(channel.0))
            .filter(user_topics::topic_key.eq(&key))
            .select(user_topics::visibility_policy)
            .single_value(),
    ))
    .get_result(conn)
    .map(|(has_messages, sender_policy)| TopicForSend {
        has_messages,
        sender_policy,
    })?)
}

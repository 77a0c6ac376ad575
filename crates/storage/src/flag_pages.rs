//! Pages of a narrow whose messages all carry one of the reader's flags (`is:starred`,
//! `is:mentioned`, `is:alerted`, alone or with a channel, topic, sender or other term), read
//! from the reader's flagged rows first.
//!
//! Such a narrow's candidates are few and sparse over the history: the reader's
//! `user_messages` rows with the bit (a partial index each: `user_messages_starred`,
//! `user_messages_mentioned`, `user_messages_alerted`), and, for `is:mentioned`, the `@all`
//! messages (`messages.stream_wildcard_mentioned`, partial index `messages_stream_wildcard`)
//! inside the reader's spans, whose flag comes from the message (`reader_flags`). Asked as one
//! query (`ORDER BY m.id DESC LIMIT n` over messages joined with the reader's rows), PostgreSQL
//! walks the messages' primary key from the anchor until `n` of them have matched: at 200,000
//! messages and 101 starred rows, 198,287 entries. Here the candidates' IDs are read first,
//! the `size` nearest the anchor on its side (an index range of the partial index, and one
//! range of the `@all` index per span), and the page is the generic query restricted to those
//! IDs (`m.id IN (...)`, primary-key probes), which checks every condition of the narrow,
//! the flag itself included, exactly as before. When the other conditions leave the page short
//! (a channel narrow whose starred messages are mostly elsewhere), the next candidates beyond
//! the last ones read are taken, twice as many each time (four times after a window that gave
//! nothing), until the page is full or the candidates are exhausted; after
//! [`MAX_CANDIDATES`] the rest of the page is left to the generic query.
//!
//! Both backends read such pages this way.
//!
//! Followed topics (`is:followed`) are read the same way from each topic's own index range.
//!
//! Unread narrows (`is:unread`, alone or with other terms, not with `search:`) are read the same
//! way from the reader's unread messages nearest the anchor ([`NearestIds`], found without
//! the history and without reading every unread message), instead of listing every unread ID in
//! one page query.
//!
//! The page of all messages (no narrow) is read the same way from the reader's spans and own
//! rows ([`NearestIds::visible`]), after a first look near the anchor ([`nearby`]): for a
//! reader who receives a small share of the messages, the generic query walked every message
//! from the anchor to find theirs.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::message_query::{
    among_ids, asks_unread, matching_among, Audience, Condition, Direction, PageRow, Side,
};
use crate::message_rows::ReadMessage;
use crate::nearest_ids::NearestIds;
use crate::sql::{Bind, IdRow, SqlBuilder};
use parley_domain::message::flags;
use parley_domain::{ChannelId, UserId};

/// Most candidate IDs read in one window (and listed in one page query).
const MAX_WINDOW: i64 = 20_000;
/// After this many candidates without a full page (the other terms are far more selective than
/// the flag: a channel with few of many thousand starred messages), the rest of the page is
/// read by the generic query from where the candidates stopped, which serves such narrows from
/// the other terms' indexes.
const MAX_CANDIDATES: usize = 40_000;

/// The bit of the flag whose rows drive the page, if the narrow has one: a plain (not negated,
/// top-level) flag condition on a bit that is never the default of a message without a row
/// (`read`, `historical`). `starred` is preferred, then the first such condition. None for
/// narrows that ask for unread messages (the unread IDs drive those) or search (the search
/// paths do).
///
/// `is:dm` and `dm-including:` are driven by the `is_private` bit: a reader sees a direct
/// message only through their own row, which every send writes with that bit (the index
/// `user_messages_private`), so those rows are every candidate; the page query still checks
/// the narrow's terms. Walking the history for direct messages read the heavy user's whole
/// history when they were few. `dm:` has its conversation's own index (`messages_by_dm`).
fn driver(conditions: &[Condition]) -> Option<i64> {
    let mut found = None;
    for condition in conditions {
        match condition {
            Condition::Search(_) => return None,
            Condition::Not(inner) if matches!(**inner, Condition::Flag(flags::READ)) => {
                return None
            }
            Condition::Flag(bit)
                if *bit != 0
                    && bit & (flags::READ | flags::HISTORICAL) == 0
                    && (*bit == flags::STARRED || found.is_none()) =>
            {
                found = Some(*bit);
            }
            Condition::IsDm | Condition::DmIncluding(_) if found.is_none() => {
                found = Some(flags::IS_PRIVATE);
            }
            _ => {}
        }
    }
    found
}

/// The channels a message must be in to match, when a top-level condition says so.
fn channels_of(conditions: &[Condition]) -> Option<&[ChannelId]> {
    conditions.iter().find_map(|c| match c {
        Condition::Channel(channel) => Some(std::slice::from_ref(channel)),
        Condition::ChannelIn(channels) => Some(channels.as_slice()),
        _ => None,
    })
}

/// Reads a page of a flag narrow from the reader's flagged rows; None when the narrow has no
/// such flag (the caller's generic query serves it). Same page as the generic query: the
/// `limit` matching messages nearest the anchor on `direction`'s side, nearest first.
pub(crate) fn page(
    conn: &mut DbConn,
    audience: &Audience,
    conditions: &[Condition],
    side: Side,
) -> Result<Option<Vec<ReadMessage>>, StorageError> {
    let Side {
        direction, limit, ..
    } = side;
    let mut topic_list = None;
    // What a first read near the anchor found (the page of all messages), and where the walk
    // goes on from.
    let mut found: Vec<ReadMessage> = Vec::new();
    let mut edge = side.first_id();
    let driver = match driver(conditions) {
        Some(bit) => Driver::Rows(bit),
        None if asks_unread(conditions)
            && !conditions.iter().any(|c| matches!(c, Condition::Search(_))) =>
        {
            Driver::Unread(NearestIds::unread(conn, audience, channels_of(conditions))?)
        }
        None if conditions.is_empty() && audience.history_channels.is_empty() => {
            match received(conn, audience, side)? {
                Received::Page(page) => return Ok(Some(page)),
                Received::Walk(near, beyond, nearest) => {
                    (found, edge) = (near, beyond);
                    Driver::Visible(nearest)
                }
            }
        }
        None => match followed(conditions) {
            Some((at, topics)) => {
                topic_list = Some(at);
                Driver::Topics(topics)
            }
            None => return Ok(None),
        },
    };
    // Every candidate of a followed-topics narrow is a message of one of its topics (read from
    // the topics' own index), so the page query does not check the topic list again: on SQLite,
    // written out as one condition per topic, it was most of the cost of preparing that query.
    // (Both statements run apart, as a page's statements do: a message moved out of the topics
    // between them is shown as it was, as if the page had been read a moment earlier.)
    let checked: Vec<Condition> = conditions
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != topic_list)
        .map(|(_, c)| c.clone())
        .collect();
    let (base, _) = matching_among(conn, audience, &checked, false, None)?;
    let order = match direction {
        Direction::Before => "DESC",
        Direction::After => "ASC",
    };
    // Alone (or with no narrow), every candidate is a match (one row, or unread, received or
    // followed topic's message, is one message), but for `dm-including:`, whose candidates are
    // every direct message; with other terms a few times more are read at first.
    let alone = conditions.len() <= 1 && !matches!(conditions, [Condition::DmIncluding(_)]);
    let mut size = if alone {
        limit - i64::try_from(found.len()).unwrap_or(0)
    } else {
        limit.saturating_mul(4).max(64)
    }
    .min(MAX_WINDOW);
    let mut walked = 0;
    loop {
        let need = limit - i64::try_from(found.len()).unwrap_or(i64::MAX);
        if walked >= MAX_CANDIDATES && !matches!(driver, Driver::Unread(_) | Driver::Visible(_)) {
            let (op, _) = direction.beyond_edge();
            let (mut sql, _) = matching_among(conn, audience, conditions, false, None)?;
            sql.push(&format!(" AND m.id {op} "))
                .bind(Bind::Int(edge))
                .push(&format!(" ORDER BY m.id {order}"))
                .limit(need);
            let rows: Vec<PageRow> = sql.prepared().load(conn)?;
            found.extend(rows.into_iter().map(PageRow::into_read));
            break;
        }
        let (ids, exhausted) = match &driver {
            Driver::Rows(bit) => candidates(conn, audience.reader, *bit, edge, direction, size)?,
            Driver::Unread(nearest) | Driver::Visible(nearest) => {
                nearest.take(conn, edge, direction, size)?
            }
            Driver::Topics(topics) => in_topics(conn, topics, edge, direction, size)?,
        };
        let Some(&last) = ids.last() else {
            break;
        };
        walked += ids.len();
        let rows = among_ids(conn, &base, &ids, direction, need)?;
        let got = rows.len();
        found.extend(rows);
        if i64::try_from(found.len()).unwrap_or(i64::MAX) >= limit || exhausted {
            break;
        }
        edge = match direction {
            Direction::Before => last.saturating_sub(1),
            Direction::After => last.saturating_add(1),
        };
        size = size
            .saturating_mul(if got == 0 { 4 } else { 2 })
            .min(MAX_WINDOW);
    }
    Ok(Some(found))
}

/// IDs read near the anchor by the generic query, per message of the page, before the page of
/// all messages walks the reader's spans: a reader who receives at least a quarter of the
/// messages finds the page there in one statement (the walk's three cost the benchmark's
/// heavy user, who receives 55 %, 0.6–1 ms more a page), and a reader who receives few pays at
/// most this many messages' checks before the walk.
const NEARBY_IDS_PER_ROW: i64 = 4;

/// How the page of all messages goes on after its first try near the anchor ([`nearby`]).
enum Received {
    /// The try found the whole page.
    Page(Vec<ReadMessage>),
    /// What it found, the ID beyond the IDs it read, and the reader's spans to walk from there.
    Walk(Vec<ReadMessage>, i64, NearestIds),
}

/// The page of all messages: its first try near the anchor, then (when the reader's messages
/// are too sparse there for a page) the spans to walk, whose first window is wide enough for the
/// rest of the page at the share of the reader's messages the try saw, twice over.
fn received(conn: &mut DbConn, audience: &Audience, side: Side) -> Result<Received, StorageError> {
    let (near, beyond) = nearby(conn, audience, side)?;
    let got = i64::try_from(near.len()).unwrap_or(i64::MAX);
    if got >= side.limit {
        return Ok(Received::Page(near));
    }
    let reach = side.limit.saturating_mul(NEARBY_IDS_PER_ROW);
    let width = (side.limit - got)
        .saturating_mul(reach / got.max(1))
        .saturating_mul(2);
    let nearest = NearestIds::visible(conn, audience)?.starting_with(width);
    Ok(Received::Walk(near, beyond, nearest))
}

/// The page of all messages within [`NEARBY_IDS_PER_ROW`] IDs per message of the anchor, by the
/// generic query, nearest first; and the ID beyond that window, where the walk goes on.
fn nearby(
    conn: &mut DbConn,
    audience: &Audience,
    side: Side,
) -> Result<(Vec<ReadMessage>, i64), StorageError> {
    let reach = side.limit.saturating_mul(NEARBY_IDS_PER_ROW);
    let (low, high, beyond, order) = match side.direction {
        Direction::Before => {
            // From the newest message at most (`anchor=newest` is far above it), read with the
            // reader's spans, which the walk needs next when the reader's messages are sparse.
            let high = side.first_id().min(audience.span_ranges(conn)?.1);
            let low = high.saturating_sub(reach - 1);
            (low, high, low.saturating_sub(1), "DESC")
        }
        Direction::After => {
            let low = side.first_id();
            let high = low.saturating_add(reach - 1);
            (low, high, high.saturating_add(1), "ASC")
        }
    };
    // The generic page query's shape (`messages::page`), bounded on both sides.
    let (mut sql, _) = matching_among(conn, audience, &[], false, Some((">=", low)))?;
    sql.push(" AND m.id >= ")
        .bind(Bind::Int(low))
        .push(" AND m.id <= ")
        .bind(Bind::Int(high))
        .push(&format!(" ORDER BY m.id {order}"));
    if matches!(conn, DbConn::Pg(_)) {
        sql.push(&format!(" LIMIT {}", side.limit)).prepared();
    } else {
        sql.limit(side.limit).prepared();
    }
    let rows: Vec<PageRow> = sql.load(conn)?;
    Ok((rows.into_iter().map(PageRow::into_read).collect(), beyond))
}

/// What a page's candidates are read from.
enum Driver {
    /// The reader's rows with this bit (and `@all` messages, for mentions).
    Rows(i64),
    /// The reader's unread messages, read nearest the anchor first.
    Unread(NearestIds),
    /// Every message the reader received, read nearest the anchor first (no narrow).
    Visible(NearestIds),
    /// The messages of these topics (`is:followed`), read nearest the anchor first.
    Topics(Vec<(ChannelId, String)>),
}

/// Most topics whose messages are read as candidates, one index range each; a narrow with more
/// is left to the generic query.
const MAX_TOPICS: usize = 500;

/// The topics a message must be in to match (`is:followed`: a top-level list of topics), and
/// that condition's place among the narrow's, when the narrow has no search; at most
/// [`MAX_TOPICS`]. Such a narrow's messages are few and spread over the history, which the
/// generic query walks for them (SQLite, 300,000 messages, the heavy user's 48 followed topics:
/// 12.7 ms for the newest 100, 3.7 ms from the topics); each topic's own index range
/// (`messages_by_topic`) gives them in ID order.
fn followed(conditions: &[Condition]) -> Option<(usize, Vec<(ChannelId, String)>)> {
    if conditions.iter().any(|c| matches!(c, Condition::Search(_))) {
        return None;
    }
    conditions.iter().enumerate().find_map(|(at, c)| match c {
        Condition::TopicIn(topics) if !topics.is_empty() && topics.len() <= MAX_TOPICS => {
            Some((at, topics.clone()))
        }
        _ => None,
    })
}

/// The `size` IDs of messages in `topics` nearest `edge` (inclusive) on `direction`'s side,
/// nearest first, and whether they are all there are: the `size` nearest of each topic (an
/// index range of `messages_by_topic`), merged. Whoever may see them: the page query checks.
/// On PostgreSQL the topics are bound as two arrays and each is a `LATERAL` read, one text kept
/// prepared for any topics (a `UNION ALL` of a `SELECT` per topic took 2 ms to plan for 24
/// topics). SQLite has no `LATERAL`: there the `UNION ALL` is kept prepared, one text per
/// number of topics and size (preparing it for 49 topics took about a millisecond).
fn in_topics(
    conn: &mut DbConn,
    topics: &[(ChannelId, String)],
    edge: i64,
    direction: Direction,
    size: i64,
) -> Result<(Vec<i64>, bool), StorageError> {
    let (op, order) = direction.beyond_edge();
    let mut sql = SqlBuilder::new();
    if matches!(conn, DbConn::Pg(_)) {
        let pairs: Vec<(i64, String)> = topics
            .iter()
            .map(|(channel, key)| (channel.0, key.to_lowercase()))
            .collect();
        sql.with_pairs(&pairs)
            .push(&format!(
                " SELECT x.id AS id FROM t CROSS JOIN LATERAL (SELECT m.id FROM messages m \
                 WHERE m.channel_id = t.c AND m.topic_key = t.k AND m.id {op} "
            ))
            .bind(Bind::Int(edge))
            .push(&format!(" ORDER BY m.id {order}"))
            .limit(size)
            .push(&format!(") x ORDER BY x.id {order}"))
            .limit(size)
            .prepared();
    } else {
        sql.push("SELECT id FROM (");
        for (i, (channel, topic_key)) in topics.iter().enumerate() {
            if i > 0 {
                sql.push(" UNION ALL ");
            }
            sql.push("SELECT id FROM (SELECT id FROM messages WHERE channel_id = ")
                .bind(Bind::Int(channel.0))
                .push(" AND topic_key = ")
                .bind(Bind::Text(topic_key.to_lowercase()))
                .push(&format!(" AND id {op} "))
                .bind(Bind::Int(edge))
                .push(&format!(" ORDER BY id {order}"))
                .limit(size)
                .push(&format!(") t{i}"));
        }
        sql.push(&format!(") c ORDER BY id {order}"))
            .limit(size)
            .prepared();
    }
    let ids: Vec<i64> = sql.load::<IdRow>(conn)?.into_iter().map(|r| r.id).collect();
    let exhausted = ids.len() < usize::try_from(size).unwrap_or(usize::MAX);
    Ok((ids, exhausted))
}

/// The `size` candidate IDs nearest `edge` (inclusive) on `direction`'s side, nearest first,
/// and whether they are all there are: the reader's rows with any of `bit` (through the partial
/// index whose predicate is `(flags & bit) <> 0`), and, when `bit` has `@all`, the `@all`
/// messages inside the reader's spans. A superset of the matches: the page query checks each.
fn candidates(
    conn: &mut DbConn,
    reader: UserId,
    bit: i64,
    edge: i64,
    direction: Direction,
    size: i64,
) -> Result<(Vec<i64>, bool), StorageError> {
    let (op, order) = direction.beyond_edge();
    let u = reader.0;
    // The flag stays a literal: it is the partial index's predicate.
    let mut sql = SqlBuilder::new();
    sql.push("SELECT message_id AS id FROM user_messages WHERE user_id = ")
        .bind(Bind::Int(u))
        .push(&format!(" AND (flags & {bit}) <> 0 AND message_id {op} "))
        .bind(Bind::Int(edge))
        .push(&format!(" ORDER BY message_id {order}"))
        .limit(size);
    let mut ids: Vec<i64> = sql
        .prepared()
        .load::<IdRow>(conn)?
        .into_iter()
        .map(|r| r.id)
        .collect();
    if bit & flags::STREAM_WILDCARD_MENTIONED != 0 {
        // Per span, the `@all` messages of its channel inside it (`messages_stream_wildcard`).
        let mut sql = SqlBuilder::new();
        sql.push(
            "SELECT m.id AS id FROM subscription_spans s JOIN messages m \
             ON m.channel_id = s.channel_id AND m.stream_wildcard_mentioned \
             AND m.id >= s.first_message_id \
             AND (s.end_message_id IS NULL OR m.id < s.end_message_id) \
             WHERE s.user_id = ",
        )
        .bind(Bind::Int(u))
        .push(&format!(" AND m.id {op} "))
        .bind(Bind::Int(edge))
        .push(&format!(" ORDER BY m.id {order}"))
        .limit(size);
        ids.extend(
            sql.prepared()
                .load::<IdRow>(conn)?
                .into_iter()
                .map(|r| r.id),
        );
        ids.sort_unstable();
        ids.dedup();
        if direction == Direction::Before {
            ids.reverse();
        }
    }
    let wanted = usize::try_from(size).unwrap_or(usize::MAX);
    let exhausted = ids.len() < wanted;
    ids.truncate(wanted);
    Ok((ids, exhausted))
}

#[cfg(test)]
mod tests {
    use super::*;
    use parley_domain::ChannelId;

    #[test]
    fn the_driver_is_a_plain_flag_that_needs_a_row_or_an_all_mention() {
        let mentioned = flags::MENTIONED | flags::STREAM_WILDCARD_MENTIONED;
        assert_eq!(driver(&[Condition::Flag(flags::STARRED)]), Some(2));
        assert_eq!(
            driver(&[
                Condition::Channel(ChannelId(1)),
                Condition::Flag(mentioned),
                Condition::Flag(flags::STARRED),
            ]),
            Some(flags::STARRED)
        );
        assert_eq!(
            driver(&[Condition::Flag(mentioned)]),
            Some(mentioned),
            "@all is read from the messages"
        );
        assert_eq!(driver(&[Condition::Channel(ChannelId(1))]), None);
        assert_eq!(driver(&[Condition::Flag(flags::READ)]), None);
        assert_eq!(
            driver(&[Condition::Not(Box::new(Condition::Flag(flags::STARRED)))]),
            None
        );
        assert_eq!(
            driver(&[
                Condition::Flag(flags::STARRED),
                Condition::Not(Box::new(Condition::Flag(flags::READ))),
            ]),
            None,
            "unread IDs drive unread narrows"
        );
        assert_eq!(
            driver(&[
                Condition::Flag(flags::STARRED),
                Condition::Search("deploy".into())
            ]),
            None
        );
    }

    #[test]
    fn direct_message_narrows_are_driven_by_the_private_rows() {
        assert_eq!(driver(&[Condition::IsDm]), Some(flags::IS_PRIVATE));
        assert_eq!(
            driver(&[Condition::DmIncluding(UserId(7))]),
            Some(flags::IS_PRIVATE)
        );
        assert_eq!(
            driver(&[Condition::IsDm, Condition::Flag(flags::STARRED)]),
            Some(flags::STARRED)
        );
        assert_eq!(
            driver(&[Condition::Not(Box::new(Condition::IsDm))]),
            None,
            "the channel messages are not among the private rows"
        );
        assert_eq!(driver(&[Condition::DmKey("1,2".into())]), None);
        assert_eq!(
            driver(&[
                Condition::IsDm,
                Condition::Not(Box::new(Condition::Flag(flags::READ)))
            ]),
            None
        );
    }
}

//! A reader's spans and read ranges, and the newest message's ID, read in one statement: the
//! unread walks and counts derive the gaps between read ranges from them (`unread`,
//! `nearest_ids`), and a request that read them takes the channels of the reader's spans
//! from them too (`message_query::Audience`). Read apart they were three statements, and a page
//! around the first unread message read a fourth for the span channels. (A page that needs no
//! gaps reads the span channels alone: an index-only read, several times cheaper than this.)
//! A narrow that names its channels reads theirs alone: the heavy user's first unread message
//! in one channel read 101 spans and 1,405 read ranges to keep one span and a few ranges.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::sql::{Bind, SqlBuilder};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable};
use parley_domain::UserId;
use std::collections::HashMap;

/// What one statement read about a reader.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ReaderSpans {
    /// `(channel, first message, end)` per span: the end is exclusive, None while subscribed.
    spans: Vec<(i64, i64, Option<i64>)>,
    /// Per channel, the read ranges `(low, high)`, ascending and disjoint.
    ranges: HashMap<i64, Vec<(i64, i64)>>,
    /// The newest message's ID (0 when there is none).
    pub(crate) newest: i64,
}

#[derive(QueryableByName)]
struct Row {
    /// 0: a span, 1: a read range, 2: the newest message.
    #[diesel(sql_type = BigInt)]
    kind: i64,
    #[diesel(sql_type = BigInt)]
    channel: i64,
    #[diesel(sql_type = BigInt)]
    low: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    high: Option<i64>,
}

impl ReaderSpans {
    /// Reads them: every channel's, or only those of `channels`.
    pub(crate) fn read(
        conn: &mut DbConn,
        user: UserId,
        channels: Option<&[i64]>,
    ) -> Result<Self, StorageError> {
        Self::read_with(conn, user, channels, true)
    }

    /// Reads the spans and the newest message alone, without the read ranges: for the page of
    /// all messages (`nearest_ids`), which needs no gaps. A reader has a span or a few per
    /// channel, but read ranges by the thousand when their unread messages are scattered.
    pub(crate) fn read_spans(conn: &mut DbConn, user: UserId) -> Result<Self, StorageError> {
        Self::read_with(conn, user, None, false)
    }

    fn read_with(
        conn: &mut DbConn,
        user: UserId,
        channels: Option<&[i64]>,
        with_ranges: bool,
    ) -> Result<Self, StorageError> {
        let mut sql = SqlBuilder::new();
        // One channel (a channel or topic narrow) is bound as a value, so that the text stays
        // prepared on SQLite too, where an ID list is written into it.
        let only = |sql: &mut SqlBuilder| match channels {
            Some([channel]) => {
                sql.push(" AND channel_id = ").bind(Bind::Int(*channel));
            }
            Some(channels) => {
                sql.ids_in(" AND channel_id", channels.iter().copied());
            }
            None => {}
        };
        sql.push(
            "SELECT CAST(0 AS BIGINT) AS kind, channel_id AS channel, first_message_id AS low, \
             end_message_id AS high FROM subscription_spans WHERE user_id = ",
        )
        .bind(Bind::Int(user.0));
        only(&mut sql);
        if with_ranges {
            sql.push(
                " UNION ALL SELECT CAST(1 AS BIGINT), channel_id, low, high \
                 FROM read_ranges WHERE user_id = ",
            )
            .bind(Bind::Int(user.0));
            only(&mut sql);
        }
        sql.push(
            " UNION ALL SELECT CAST(2 AS BIGINT), CAST(0 AS BIGINT), \
             COALESCE(MAX(id), CAST(0 AS BIGINT)), CAST(NULL AS BIGINT) FROM messages",
        )
        .prepared();
        let mut out = ReaderSpans::default();
        for row in sql.load::<Row>(conn)? {
            match row.kind {
                0 => out.spans.push((row.channel, row.low, row.high)),
                1 => out
                    .ranges
                    .entry(row.channel)
                    .or_default()
                    .push((row.low, row.high.unwrap_or(row.low))),
                _ => out.newest = row.low,
            }
        }
        for ranges in out.ranges.values_mut() {
            ranges.sort_unstable_by_key(|&(_, high)| high);
        }
        Ok(out)
    }

    /// The channels in which the reader has a span, each once, ascending.
    pub(crate) fn channels(&self) -> Vec<i64> {
        let mut channels: Vec<i64> = self.spans.iter().map(|&(c, _, _)| c).collect();
        channels.sort_unstable();
        channels.dedup();
        channels
    }

    /// The spans as `(channel, first, last)`, inclusive: a current span's last is open-ended
    /// (`i64::MAX`).
    pub(crate) fn span_ranges(&self) -> Vec<(i64, i64, i64)> {
        self.spans
            .iter()
            .map(|&(channel, first, end)| (channel, first, end.map_or(i64::MAX, |e| e - 1)))
            .collect()
    }

    /// The gaps of the spans, `(channel, low, high)`: per span, the parts outside every read
    /// range; a current span's last gap is open-ended (`i64::MAX`).
    pub(crate) fn gaps(&self) -> Vec<(i64, i64, i64)> {
        let mut gaps = Vec::new();
        for (channel, first, last) in self.span_ranges() {
            let read = self.ranges.get(&channel).map_or(&[][..], Vec::as_slice);
            gaps.extend(
                gaps_in(first, last, read)
                    .into_iter()
                    .map(|(low, high)| (channel, low, high)),
            );
        }
        gaps
    }
}

/// The parts of `[first, last]` outside the read ranges (ascending by `high`, disjoint).
fn gaps_in(first: i64, last: i64, read: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut from = first;
    let start = read.partition_point(|(_, high)| *high < first);
    for &(low, high) in &read[start..] {
        if low > last {
            break;
        }
        if low > from {
            out.push((from, low - 1));
        }
        from = from.max(high.saturating_add(1));
    }
    if from <= last {
        out.push((from, last));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_the_parts_outside_the_read_ranges() {
        assert_eq!(gaps_in(1, 100, &[]), vec![(1, 100)]);
        assert_eq!(
            gaps_in(10, 50, &[(1, 5), (20, 30), (60, 70)]),
            vec![(10, 19), (31, 50)]
        );
        assert_eq!(gaps_in(10, 50, &[(5, 15), (40, 60)]), vec![(16, 39)]);
        assert_eq!(gaps_in(10, 50, &[(1, 100)]), Vec::<(i64, i64)>::new());
        assert_eq!(gaps_in(10, i64::MAX, &[(10, 20)]), vec![(21, i64::MAX)]);
    }

    #[test]
    fn each_span_has_its_own_gaps_and_channels_are_listed_once() {
        let mut ranges = HashMap::new();
        ranges.insert(1, vec![(10, 20)]);
        let reader = ReaderSpans {
            spans: vec![(1, 5, Some(15)), (1, 18, None), (2, 7, Some(9))],
            ranges,
            newest: 40,
        };
        assert_eq!(reader.gaps(), vec![(1, 5, 9), (1, 21, i64::MAX), (2, 7, 8)]);
        assert_eq!(reader.channels(), vec![1, 2]);
    }
}

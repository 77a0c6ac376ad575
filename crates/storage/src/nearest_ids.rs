//! A reader's messages nearest an anchor, only as many as a page needs, never all of them: the
//! unread ones, for `is:unread` pages, or every one they may see, for the page of all messages.
//!
//! [`crate::unread::ids`] finds every unread message (each gap between read ranges inside the
//! reader's spans, read whole from the channel index). A page wants the hundred nearest its anchor,
//! and reading a few thousand to keep a hundred was most of such a page's time on PostgreSQL (4 ms
//! of 10 for 3,800 unread). Here the ranges to walk (the unread gaps, from the reader's spans and
//! read ranges; or the spans themselves) are computed once (one statement per request:
//! `Audience`) and read in ID windows from the anchor outwards:
//! each window's query asks for the ranges' messages inside it, nearest first, with a `LIMIT`. The
//! first window is [`FIRST_WINDOW_PER_ROW`] IDs per message wanted; each next one, adjacent and
//! further out, four times larger (but taking in at most [`MAX_GAPS_PER_WINDOW`] ranges beyond
//! those reaching its start), until the page is full or no range is left; a window that no range
//! reaches is skipped without a query. The rows no span covers (direct messages, historical rows)
//! are few and read once per batch through their index (`user_messages_unread` for the unread
//! ones), nearest first. The ranges of current spans are open-ended; they are cut at the newest
//! message, read once with them, so that a walk from the newest anchor starts where the messages
//! are and a walk upwards ends.
//!
//! The page of all messages (no narrow) was one query walking the messages' primary key from
//! the anchor and checking each message against the reader's spans: cheap for a reader who
//! receives most messages, but a reader in 27 of 100 channels receives one message in thirty,
//! and such a page in the middle of the history read 1,600 messages for 50 (5 ms from the
//! binary on PostgreSQL; 18 ms for a reader in fewer channels). Each span's range is instead
//! read from the channel index, nearest first, as the unread gaps are.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::message_query::{Audience, Direction};
use crate::sql::{Bind, IdRow, SqlBuilder, READER};
use parley_domain::message::flags;
use parley_domain::{ChannelId, UserId};

/// IDs in the first window per message asked for (the reader with half of every channel's
/// messages finds about four per ID window of eight).
const FIRST_WINDOW_PER_ROW: i64 = 8;

/// The ranges a page's messages are read from, read once for a page.
pub(crate) struct NearestIds {
    user: UserId,
    /// `(channel, low, high)`: the parts of the reader's spans outside every read range (the
    /// unread gaps), or the spans.
    gaps: Vec<(i64, i64, i64)>,
    /// Whether the reader's own rows count only while unread.
    unread_only: bool,
    /// The first window's width, when the caller knows better than [`first_width`].
    first_width: Option<i64>,
}

impl NearestIds {
    /// The reader's gaps, read once per request (`Audience::unread_gaps`), cut at the newest
    /// message so that the walk ends; only those of `channels` when the narrow names them: the
    /// unread messages of other channels can never match, and walking them to find none in a
    /// channel that has no unread message read every unread message of the others (14 ms for
    /// 5,000 on PostgreSQL).
    pub(crate) fn unread(
        conn: &mut DbConn,
        audience: &Audience,
        channels: Option<&[ChannelId]>,
    ) -> Result<Self, StorageError> {
        Ok(Self {
            user: audience.reader,
            gaps: audience.unread_gaps(conn, channels)?,
            unread_only: true,
            first_width: None,
        })
    }

    /// Every message the reader received: their spans, cut at the newest message, and their
    /// own rows.
    pub(crate) fn visible(conn: &mut DbConn, audience: &Audience) -> Result<Self, StorageError> {
        Ok(Self {
            user: audience.reader,
            gaps: audience.span_ranges(conn)?.0,
            unread_only: false,
            first_width: None,
        })
    }

    /// The same, whose walks start with windows `width` IDs wide: a caller that has seen how
    /// many of the reader's messages an ID range near the anchor holds sizes the first window
    /// to hold a page, rather than growing one window after another to find it.
    pub(crate) fn starting_with(self, width: i64) -> Self {
        Self {
            first_width: Some(width.max(1)),
            ..self
        }
    }

    /// The `size` IDs nearest `edge` (inclusive) on `direction`'s side, nearest first,
    /// and whether they are all there are.
    pub(crate) fn take(
        &self,
        conn: &mut DbConn,
        edge: i64,
        direction: Direction,
        size: i64,
    ) -> Result<(Vec<i64>, bool), StorageError> {
        let (mut ids, gaps_done) = self.in_gaps(conn, edge, direction, size)?;
        let own = self.own_rows(conn, edge, direction, size)?;
        let own_done = (own.len() as i64) < size;
        ids.extend(own);
        ids.sort_unstable();
        ids.dedup();
        if direction == Direction::Before {
            ids.reverse();
        }
        let wanted = usize::try_from(size).unwrap_or(usize::MAX);
        let exhausted = gaps_done && own_done && ids.len() <= wanted;
        ids.truncate(wanted);
        Ok((ids, exhausted))
    }

    /// Up to `size` messages of the gaps nearest `edge`, nearest first, read window by window;
    /// and whether the gaps hold no more.
    fn in_gaps(
        &self,
        conn: &mut DbConn,
        edge: i64,
        direction: Direction,
        size: i64,
    ) -> Result<(Vec<i64>, bool), StorageError> {
        let mut found: Vec<i64> = Vec::new();
        let mut from = edge;
        let mut width = self.first_width.unwrap_or_else(|| first_width(size));
        loop {
            let need = size - found.len() as i64;
            if need <= 0 {
                return Ok((found, false));
            }
            let window = match direction {
                Direction::Before => (from.saturating_sub(width - 1), from),
                Direction::After => (from, from.saturating_add(width - 1)),
            };
            let window = cap(&self.gaps, window, direction, MAX_GAPS_PER_WINDOW);
            let clipped = clip(&self.gaps, window);
            if clipped.is_empty() {
                match next_start(&self.gaps, window, direction) {
                    Some(next) => {
                        from = next;
                        continue;
                    }
                    None => return Ok((found, true)),
                }
            }
            found.extend(ids_in(conn, &clipped, direction, need)?);
            from = match direction {
                Direction::Before => window.0.saturating_sub(1),
                Direction::After => window.1.saturating_add(1),
            };
            width = width.saturating_mul(4);
        }
    }

    /// Up to `size` of the reader's rows no span covers (unread ones, unless all are wanted)
    /// nearest `edge`, nearest first.
    fn own_rows(
        &self,
        conn: &mut DbConn,
        edge: i64,
        direction: Direction,
        size: i64,
    ) -> Result<Vec<i64>, StorageError> {
        let (op, order) = direction.beyond_edge();
        let mut sql = SqlBuilder::new();
        sql.push_for(
            &format!(
                "SELECT m.id AS id FROM user_messages um JOIN messages m ON m.id = um.message_id \
                 WHERE um.user_id = {READER}{unread} \
                   AND NOT (m.channel_id IS NOT NULL AND {covered}) AND um.message_id {op} ",
                unread = match self.unread_only {
                    true => format!(" AND (um.flags & {}) = 0", flags::READ),
                    false => String::new(),
                },
                covered =
                    crate::reader_flags::covered_sql(READER, crate::reader_flags::SpanEnd::Probe),
            ),
            self.user.0,
        )
        .bind(Bind::Int(edge))
        .push(&format!(" ORDER BY um.message_id {order}"))
        .limit(size)
        .prepared();
        Ok(sql.load::<IdRow>(conn)?.into_iter().map(|r| r.id).collect())
    }
}

/// The first window's width for a walk that wants `size` messages. A window's width bounds how
/// many messages each of its gaps' probes may read (up to the messages still wanted); when one
/// message is wanted (the first unread message of `anchor=first_unread`) a probe reads at most
/// one whatever the width, so the window is unbounded and only its gap cap narrows it. Grown
/// from 256 IDs, the walk to the heavy user's first unread message took six windows, the first
/// five over gaps with no message (a span's start before its channel's first message).
fn first_width(size: i64) -> i64 {
    match size {
        ..=1 => i64::MAX,
        _ => size.saturating_mul(FIRST_WINDOW_PER_ROW).max(256),
    }
}

/// Most gaps a window takes in beyond those reaching its start: each is a probe of the channel
/// index, and a reader's gaps can be many and close together (one per unread message when
/// every fourth is unread) after long runs of gaps with no message (a span's start before its
/// channel's first message): a window grown over those took in every gap of the dense part at
/// once (400 probes, 3 ms, to find one message for `anchor=first_unread`).
const MAX_GAPS_PER_WINDOW: usize = 64;

/// `window` narrowed on its far side so that at most `max` gaps begin in it after its start
/// (the gaps that reach the start are in every window from there, whatever its width, so they
/// do not count: counting them made windows one ID wide where a hundred channels' gaps
/// overlapped).
fn cap(
    gaps: &[(i64, i64, i64)],
    (low, high): (i64, i64),
    direction: Direction,
    max: usize,
) -> (i64, i64) {
    match direction {
        Direction::After => {
            let mut starts: Vec<i64> = gaps
                .iter()
                .filter(|(_, l, _)| *l > low && *l <= high)
                .map(|(_, l, _)| *l)
                .collect();
            if starts.len() <= max {
                return (low, high);
            }
            starts.select_nth_unstable(max);
            (low, starts[max] - 1)
        }
        Direction::Before => {
            let mut ends: Vec<i64> = gaps
                .iter()
                .filter(|(_, _, h)| *h < high && *h >= low)
                .map(|(_, _, h)| *h)
                .collect();
            if ends.len() <= max {
                return (low, high);
            }
            ends.select_nth_unstable_by(max, |a, b| b.cmp(a));
            (ends[max] + 1, high)
        }
    }
}

/// The parts of `gaps` inside `window` (inclusive).
fn clip(gaps: &[(i64, i64, i64)], (low, high): (i64, i64)) -> Vec<(i64, i64, i64)> {
    gaps.iter()
        .filter(|(_, l, h)| *l <= high && *h >= low)
        .map(|&(c, l, h)| (c, l.max(low), h.min(high)))
        .collect()
}

/// Where the next window starts when no gap reaches `window`: the nearest gap ID beyond it on
/// `direction`'s side, or None when there is none.
fn next_start(
    gaps: &[(i64, i64, i64)],
    (low, high): (i64, i64),
    direction: Direction,
) -> Option<i64> {
    match direction {
        Direction::Before => gaps
            .iter()
            .filter(|(_, l, _)| *l < low)
            .map(|(_, _, h)| (*h).min(low - 1))
            .max(),
        Direction::After => gaps
            .iter()
            .filter(|(_, _, h)| *h > high)
            .map(|(_, l, _)| (*l).max(high + 1))
            .min(),
    }
}

/// Up to `limit` messages of these gaps, nearest first (`direction`'s order), each gap read
/// from the channel index ([`crate::unread::IN_GAP`]).
///
/// On PostgreSQL the query is kept prepared (the gaps are bound as arrays, the limit as a
/// value), so it is parsed and planned once per connection rather than per window (about 1 ms
/// of an `is:unread` page). A generic plan is chosen blind to the gaps, so the text leaves it no
/// choice: each gap is a `LATERAL` subquery reading at most `limit` IDs from the channel index,
/// nearest first; the plain join could be planned as a walk over every message's ID.
fn ids_in(
    conn: &mut DbConn,
    gaps: &[(i64, i64, i64)],
    direction: Direction,
    limit: i64,
) -> Result<Vec<i64>, StorageError> {
    let order = match direction {
        Direction::Before => "DESC",
        Direction::After => "ASC",
    };
    let in_gap = crate::unread::IN_GAP;
    let mut sql = SqlBuilder::new();
    sql.with_triples(gaps);
    if matches!(conn, DbConn::Pg(_)) {
        sql.push(&format!(
            " SELECT x.id AS id FROM g CROSS JOIN LATERAL \
             (SELECT m.id FROM messages m WHERE {in_gap} ORDER BY m.id {order}"
        ))
        .limit(limit)
        .push(&format!(") x ORDER BY x.id {order}"))
        .limit(limit)
        .prepared();
    } else {
        sql.push(&format!(
            " SELECT m.id AS id FROM g JOIN messages m ON {in_gap} ORDER BY m.id {order}"
        ))
        .limit(limit)
        .prepared();
    }
    Ok(sql.load::<IdRow>(conn)?.into_iter().map(|r| r.id).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_takes_in_at_most_so_many_gaps_beyond_its_start() {
        let gaps: Vec<(i64, i64, i64)> = (0..10).map(|i| (i, 100 + 10 * i, 104 + 10 * i)).collect();
        // After: gaps begin at 100, 110, ..., 190; three of them, and the window ends before 130.
        assert_eq!(cap(&gaps, (0, 1_000), Direction::After, 3), (0, 129));
        assert_eq!(cap(&gaps, (0, 1_000), Direction::After, 10), (0, 1_000));
        // The gap reaching the start does not count.
        assert_eq!(cap(&gaps, (102, 1_000), Direction::After, 1), (102, 119));
        // Before: gaps end at 194, 184, ...; three of them, and the window begins after 164.
        assert_eq!(cap(&gaps, (0, 1_000), Direction::Before, 3), (165, 1_000));
        assert_eq!(cap(&gaps, (0, 192), Direction::Before, 1), (175, 192));
        // Many gaps reaching the start, as many channels' gaps overlap: the window still grows.
        let overlapping: Vec<(i64, i64, i64)> = (0..100).map(|c| (c, 10, 1_000)).collect();
        assert_eq!(cap(&overlapping, (50, 500), Direction::After, 1), (50, 500));
        assert_eq!(
            cap(&overlapping, (50, 500), Direction::Before, 1),
            (50, 500)
        );
    }

    #[test]
    fn clipping_keeps_the_parts_inside_the_window() {
        let gaps = [(1, 10, 20), (2, 15, 40), (3, 50, 60)];
        assert_eq!(clip(&gaps, (18, 30)), vec![(1, 18, 20), (2, 18, 30)]);
        assert_eq!(clip(&gaps, (41, 49)), vec![]);
    }

    #[test]
    fn an_empty_window_jumps_to_the_nearest_gap_beyond_it() {
        let gaps = [(1, 10, 20), (2, 15, 40), (3, 50, 60)];
        assert_eq!(next_start(&gaps, (41, 49), Direction::Before), Some(40));
        assert_eq!(next_start(&gaps, (41, 49), Direction::After), Some(50));
        assert_eq!(next_start(&gaps, (61, 70), Direction::After), None);
        assert_eq!(next_start(&gaps, (1, 9), Direction::Before), None);
        assert_eq!(next_start(&gaps, (30, 45), Direction::Before), Some(29));
    }
}

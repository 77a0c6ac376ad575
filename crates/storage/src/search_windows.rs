//! Pages of a `search:` narrow on PostgreSQL, read in growing windows of message IDs from the
//! anchor outwards.
//!
//! A page is "the `limit` matches nearest the anchor". Asked that directly (`ORDER BY id DESC
//! LIMIT n`), PostgreSQL's planner bets on where the matches are: for a word it believes common
//! it walks rows in ID order testing each, for one it believes rare it collects every match from
//! the GIN index and sorts them. Both bets are unbounded when wrong (a rare word walks the whole
//! history, a common word the reader never received collects every match), and its estimate for
//! any word outside the index's most-common list is a fixed guess. Here the question is asked
//! per window instead: "every match the reader may see among IDs `lo..=hi`", with no `LIMIT` to
//! bet on (the window's query is fenced by `OFFSET 0`), so the planner chooses between the GIN
//! index and the window's rows by cost, and either is bounded by the window. The first window
//! is a few times the page; each next one, further from the anchor, is larger (×2, or ×4 after
//! an empty one), until the page is full or the history is exhausted. A common word fills the
//! page in the first window; a rare one reaches the far end in a logarithmic number of
//! queries, each a GIN lookup; neither ranks, sorts or even collects the whole match set.
//!
//! A window costs every reader's matches in it, so a reader who receives few of the messages
//! has the page read on among their own messages once the first window leaves it short
//! ([`among_received`]).
//!
//! SQLite does not need this: its FTS5 index is read in rowid order from the anchor
//! (`messages::matching_by_search`).

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::message_query::{
    among_ids, matching, matching_among, Audience, Condition, Direction, PageRow, Side,
};
use crate::message_rows::ReadMessage;
use crate::nearest_ids::NearestIds;
use crate::sql::{Bind, SqlBuilder};
use diesel::sql_types::{BigInt, Integer};
use diesel::QueryableByName;

/// The first window holds this many IDs per message asked for ...
const IDS_PER_ROW: i64 = 8;
/// ... and at least this many.
const MIN_WINDOW: i64 = 256;

/// An inclusive range of message IDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// Lowest ID.
    pub lo: i64,
    /// Highest ID.
    pub hi: i64,
}

impl Window {
    /// The ID next to the window on `direction`'s side, where the walk goes on.
    fn beyond(&self, direction: Direction) -> i64 {
        match direction {
            Direction::Before => self.lo.saturating_sub(1),
            Direction::After => self.hi.saturating_add(1),
        }
    }
}

/// Reads a page of a narrow with a `search:` term on PostgreSQL window by window; None when the
/// connection is SQLite or the narrow has no plain `search:` term (the caller's single query
/// serves those).
pub(crate) fn page(
    conn: &mut DbConn,
    audience: &Audience,
    conditions: &[Condition],
    side: Side,
) -> Result<Option<Vec<ReadMessage>>, StorageError> {
    let Side {
        direction, limit, ..
    } = side;
    if !matches!(conn, DbConn::Pg(_)) {
        return Ok(None);
    }
    let Some(text) = conditions.iter().find_map(|c| match c {
        Condition::Search(text) => Some(text),
        _ => None,
    }) else {
        return Ok(None);
    };
    let span = span(conn, text)?;
    if span.lexemes == 0 {
        // Only stop words: PostgreSQL matches nothing (as the single query did).
        return Ok(Some(Vec::new()));
    }
    let mut found = Vec::new();
    let mut probed = false;
    walk(
        (span.first, span.last),
        side.first_id(),
        direction,
        limit,
        |window, need| {
            let rows = read_window(conn, audience, conditions, window, direction, need)?;
            let got = rows.len();
            found.extend(rows.into_iter().map(PageRow::into_read));
            if probed || i64::try_from(got).unwrap_or(need).saturating_mul(2) >= need {
                return Ok((got, None));
            }
            // The first window left less than half the page: a common word the reader receives
            // little of, or a rare word. The first is read among the reader's messages from
            // here. (A reader who receives half the messages finds four fifths of a common
            // word's page in the first window, and is spared the look at their messages.)
            probed = true;
            let beyond = window.beyond(direction);
            let rest = need - i64::try_from(got).unwrap_or(need);
            Ok::<_, StorageError>(
                match among_received(conn, audience, conditions, direction, beyond, rest)? {
                    Some(Received::Page(rows)) => {
                        found.extend(rows);
                        (usize::try_from(need).unwrap_or(usize::MAX), None)
                    }
                    Some(Received::From(rows, edge)) => {
                        let more = rows.len();
                        found.extend(rows);
                        (got + more, Some(edge))
                    }
                    None => (got, None),
                },
            )
        },
    )?;
    Ok(Some(found))
}

/// A reader who receives fewer than one in this many of the messages beyond a short first
/// window has the page read on among their own messages ([`among_received`]).
const SPARSE: i64 = 8;
/// Reading among the reader's messages goes on while at least one in this many of those checked
/// matched; a rarer word is found sooner through the full-text index, by the windows.
const RECEIVED_PER_ROW: usize = 40;

/// What reading among the reader's messages left.
enum Received {
    /// The whole page: full, or every message of the reader on that side was checked.
    Page(Vec<ReadMessage>),
    /// What it found, and the ID where the windows go on.
    From(Vec<ReadMessage>, i64),
}

/// For a reader who receives few of the messages near `from` (the first window left less than
/// half the page), the `limit` matches nearest `from` (inclusive) among the messages they received
/// (their spans and own rows, [`NearestIds::visible`]), nearest first: as many as the page
/// asks for at first, then as many as the rest of the page needs at the share matched so far,
/// while the word is common enough among them ([`RECEIVED_PER_ROW`]); the windows go on from the
/// last one checked. None for a reader who receives at least one in [`SPARSE`] there (and with
/// channels whose whole history they may read): the windows serve them. A window's cost is every
/// match of every reader in it (each message's words tested, or each match's reader checked): a
/// reader in 27 channels who received one message in 140 had a common word's page read over
/// 100,000 IDs in seven windows (70 ms at 300,000 messages), where their 500 nearest messages
/// held it.
fn among_received(
    conn: &mut DbConn,
    audience: &Audience,
    conditions: &[Condition],
    direction: Direction,
    from: i64,
    limit: i64,
) -> Result<Option<Received>, StorageError> {
    if !audience.history_channels.is_empty() {
        return Ok(None);
    }
    let nearest = NearestIds::visible(conn, audience)?;
    // From the newest message at most (`anchor=newest` is far above it).
    let edge = match direction {
        Direction::Before => from.min(audience.span_ranges(conn)?.1),
        Direction::After => from,
    };
    // The reader's `limit` messages nearest `edge`: how far they reach says how sparse.
    let (mut ids, mut exhausted) = nearest.take(conn, edge, direction, limit)?;
    let reach = ids
        .last()
        .map_or(i64::MAX, |last| (edge - last).saturating_abs());
    if !exhausted && reach < limit.saturating_mul(SPARSE) {
        return Ok(None);
    }
    let (base, _) = matching_among(conn, audience, conditions, false, None)?;
    let mut found = Vec::new();
    let mut checked: usize = 0;
    loop {
        let Some(&last) = ids.last() else {
            return Ok(Some(Received::Page(found)));
        };
        let need = limit - i64::try_from(found.len()).unwrap_or(limit);
        found.extend(among_ids(conn, &base, &ids, direction, need)?);
        checked += ids.len();
        if exhausted || i64::try_from(found.len()).unwrap_or(limit) >= limit {
            return Ok(Some(Received::Page(found)));
        }
        let beyond = match direction {
            Direction::Before => last.saturating_sub(1),
            Direction::After => last.saturating_add(1),
        };
        // A word in fewer than one in RECEIVED_PER_ROW of the reader's messages (none among
        // the first ones, say) is found sooner through the full-text index.
        if found.len().saturating_mul(RECEIVED_PER_ROW) < checked {
            return Ok(Some(Received::From(found, beyond)));
        }
        // Enough for the rest of the page at the share matched so far, and a quarter more.
        let still = limit.saturating_sub(i64::try_from(found.len()).unwrap_or(limit));
        let per_match = i64::try_from(checked / found.len().max(1)).unwrap_or(i64::MAX);
        let size = still.saturating_mul(per_match).saturating_mul(5) / 4;
        (ids, exhausted) = nearest.take(conn, beyond, direction, size.max(limit))?;
    }
}

/// Walks windows from `start` (already moved off an excluded anchor) away from the anchor in
/// `direction`, within `span` (the lowest and highest message IDs), calling `read` with each
/// window and how many rows are still wanted; `read` answers how many it found, and where the
/// walk goes on when it read beyond the window another way (else right beyond the window).
/// Stops when `limit` rows are found or the span is exhausted. Windows are disjoint and
/// adjacent, so every ID is looked at once at most.
pub(crate) fn walk<E>(
    span: (i64, i64),
    start: i64,
    direction: Direction,
    limit: i64,
    mut read: impl FnMut(Window, i64) -> Result<(usize, Option<i64>), E>,
) -> Result<(), E> {
    let (first, last) = span;
    let mut edge = match direction {
        Direction::Before => start.min(last),
        Direction::After => start.max(first),
    };
    let mut size = limit.saturating_mul(IDS_PER_ROW).max(MIN_WINDOW);
    let mut found: i64 = 0;
    while found < limit {
        let window = match direction {
            Direction::Before if edge >= first => Window {
                lo: edge.saturating_sub(size - 1).max(first),
                hi: edge,
            },
            Direction::After if edge <= last => Window {
                lo: edge,
                hi: edge.saturating_add(size - 1).min(last),
            },
            _ => break,
        };
        let (got, moved_to) = read(window, limit - found)?;
        found = found.saturating_add(i64::try_from(got).unwrap_or(i64::MAX));
        edge = moved_to.unwrap_or_else(|| window.beyond(direction));
        if window.lo == i64::MIN || window.hi == i64::MAX {
            break;
        }
        size = size.saturating_mul(if got == 0 { 4 } else { 2 });
    }
    Ok(())
}

#[derive(QueryableByName)]
struct Span {
    #[diesel(sql_type = BigInt)]
    first: i64,
    #[diesel(sql_type = BigInt)]
    last: i64,
    #[diesel(sql_type = Integer)]
    lexemes: i32,
}

/// The lowest and highest message IDs (two index endpoints) and whether the search text has any
/// word that is not a stop word, in one round trip.
fn span(conn: &mut DbConn, text: &str) -> Result<Span, StorageError> {
    let mut sql = SqlBuilder::new();
    sql.push(
        "SELECT COALESCE(MIN(id), 0) AS first, COALESCE(MAX(id), 0) AS last, \
         numnode(plainto_tsquery('english', ",
    )
    .bind(Bind::Text(text.to_owned()))
    .push(")) AS lexemes FROM messages");
    let mut rows: Vec<Span> = sql.load(conn)?;
    Ok(rows.pop().unwrap_or(Span {
        first: 0,
        last: 0,
        lexemes: 0,
    }))
}

/// Every message of `window` the audience may see that matches the conditions, as the
/// generic query of `messages` selects them, the `need` nearest the anchor kept. `OFFSET 0`
/// keeps the window's query from being merged with the outer `LIMIT`, so that the planner
/// costs all of the window's matches, not the first few it hopes to find early.
fn read_window(
    conn: &mut DbConn,
    audience: &Audience,
    conditions: &[Condition],
    window: Window,
    direction: Direction,
    need: i64,
) -> Result<Vec<PageRow>, StorageError> {
    let (inner, column) = matching(conn, audience, conditions)?;
    let mut sql = SqlBuilder::new();
    sql.push("SELECT w.* FROM (").append(inner);
    let mut columns = vec!["m.id"];
    if column != "m.id" {
        columns.push(column);
    }
    for column in columns {
        sql.push(&format!(" AND {column} >= "))
            .bind(Bind::Int(window.lo))
            .push(&format!(" AND {column} <= "))
            .bind(Bind::Int(window.hi));
    }
    let order = match direction {
        Direction::Before => "DESC",
        Direction::After => "ASC",
    };
    sql.push(&format!(" OFFSET 0) w ORDER BY w.id {order}"))
        .limit(need);
    sql.load(conn)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Walks over a history whose matching IDs are `matches`, as `page` would, and answers the
    /// page and the windows read.
    fn run(
        matches: &[i64],
        span: (i64, i64),
        start: i64,
        direction: Direction,
        limit: i64,
    ) -> (Vec<i64>, Vec<Window>) {
        let mut page = Vec::new();
        let mut windows = Vec::new();
        walk(span, start, direction, limit, |w, need| {
            windows.push(w);
            let mut hits: Vec<i64> = matches
                .iter()
                .copied()
                .filter(|id| (w.lo..=w.hi).contains(id))
                .collect();
            if direction == Direction::Before {
                hits.reverse();
            }
            hits.truncate(usize::try_from(need).unwrap());
            let got = hits.len();
            page.extend(hits);
            Ok::<_, ()>((got, None))
        })
        .unwrap();
        (page, windows)
    }

    /// What the page must be: the `limit` matches nearest the anchor on its side.
    fn expected(matches: &[i64], start: i64, direction: Direction, limit: i64) -> Vec<i64> {
        let limit = usize::try_from(limit).unwrap();
        match direction {
            Direction::Before => matches
                .iter()
                .rev()
                .copied()
                .filter(|id| *id <= start)
                .take(limit)
                .collect(),
            Direction::After => matches
                .iter()
                .copied()
                .filter(|id| *id >= start)
                .take(limit)
                .collect(),
        }
    }

    /// Windows are adjacent, disjoint, move away from the anchor and stay in the span.
    fn check_windows(windows: &[Window], span: (i64, i64), direction: Direction) {
        for w in windows {
            assert!(w.lo <= w.hi && w.lo >= span.0 && w.hi <= span.1, "{w:?}");
        }
        for pair in windows.windows(2) {
            match direction {
                Direction::Before => assert_eq!(pair[1].hi, pair[0].lo - 1),
                Direction::After => assert_eq!(pair[1].lo, pair[0].hi + 1),
            }
        }
    }

    #[test]
    fn a_common_word_fills_the_page_from_the_first_window() {
        let matches: Vec<i64> = (1..=200_000).filter(|i| i % 5 == 0).collect();
        let (page, windows) = run(&matches, (1, 200_000), 200_000, Direction::Before, 100);
        assert_eq!(page, expected(&matches, 200_000, Direction::Before, 100));
        assert_eq!(windows.len(), 1);
        assert_eq!(
            windows[0],
            Window {
                lo: 199_201,
                hi: 200_000
            }
        );
    }

    #[test]
    fn a_rare_word_reaches_the_far_end_in_few_windows() {
        let matches = vec![7, 20_007, 180_007];
        for (start, direction) in [
            (200_000, Direction::Before),
            (1, Direction::After),
            (100_000, Direction::Before),
            (100_000, Direction::After),
        ] {
            let (page, windows) = run(&matches, (1, 200_000), start, direction, 100);
            assert_eq!(page, expected(&matches, start, direction, 100));
            check_windows(&windows, (1, 200_000), direction);
            assert!(windows.len() <= 6, "{windows:?}");
            let far = match direction {
                Direction::Before => windows.last().unwrap().lo == 1,
                Direction::After => windows.last().unwrap().hi == 200_000,
            };
            assert!(far, "the history is exhausted: {windows:?}");
        }
    }

    #[test]
    fn pages_from_every_anchor_match_a_plain_scan() {
        // Matches dense near the ends, sparse in the middle.
        let matches: Vec<i64> = (1..=50_000)
            .filter(|i| *i < 3_000 || *i > 47_000 || i % 997 == 0)
            .collect();
        for start in [0, 1, 2, 2_999, 25_000, 47_001, 50_000, 60_000] {
            for direction in [Direction::Before, Direction::After] {
                for limit in [1, 5, 100, 1_000, 10_000] {
                    let (page, windows) = run(&matches, (1, 50_000), start, direction, limit);
                    assert_eq!(
                        page,
                        expected(&matches, start, direction, limit),
                        "{start} {direction:?} {limit}"
                    );
                    check_windows(&windows, (1, 50_000), direction);
                }
            }
        }
    }

    #[test]
    fn nothing_is_read_beyond_the_history() {
        let (page, windows) = run(&[5], (1, 10), 0, Direction::Before, 10);
        assert!(page.is_empty() && windows.is_empty());
        let (page, windows) = run(&[5], (1, 10), 11, Direction::After, 10);
        assert!(page.is_empty() && windows.is_empty());
        // The newest anchor (a huge ID) starts at the newest message.
        let (page, windows) = run(&[5], (1, 10), i64::MAX, Direction::Before, 10);
        assert_eq!(page, vec![5]);
        assert_eq!(windows, vec![Window { lo: 1, hi: 10 }]);
    }
}

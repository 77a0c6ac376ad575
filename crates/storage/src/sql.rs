//! Hand-built SQL for the queries diesel's multi-backend DSL cannot express (dynamic filters
//! over joins). The SQL is written once, portable; each backend gets its own placeholder syntax,
//! and full-text search, the one dialect-specific condition, is rendered per backend here.
//!
//! A query whose text holds no value (every value a placeholder, ID lists included: `= ANY($n)`
//! on PostgreSQL) may be marked [`SqlBuilder::prepared`]: on PostgreSQL it is then kept prepared
//! on its connection, keyed by its text, so that PostgreSQL neither parses it again nor, once it
//! has settled on a generic plan, plans it again. The page queries of flag and unread narrows
//! are such queries: their parse and plan were half of PostgreSQL's time for a flag page; so
//! are the unread windows, whose gaps are bound as arrays ([`SqlBuilder::with_triples`]). Mark
//! only queries whose plan does not hinge on the values: a generic plan is chosen blind to them.
//! On SQLite such a query is kept prepared when its SQLite text holds no value either: its ID
//! lists and the reader's ID are literals there, but rows of three (the unread gaps) are one
//! bound JSON text, and limits are literals (see [`SqlBuilder::limit`]).

use crate::conn::DbConn;
use crate::error::StorageError;
use diesel::backend::Backend;
use diesel::pg::{Pg, PgConnection};
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::query_dsl::RunQueryDsl;
use diesel::serialize::ToSql;
use diesel::sql_types::HasSqlType;
use diesel::sql_types::{Array, BigInt, Bool, Text, Untyped};
use diesel::sqlite::{Sqlite, SqliteConnection};
use diesel::{QueryResult, QueryableByName};

/// A bound value.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    /// An integer.
    Int(i64),
    /// Text.
    Text(String),
    /// A boolean.
    Bool(bool),
}

/// A value as rendered for one backend: an ID list is an array on PostgreSQL only.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    One(Bind),
    Ints(Vec<i64>),
    Texts(Vec<String>),
}

/// A piece of rendered SQL: text, or a value whose placeholder the backend writes.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Sql(String),
    Value(Value),
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Bind(Bind),
    Search(String),
    /// `IN (list)` on SQLite, `= ANY($n)` on PostgreSQL.
    Ids(Vec<i64>),
    /// The reader's ID: a literal on SQLite, one placeholder however often it appears on
    /// PostgreSQL.
    Reader(i64),
    /// `WITH g(c, l, h)` over rows of three integers: a `VALUES` list on SQLite, three arrays
    /// `unnest`ed on PostgreSQL.
    Triples(Vec<(i64, i64, i64)>),
    /// `WITH t(c, k)` over `(integer, text)` rows: a `VALUES` list on SQLite, two arrays
    /// `unnest`ed on PostgreSQL.
    Pairs(Vec<(i64, String)>),
    /// A `LIMIT`'s row count: a literal on SQLite, bound on PostgreSQL.
    Limit(i64),
}

/// Stands for the reader's ID in text given to [`SqlBuilder::push_for`] (not SQL in either
/// dialect, so a text that misses the substitution fails instead of running; `$reader` would
/// be a named parameter to SQLite).
pub(crate) const READER: &str = "{reader}";

/// Most distinct texts kept prepared (per connection, by diesel's statement cache): a safety
/// net should a text marked prepared ever carry a value, which would make every run a new text.
const MAX_PREPARED_TEXTS: usize = 512;

/// Most distinct texts kept prepared on SQLite, where the statements are SQLite's memory, inside
/// its one budget for the process (`conn::SQLITE_MEMORY_BUDGET_KIB`), once per pooled connection.
const MAX_SQLITE_PREPARED_TEXTS: usize = 64;

/// SQL text, placeholders and the one dialect-specific piece (full-text search), rendered for
/// whichever backend runs it.
#[derive(Debug, Clone, Default)]
pub struct SqlBuilder {
    parts: Vec<Part>,
    prepared: bool,
}

/// Which SQL dialect to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Sqlite,
    Postgres,
}

/// An FTS5 query matching every word of `text` (each quoted, so user input is never syntax).
pub(crate) fn fts5_query(text: &str) -> String {
    text.split_whitespace()
        .map(|word| format!("\"{}\"", word.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One row of a query that selects `... AS id` (a message ID, usually).
#[derive(QueryableByName)]
pub(crate) struct IdRow {
    #[diesel(sql_type = BigInt)]
    pub(crate) id: i64,
}

/// IDs for an SQL `IN (...)` list, `0` (no message or user has it) when there are none, so the
/// list is never empty.
pub(crate) fn id_list(ids: impl Iterator<Item = i64>) -> String {
    let list: Vec<String> = ids.map(|id| id.to_string()).collect();
    if list.is_empty() {
        "0".to_owned()
    } else {
        list.join(",")
    }
}

impl SqlBuilder {
    /// Empty SQL.
    pub fn new() -> Self {
        SqlBuilder::default()
    }

    /// Appends SQL text.
    pub fn push(&mut self, text: &str) -> &mut Self {
        self.parts.push(Part::Text(text.to_owned()));
        self
    }

    /// Appends a placeholder bound to `value`.
    pub fn bind(&mut self, value: Bind) -> &mut Self {
        self.parts.push(Part::Bind(value));
        self
    }

    /// Appends ` LIMIT n`: a literal on SQLite, bound on PostgreSQL. SQLite's planner reads the
    /// value bound to a `LIMIT ?` (to plan for that many rows), so binding it expires the
    /// statement and its first step prepares it a second time: every query with a bound limit was
    /// planned twice (a third of an `is:followed` page). A text SQLite keeps prepared is then
    /// one per limit (at most [`MAX_SQLITE_PREPARED_TEXTS`] in all); PostgreSQL keeps one text
    /// for any limit.
    pub(crate) fn limit(&mut self, n: i64) -> &mut Self {
        self.push(" LIMIT ");
        self.parts.push(Part::Limit(n));
        self
    }

    /// Appends SQL text in which [`READER`] stands for `reader`'s ID.
    pub(crate) fn push_for(&mut self, text: &str, reader: i64) -> &mut Self {
        let mut pieces = text.split(READER);
        if let Some(first) = pieces.next() {
            self.push(first);
        }
        for piece in pieces {
            self.parts.push(Part::Reader(reader));
            self.push(piece);
        }
        self
    }

    /// Appends `column` in `ids` (false when there are none).
    pub(crate) fn ids_in(&mut self, column: &str, ids: impl IntoIterator<Item = i64>) -> &mut Self {
        self.push(column);
        self.parts.push(Part::Ids(ids.into_iter().collect()));
        self
    }

    /// Appends `WITH g(c, l, h) AS (...)` naming `rows` (at least one), so that the text does
    /// not change with the rows: on PostgreSQL three bound arrays, on SQLite one bound JSON text
    /// read by `json_each`. (As a `VALUES` list, preparing the statement for a window of a few
    /// hundred unread gaps cost SQLite more than running it, on every window.)
    pub(crate) fn with_triples(&mut self, rows: &[(i64, i64, i64)]) -> &mut Self {
        self.parts.push(Part::Triples(rows.to_vec()));
        self
    }

    /// Appends `WITH t(c, k) AS (...)` naming `rows` (at least one); on PostgreSQL as two
    /// bound arrays, so that the text does not change with the rows.
    pub(crate) fn with_pairs(&mut self, rows: &[(i64, String)]) -> &mut Self {
        self.parts.push(Part::Pairs(rows.to_vec()));
        self
    }

    /// Marks the query as one whose text holds no value (see the module's doc): kept prepared
    /// on PostgreSQL, and on SQLite when it has no literal there (`keep_prepared_on_sqlite`).
    pub(crate) fn prepared(&mut self) -> &mut Self {
        self.prepared = true;
        self
    }

    /// Appends a condition that the message aliased `m` matches the words of `text` in its
    /// content or topic: FTS5 on SQLite, the English text-search configuration on PostgreSQL.
    pub fn search(&mut self, text: &str) -> &mut Self {
        self.parts.push(Part::Search(text.to_owned()));
        self
    }

    /// Appends another builder's parts.
    pub fn append(&mut self, other: SqlBuilder) -> &mut Self {
        self.parts.extend(other.parts);
        self
    }

    /// The pieces of the query for `dialect`, in order.
    fn render(&self, dialect: Dialect) -> Vec<Piece> {
        let mut out = Pieces::default();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.sql(t),
                Part::Bind(b) => out.value(Value::One(b.clone())),
                Part::Limit(n) => match dialect {
                    Dialect::Sqlite => out.sql(&n.to_string()),
                    Dialect::Postgres => out.value(Value::One(Bind::Int(*n))),
                },
                Part::Ids(ids) => match dialect {
                    Dialect::Sqlite => out.sql(&format!(" IN ({})", id_list(ids.iter().copied()))),
                    Dialect::Postgres => {
                        out.sql(" = ANY(");
                        out.value(Value::Ints(ids.clone()));
                        out.sql(")");
                    }
                },
                Part::Triples(rows) => match dialect {
                    Dialect::Sqlite => {
                        let rows: Vec<String> = rows
                            .iter()
                            .map(|(c, l, h)| format!("[{c},{l},{h}]"))
                            .collect();
                        out.sql(
                            "WITH g(c, l, h) AS (SELECT value ->> 0, value ->> 1, value ->> 2 \
                             FROM json_each(",
                        );
                        out.value(Value::One(Bind::Text(format!("[{}]", rows.join(",")))));
                        out.sql("))");
                    }
                    Dialect::Postgres => {
                        out.sql("WITH g(c, l, h) AS (SELECT * FROM unnest(");
                        out.value(Value::Ints(rows.iter().map(|r| r.0).collect()));
                        out.sql(", ");
                        out.value(Value::Ints(rows.iter().map(|r| r.1).collect()));
                        out.sql(", ");
                        out.value(Value::Ints(rows.iter().map(|r| r.2).collect()));
                        out.sql("))");
                    }
                },
                Part::Pairs(rows) => match dialect {
                    Dialect::Sqlite => {
                        out.sql("WITH t(c, k) AS (VALUES ");
                        for (i, (c, k)) in rows.iter().enumerate() {
                            out.sql(&format!("{}({c}, ", if i > 0 { ", " } else { "" }));
                            out.value(Value::One(Bind::Text(k.clone())));
                            out.sql(")");
                        }
                        out.sql(")");
                    }
                    Dialect::Postgres => {
                        out.sql("WITH t(c, k) AS (SELECT * FROM unnest(");
                        out.value(Value::Ints(rows.iter().map(|r| r.0).collect()));
                        out.sql(", ");
                        out.value(Value::Texts(rows.iter().map(|r| r.1.clone()).collect()));
                        out.sql("))");
                    }
                },
                Part::Reader(id) => match dialect {
                    Dialect::Sqlite => out.sql(&id.to_string()),
                    Dialect::Postgres => out.reader(*id),
                },
                Part::Search(words) => {
                    match dialect {
                        Dialect::Sqlite => {
                            let query = fts5_query(words);
                            if query.is_empty() {
                                out.sql("1 = 0");
                            } else {
                                out.sql("m.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ");
                                out.value(Value::One(Bind::Text(query)));
                                out.sql(")");
                            }
                        }
                        Dialect::Postgres => {
                            // The stored `to_tsvector('english', content || ' ' || topic)`.
                            out.sql("m.search_vector @@ plainto_tsquery('english', ");
                            out.value(Value::One(Bind::Text(words.clone())));
                            out.sql(")");
                        }
                    }
                }
            }
        }
        out.pieces
    }

    /// Whether to keep this query prepared on PostgreSQL: marked so, and its text one of the
    /// first [`MAX_PREPARED_TEXTS`] seen.
    fn keep_prepared(&self, pieces: &[Piece]) -> bool {
        if !self.prepared {
            return false;
        }
        let mut seen = PREPARED_TEXTS.lock().unwrap_or_else(|e| e.into_inner());
        admit(&mut seen, text_key(pieces), MAX_PREPARED_TEXTS)
    }

    /// Whether to keep this query prepared on SQLite: as on PostgreSQL, when its SQLite text
    /// holds no value either (ID lists, `(integer, text)` rows and the reader's ID are literals
    /// there, so a query with one is a new text each time), and one of the first
    /// [`MAX_SQLITE_PREPARED_TEXTS`] seen. Preparing the `UNION ALL` of 49 followed topics took
    /// longer than running it.
    fn keep_prepared_on_sqlite(&self, pieces: &[Piece]) -> bool {
        let literal = |part: &Part| matches!(part, Part::Ids(_) | Part::Reader(_) | Part::Pairs(_));
        if !self.prepared || self.parts.iter().any(literal) {
            return false;
        }
        let mut seen = SQLITE_PREPARED_TEXTS
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        admit(&mut seen, text_key(pieces), MAX_SQLITE_PREPARED_TEXTS)
    }

    /// The query rendered for `dialect`, kept prepared or not as that backend keeps texts.
    fn run(&self, dialect: Dialect) -> Run {
        let pieces = self.render(dialect);
        let keep = match dialect {
            Dialect::Sqlite => self.keep_prepared_on_sqlite(&pieces),
            Dialect::Postgres => self.keep_prepared(&pieces),
        };
        Run::new(pieces, keep)
    }

    /// Runs a statement that returns no rows; answers how many rows it changed.
    pub fn execute(&self, conn: &mut DbConn) -> Result<usize, StorageError> {
        Ok(match conn {
            DbConn::Sqlite(c) => self.run(Dialect::Sqlite).execute(c)?,
            DbConn::Pg(c) => self.run(Dialect::Postgres).execute(c)?,
        })
    }

    /// Runs the query and loads its rows.
    pub fn load<T>(&self, conn: &mut DbConn) -> Result<Vec<T>, StorageError>
    where
        T: QueryableByName<Sqlite> + QueryableByName<Pg> + 'static,
    {
        Ok(match conn {
            DbConn::Sqlite(c) => self.run(Dialect::Sqlite).load::<T>(c)?,
            DbConn::Pg(c) => self.run(Dialect::Postgres).load::<T>(c)?,
        })
    }
}

/// Whether the text `key` may be kept prepared: one seen before, or a new one while fewer than
/// `max` are.
fn admit(seen: &mut Vec<u64>, key: u64, max: usize) -> bool {
    if seen.contains(&key) {
        return true;
    }
    if seen.len() >= max {
        return false;
    }
    seen.push(key);
    true
}

/// The texts kept prepared so far (hashes), for [`MAX_PREPARED_TEXTS`].
static PREPARED_TEXTS: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

/// The texts kept prepared on SQLite so far (hashes), for [`MAX_SQLITE_PREPARED_TEXTS`].
static SQLITE_PREPARED_TEXTS: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

/// A hash of the text of a rendered query (its values left out).
fn text_key(pieces: &[Piece]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for piece in pieces {
        match piece {
            Piece::Sql(text) => text.hash(&mut hasher),
            Piece::Value(_) => 0u8.hash(&mut hasher),
        }
    }
    hasher.finish()
}

/// Rendered pieces collected in order; PostgreSQL's placeholders numbered as diesel numbers
/// them (one per value, in order), so that the reader's, bound once, is named again by number.
#[derive(Default)]
struct Pieces {
    pieces: Vec<Piece>,
    values: usize,
    reader_at: Vec<(i64, usize)>,
}

impl Pieces {
    fn sql(&mut self, text: &str) {
        match self.pieces.last_mut() {
            Some(Piece::Sql(last)) => last.push_str(text),
            _ => self.pieces.push(Piece::Sql(text.to_owned())),
        }
    }

    fn value(&mut self, value: Value) {
        self.values += 1;
        self.pieces.push(Piece::Value(value));
    }

    /// The reader's ID: bound at its first appearance, `$n` of that one after.
    fn reader(&mut self, id: i64) {
        match self.reader_at.iter().find(|(r, _)| *r == id) {
            Some(&(_, at)) => self.sql(&format!("${at}")),
            None => {
                self.value(Value::One(Bind::Int(id)));
                self.reader_at.push((id, self.values));
            }
        }
    }
}

/// A rendered query as diesel runs it: the pieces' text, a placeholder per value written by
/// the backend; kept prepared (diesel's statement cache, by text) when `prepared`, else run
/// unnamed as diesel runs `sql_query`.
struct Run {
    pieces: Vec<Piece>,
    prepared: bool,
}

impl Run {
    fn new(pieces: Vec<Piece>, prepared: bool) -> Self {
        Run { pieces, prepared }
    }
}

impl QueryId for Run {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl Query for Run {
    type SqlType = Untyped;
}

impl Run {
    /// Writes the pieces, each value through `array` when it is a list (which only PostgreSQL
    /// binds), else as one placeholder.
    fn walk<'b, DB>(
        &'b self,
        out: &mut AstPass<'_, 'b, DB>,
        array: impl Fn(&mut AstPass<'_, 'b, DB>, &'b Value) -> QueryResult<()>,
    ) -> QueryResult<()>
    where
        DB: Backend + HasSqlType<BigInt> + HasSqlType<Text> + HasSqlType<Bool>,
        i64: ToSql<BigInt, DB>,
        String: ToSql<Text, DB>,
        bool: ToSql<Bool, DB>,
    {
        if !self.prepared {
            out.unsafe_to_cache_prepared();
        }
        for piece in &self.pieces {
            match piece {
                Piece::Sql(text) => out.push_sql(text),
                Piece::Value(Value::One(Bind::Int(v))) => out.push_bind_param::<BigInt, _>(v)?,
                Piece::Value(Value::One(Bind::Text(v))) => out.push_bind_param::<Text, _>(v)?,
                Piece::Value(Value::One(Bind::Bool(v))) => out.push_bind_param::<Bool, _>(v)?,
                Piece::Value(v @ (Value::Ints(_) | Value::Texts(_))) => array(out, v)?,
            }
        }
        Ok(())
    }
}

impl QueryFragment<Pg> for Run {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.walk(&mut out, |out, value| match value {
            Value::Ints(ids) => out.push_bind_param::<Array<BigInt>, _>(ids),
            Value::Texts(texts) => out.push_bind_param::<Array<Text>, _>(texts),
            Value::One(_) => Err(diesel::result::Error::QueryBuilderError(
                "a single value as an array".into(),
            )),
        })
    }
}

impl QueryFragment<Sqlite> for Run {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        // SQLite's ID lists are rendered as literals (no array reaches here).
        self.walk(&mut out, |_, _| {
            Err(diesel::result::Error::QueryBuilderError(
                "an array on SQLite".into(),
            ))
        })
    }
}

impl RunQueryDsl<PgConnection> for Run {}
impl RunQueryDsl<SqliteConnection> for Run {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text as the backend receives it (placeholders as diesel writes them) and the values.
    fn text(sql: &SqlBuilder, dialect: Dialect) -> (String, Vec<Value>) {
        let (mut text, mut values) = (String::new(), Vec::new());
        for piece in sql.render(dialect) {
            match piece {
                Piece::Sql(t) => text.push_str(&t),
                Piece::Value(v) => {
                    values.push(v);
                    match dialect {
                        Dialect::Sqlite => text.push('?'),
                        Dialect::Postgres => text.push_str(&format!("${}", values.len())),
                    }
                }
            }
        }
        (text, values)
    }

    #[test]
    fn placeholders_are_numbered_for_postgres() {
        let mut sql = SqlBuilder::new();
        sql.push("a = ")
            .bind(Bind::Int(1))
            .push(" AND ")
            .search("fast cars")
            .push(" AND b = ")
            .bind(Bind::Text("x".into()));
        let (sqlite, binds) = text(&sql, Dialect::Sqlite);
        assert_eq!(sqlite, "a = ? AND m.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?) AND b = ?");
        assert_eq!(binds[1], Value::One(Bind::Text("\"fast\" \"cars\"".into())));
        let (pg, binds) = text(&sql, Dialect::Postgres);
        assert_eq!(
            pg,
            "a = $1 AND m.search_vector @@ plainto_tsquery('english', $2) AND b = $3"
        );
        assert_eq!(binds[1], Value::One(Bind::Text("fast cars".into())));
    }

    #[test]
    fn id_lists_and_limits_are_literals_on_sqlite_and_bound_on_postgres() {
        let mut sql = SqlBuilder::new();
        sql.push("SELECT 1 WHERE ")
            .ids_in("m.id", [3, 5])
            .push(" AND ")
            .ids_in("m.channel_id", [])
            .limit(7);
        let (sqlite, values) = text(&sql, Dialect::Sqlite);
        assert_eq!(
            sqlite,
            "SELECT 1 WHERE m.id IN (3,5) AND m.channel_id IN (0) LIMIT 7"
        );
        assert_eq!(values, vec![]);
        let (pg, values) = text(&sql, Dialect::Postgres);
        assert_eq!(
            pg,
            "SELECT 1 WHERE m.id = ANY($1) AND m.channel_id = ANY($2) LIMIT $3"
        );
        assert_eq!(
            values,
            vec![
                Value::Ints(vec![3, 5]),
                Value::Ints(vec![]),
                Value::One(Bind::Int(7))
            ]
        );
    }

    #[test]
    fn triples_are_one_json_text_on_sqlite_and_three_arrays_on_postgres() {
        let mut sql = SqlBuilder::new();
        sql.with_triples(&[(1, 10, 20), (2, 30, 40)])
            .push(" SELECT c FROM g")
            .limit(5);
        let (sqlite, values) = text(&sql, Dialect::Sqlite);
        assert_eq!(
            sqlite,
            "WITH g(c, l, h) AS (SELECT value ->> 0, value ->> 1, value ->> 2 FROM \
             json_each(?)) SELECT c FROM g LIMIT 5"
        );
        assert_eq!(
            values,
            vec![Value::One(Bind::Text("[[1,10,20],[2,30,40]]".into()))]
        );
        let (pg, values) = text(&sql, Dialect::Postgres);
        assert_eq!(
            pg,
            "WITH g(c, l, h) AS (SELECT * FROM unnest($1, $2, $3)) SELECT c FROM g LIMIT $4"
        );
        assert_eq!(
            values,
            vec![
                Value::Ints(vec![1, 2]),
                Value::Ints(vec![10, 30]),
                Value::Ints(vec![20, 40]),
                Value::One(Bind::Int(5)),
            ]
        );
        let mut other = SqlBuilder::new();
        other
            .with_triples(&[(7, 1, 2)])
            .push(" SELECT c FROM g")
            .limit(9);
        assert_eq!(
            text(&other, Dialect::Postgres).0,
            pg,
            "one text for any rows"
        );
    }

    #[test]
    fn pairs_are_a_values_list_on_sqlite_and_two_arrays_on_postgres() {
        let mut sql = SqlBuilder::new();
        sql.with_pairs(&[(1, "a".into()), (2, "b".into())])
            .push(" SELECT c FROM t");
        let (sqlite, values) = text(&sql, Dialect::Sqlite);
        assert_eq!(
            sqlite,
            "WITH t(c, k) AS (VALUES (1, ?), (2, ?)) SELECT c FROM t"
        );
        assert_eq!(
            values,
            vec![
                Value::One(Bind::Text("a".into())),
                Value::One(Bind::Text("b".into()))
            ]
        );
        let (pg, values) = text(&sql, Dialect::Postgres);
        assert_eq!(
            pg,
            "WITH t(c, k) AS (SELECT * FROM unnest($1, $2)) SELECT c FROM t"
        );
        assert_eq!(
            values,
            vec![
                Value::Ints(vec![1, 2]),
                Value::Texts(vec!["a".into(), "b".into()])
            ]
        );
    }

    #[test]
    fn the_reader_is_bound_once_on_postgres() {
        let mut sql = SqlBuilder::new();
        sql.push("x = ")
            .bind(Bind::Int(1))
            .push_for(&format!("u = {READER} AND v = {READER} AND w = "), 42)
            .bind(Bind::Int(2));
        let (sqlite, values) = text(&sql, Dialect::Sqlite);
        assert_eq!(sqlite, "x = ?u = 42 AND v = 42 AND w = ?");
        assert_eq!(values.len(), 2);
        let (pg, values) = text(&sql, Dialect::Postgres);
        assert_eq!(pg, "x = $1u = $2 AND v = $2 AND w = $3");
        assert_eq!(
            values,
            vec![
                Value::One(Bind::Int(1)),
                Value::One(Bind::Int(42)),
                Value::One(Bind::Int(2))
            ]
        );
    }

    #[test]
    fn texts_past_the_cap_run_unprepared() {
        let mut seen = Vec::new();
        assert!(admit(&mut seen, 1, 2));
        assert!(admit(&mut seen, 2, 2));
        assert!(!admit(&mut seen, 3, 2), "a third text");
        assert!(admit(&mut seen, 1, 2), "a text seen before");
    }

    #[test]
    fn sqlite_keeps_prepared_only_texts_without_literals() {
        let keep = |sql: &SqlBuilder| sql.keep_prepared_on_sqlite(&sql.render(Dialect::Sqlite));
        let mut bound = SqlBuilder::new();
        bound
            .push("SELECT id FROM messages WHERE channel_id = ")
            .bind(Bind::Int(4))
            .push(" ORDER BY id")
            .limit(10);
        assert!(!keep(&bound), "not marked prepared");
        bound.prepared();
        assert!(keep(&bound));
        let mut listed = bound.clone();
        listed.push(" AND ").ids_in("id", [1, 2]);
        assert!(!keep(&listed), "an ID list is a literal on SQLite");
        let mut reader = bound.clone();
        reader.push_for(&format!(" AND sender_id = {READER}"), 9);
        assert!(!keep(&reader), "so is the reader's ID");
    }

    #[test]
    fn user_input_is_never_fts_syntax() {
        assert_eq!(fts5_query("a\"b OR c"), "\"a\"\"b\" \"OR\" \"c\"");
        assert_eq!(fts5_query("   "), "");
    }
}

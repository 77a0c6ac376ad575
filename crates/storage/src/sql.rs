//! Hand-built SQL for the queries diesel's multi-backend DSL cannot express (dynamic filters
//! over joins). The SQL is written once, portable; each backend gets its own placeholder syntax,
//! and full-text search, the one dialect-specific condition, is rendered per backend here.

use crate::conn::DbConn;
use crate::error::StorageError;
use diesel::pg::Pg;
use diesel::query_dsl::RunQueryDsl;
use diesel::sql_types::{BigInt, Bool, Text};
use diesel::sqlite::Sqlite;
use diesel::QueryableByName;

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

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Bind(Bind),
    Search(String),
}

/// SQL text, placeholders and the one dialect-specific piece (full-text search), rendered for
/// whichever backend runs it.
#[derive(Debug, Clone, Default)]
pub struct SqlBuilder {
    parts: Vec<Part>,
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

    fn render(&self, dialect: Dialect) -> (String, Vec<Bind>) {
        let mut text = String::new();
        let mut binds = Vec::new();
        let placeholder = |text: &mut String, binds: &mut Vec<Bind>, value: Bind| {
            binds.push(value);
            match dialect {
                Dialect::Sqlite => text.push('?'),
                Dialect::Postgres => text.push_str(&format!("${}", binds.len())),
            }
        };
        for part in &self.parts {
            match part {
                Part::Text(t) => text.push_str(t),
                Part::Bind(b) => placeholder(&mut text, &mut binds, b.clone()),
                Part::Search(words) => {
                    match dialect {
                        Dialect::Sqlite => {
                            let query = fts5_query(words);
                            if query.is_empty() {
                                text.push_str("1 = 0");
                            } else {
                                text.push_str("m.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ");
                                placeholder(&mut text, &mut binds, Bind::Text(query));
                                text.push(')');
                            }
                        }
                        Dialect::Postgres => {
                            // The stored `to_tsvector('english', content || ' ' || topic)`.
                            text.push_str("m.search_vector @@ plainto_tsquery('english', ");
                            placeholder(&mut text, &mut binds, Bind::Text(words.clone()));
                            text.push(')');
                        }
                    }
                }
            }
        }
        (text, binds)
    }

    /// Runs a statement that returns no rows; answers how many rows it changed.
    pub fn execute(&self, conn: &mut DbConn) -> Result<usize, StorageError> {
        macro_rules! run {
            ($c:expr, $backend:ty, $dialect:expr) => {{
                let (text, binds) = self.render($dialect);
                let mut query = diesel::sql_query(text).into_boxed::<$backend>();
                for bind in binds {
                    query = match bind {
                        Bind::Int(v) => query.bind::<BigInt, _>(v),
                        Bind::Text(v) => query.bind::<Text, _>(v),
                        Bind::Bool(v) => query.bind::<Bool, _>(v),
                    };
                }
                query.execute($c)?
            }};
        }
        Ok(match conn {
            DbConn::Sqlite(c) => run!(c, Sqlite, Dialect::Sqlite),
            DbConn::Pg(c) => run!(c, Pg, Dialect::Postgres),
        })
    }

    /// Runs the query and loads its rows.
    pub fn load<T>(&self, conn: &mut DbConn) -> Result<Vec<T>, StorageError>
    where
        T: QueryableByName<Sqlite> + QueryableByName<Pg> + 'static,
    {
        macro_rules! run {
            ($c:expr, $backend:ty, $dialect:expr) => {{
                let (text, binds) = self.render($dialect);
                let mut query = diesel::sql_query(text).into_boxed::<$backend>();
                for bind in binds {
                    query = match bind {
                        Bind::Int(v) => query.bind::<BigInt, _>(v),
                        Bind::Text(v) => query.bind::<Text, _>(v),
                        Bind::Bool(v) => query.bind::<Bool, _>(v),
                    };
                }
                query.load::<T>($c)?
            }};
        }
        Ok(match conn {
            DbConn::Sqlite(c) => run!(c, Sqlite, Dialect::Sqlite),
            DbConn::Pg(c) => run!(c, Pg, Dialect::Postgres),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_for_postgres() {
        let mut sql = SqlBuilder::new();
        sql.push("a = ")
            .bind(Bind::Int(1))
            .push(" AND ")
            .search("fast cars")
            .push(" AND b = ")
            .bind(Bind::Text("x".into()));
        let (sqlite, binds) = sql.render(Dialect::Sqlite);
        assert_eq!(sqlite, "a = ? AND m.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?) AND b = ?");
        assert_eq!(binds[1], Bind::Text("\"fast\" \"cars\"".into()));
        let (pg, binds) = sql.render(Dialect::Postgres);
        assert!(
            pg.starts_with(
                "a = $1 AND m.search_vector @@ plainto_tsquery('english', $2) AND b = $3"
            ),
            "{pg}"
        );
        assert_eq!(binds[1], Bind::Text("fast cars".into()));
    }

    #[test]
    fn user_input_is_never_fts_syntax() {
        assert_eq!(fts5_query("a\"b OR c"), "\"a\"\"b\" \"OR\" \"c\"");
        assert_eq!(fts5_query("   "), "");
    }
}

//! Hand-built SQL for the queries diesel's multi-backend DSL cannot express (dynamic filters
//! over joins). Text is written once with `?` placeholders; each backend gets its own
//! placeholder syntax, so the SQL itself must be portable.

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

/// SQL text with `?` placeholders and their values, in order.
#[derive(Debug, Clone, Default)]
pub struct SqlBuilder {
    text: String,
    binds: Vec<Bind>,
}

impl SqlBuilder {
    /// Empty SQL.
    pub fn new() -> Self {
        SqlBuilder::default()
    }

    /// Appends SQL text (which must not contain `?`).
    pub fn push(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }

    /// Appends a placeholder bound to `value`.
    pub fn bind(&mut self, value: Bind) -> &mut Self {
        self.text.push('?');
        self.binds.push(value);
        self
    }

    /// Appends another builder's text and binds.
    pub fn append(&mut self, other: SqlBuilder) -> &mut Self {
        self.text.push_str(&other.text);
        self.binds.extend(other.binds);
        self
    }

    /// The text with PostgreSQL's numbered placeholders.
    fn numbered(&self) -> String {
        let mut out = String::with_capacity(self.text.len() + 8);
        let mut n = 0;
        for c in self.text.chars() {
            if c == '?' {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            } else {
                out.push(c);
            }
        }
        out
    }

    /// Runs the query and loads its rows.
    pub fn load<T>(&self, conn: &mut DbConn) -> Result<Vec<T>, StorageError>
    where
        T: QueryableByName<Sqlite> + QueryableByName<Pg> + 'static,
    {
        macro_rules! run {
            ($c:expr, $backend:ty, $text:expr) => {{
                let mut query = diesel::sql_query($text).into_boxed::<$backend>();
                for bind in &self.binds {
                    query = match bind {
                        Bind::Int(v) => query.bind::<BigInt, _>(*v),
                        Bind::Text(v) => query.bind::<Text, _>(v.clone()),
                        Bind::Bool(v) => query.bind::<Bool, _>(*v),
                    };
                }
                query.load::<T>($c)?
            }};
        }
        Ok(match conn {
            DbConn::Sqlite(c) => run!(c, Sqlite, self.text.clone()),
            DbConn::Pg(c) => run!(c, Pg, self.numbered()),
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
            .push(" AND b = ")
            .bind(Bind::Text("x".into()));
        assert_eq!(sql.text, "a = ? AND b = ?");
        assert_eq!(sql.numbered(), "a = $1 AND b = $2");
        assert_eq!(sql.binds.len(), 2);
    }
}

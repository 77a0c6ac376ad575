//! The shared rate-limit buckets on PostgreSQL (`rate_limit_buckets`; several server processes
//! on one database, without Redis): token buckets timed by the database's clock, so that the
//! processes' clocks do not matter. `actions::rate_limit` takes a lease of tokens at once and
//! spends it in memory. SQLite has none: its one process limits in memory.

use crate::conn::DbConn;
use crate::error::StorageError;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Text};

fn pg(conn: &mut DbConn) -> Result<&mut PgConnection, StorageError> {
    conn.postgres_only("the shared rate-limit buckets are")
}

/// What taking tokens from a shared bucket gave.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Taken {
    /// This many tokens (at least one, at most the number asked for) were taken.
    Tokens(u32),
    /// None was there; one will be after this many seconds.
    Wait(f64),
}

/// Takes up to `want` tokens (at least one) from the bucket `key` (at most `max` tokens, refilled
/// at `per_second`), as many as are whole in it, timed by the database's clock so that the nodes'
/// clocks do not matter.
pub fn take_tokens(
    conn: &mut DbConn,
    key: &str,
    max: f64,
    per_second: f64,
    want: u32,
) -> Result<Taken, StorageError> {
    let conn = pg(conn)?;
    let (tokens, granted) = TakeTokens {
        key,
        max,
        per_second,
        want: f64::from(want.max(1)),
    }
    .get_result::<(f64, f64)>(conn)?;
    Ok(if granted >= 1.0 {
        // At most `want`, a u32.
        Taken::Tokens(granted as u32)
    } else {
        Taken::Wait((1.0 - tokens) / per_second.max(f64::MIN_POSITIVE))
    })
}

/// [`take_tokens`]'s statement, its own query type so that it stays prepared (as
/// `sql_query` it was parsed and planned on every API request that took from the shared
/// bucket: 0.3 of its 0.4 ms on PostgreSQL). The values are bound once each, in its first
/// line, and named by number in the rest ([`UPSERT_TOKENS`]).
#[derive(Debug, Clone, Copy)]
struct TakeTokens<'a> {
    key: &'a str,
    max: f64,
    per_second: f64,
    want: f64,
}

/// The bucket's upsert after its first line, which names the values (`now`): `$1` the key,
/// `$2` the bucket's size, `$3` the refill rate a second, `$4` the tokens wanted (by number where
/// `now` is out of reach, in the update). `refilled` is the bucket's content now; whole
/// tokens are taken, up to the wanted.
static UPSERT_TOKENS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let refilled = "LEAST($2, b.tokens + (EXCLUDED.updated_ms - b.updated_ms) * $3 / 1000.0)";
    let granted = format!("CASE WHEN {refilled} >= 1 THEN LEAST($4, floor({refilled})) ELSE 0 END");
    format!(
        "INSERT INTO rate_limit_buckets AS b (key, tokens, updated_ms, allowed, granted) \
         SELECT now.key, now.size - LEAST(now.want, floor(now.size)), now.ms, TRUE, \
           LEAST(now.want, floor(now.size)) FROM now \
         ON CONFLICT (key) DO UPDATE SET tokens = {refilled} - {granted}, granted = {granted}, \
           allowed = {refilled} >= 1, updated_ms = EXCLUDED.updated_ms \
         RETURNING tokens, granted"
    )
});

crate::prepared::prepared_pg_statement!(TakeTokens<'_>, (Double, Double));

impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for TakeTokens<'_> {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> QueryResult<()> {
        out.push_sql(
            "WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT AS ms, ",
        );
        out.push_bind_param::<Text, _>(&self.key)?;
        out.push_sql(" AS key, ");
        out.push_bind_param::<Double, _>(&self.max)?;
        out.push_sql(" AS size, ");
        out.push_bind_param::<Double, _>(&self.per_second)?;
        out.push_sql(" AS rate, ");
        out.push_bind_param::<Double, _>(&self.want)?;
        out.push_sql(" AS want) ");
        out.push_sql(&UPSERT_TOKENS);
        Ok(())
    }
}

/// Deletes buckets untouched for `idle_ms` (they are full again by then).
pub fn prune_tokens(conn: &mut DbConn, idle_ms: i64) -> Result<usize, StorageError> {
    let conn = pg(conn)?;
    Ok(diesel::sql_query(
        "DELETE FROM rate_limit_buckets
         WHERE updated_ms < (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT - $1",
    )
    .bind::<BigInt, _>(idle_ms)
    .execute(conn)?)
}

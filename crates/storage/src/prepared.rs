//! PostgreSQL statements written as query types of their own, so that they stay prepared.
//! Diesel prepares a statement once per connection only when its query type has a static ID,
//! which `sql_query` never has (and some of the query builder's compositions, such as a
//! subquery's `single_value`, do not either); such a type gets one here, so that PostgreSQL
//! parses and plans the statement once per connection instead of on every call. Used for the
//! statements of every send and write (the event log's append, a read copy's range, the
//! recipients with the topic) and of every request (the rate limits' bucket).

/// Makes `$ty` (a struct of the statement's parameters, with one lifetime `<'_>` or none) a
/// prepared PostgreSQL statement: its static query ID, `RunQueryDsl`, and, when `$sql` is
/// given, the SQL type of the rows it returns. Its text is its `QueryFragment<Pg>`.
macro_rules! prepared_pg_statement {
    ($ty:ident<'_> $(, $sql:ty)?) => {
        impl diesel::query_builder::QueryId for $ty<'_> {
            type QueryId = $ty<'static>;
            const HAS_STATIC_QUERY_ID: bool = true;
        }
        $(impl diesel::query_builder::Query for $ty<'_> {
            type SqlType = $sql;
        })?
        impl diesel::query_dsl::RunQueryDsl<diesel::pg::PgConnection> for $ty<'_> {}
    };
    ($ty:ident $(, $sql:ty)?) => {
        impl diesel::query_builder::QueryId for $ty {
            type QueryId = $ty;
            const HAS_STATIC_QUERY_ID: bool = true;
        }
        $(impl diesel::query_builder::Query for $ty {
            type SqlType = $sql;
        })?
        impl diesel::query_dsl::RunQueryDsl<diesel::pg::PgConnection> for $ty {}
    };
}

pub(crate) use prepared_pg_statement;

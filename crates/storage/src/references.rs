//! What a page of messages refers to (the people it names, its channels' names, its reactions),
//! read in one statement instead of one per kind: on PostgreSQL each statement is a round trip
//! with its parsing and planning, and these three were three of a page's eight
//! (`docs/benchmarks.md`, "Statements per page").
//!
//! The three lookups are one `UNION ALL` whose rows carry a kind and columns wide enough for
//! each kind (integers and text only, so that both backends type every column alike, also when
//! a kind is absent); each row is read back as what it is. Nothing is cached: every value is
//! read in the statement, as the three lookups read it.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::reactions::Reaction;
use crate::sql::{id_list, SqlBuilder};
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::QueryableByName;
use parley_domain::user::User;
use parley_domain::{ChannelId, MessageId, UserId};

/// What [`read`] found, each kind in ID order (reactions in the order they were made).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct References {
    /// The users asked for that exist.
    pub users: Vec<User>,
    /// The names of the channels asked for that exist.
    pub channel_names: Vec<(ChannelId, String)>,
    /// The reactions to the messages asked for.
    pub reactions: Vec<Reaction>,
}

const USER: i64 = 0;
const CHANNEL: i64 = 1;
const REACTION: i64 = 2;

/// One row of the union. Columns by kind: users fill every one (booleans as 0/1); channels
/// `id` and `t1` (the name); reactions `id` (the message), `n1` (the user), `t1` to `t3` (name,
/// code, type).
#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = BigInt)]
    kind: i64,
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    n1: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    n2: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    n3: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    n4: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    n5: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    n6: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    n7: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    n8: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    t1: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    t2: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    t3: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    t4: Option<String>,
}

/// Typed NULLs for the columns a kind does not use (a bare `NULL` in every branch would leave
/// PostgreSQL without a type for the column); constants are cast too, PostgreSQL's being 32-bit.
const NO_INT: &str = "CAST(NULL AS BIGINT)";
const NO_TEXT: &str = "CAST(NULL AS TEXT)";

/// The users with these IDs, the names of these channels and the reactions to these messages,
/// in one statement (none when all three lists are empty).
pub fn read(
    conn: &mut DbConn,
    users: &[UserId],
    channels: &[ChannelId],
    messages: &[MessageId],
) -> Result<References, StorageError> {
    let mut branches = Vec::new();
    if !users.is_empty() {
        branches.push(format!(
            "SELECT CAST({USER} AS BIGINT) AS kind, u.id AS id, u.role AS n1, \
             CAST(CASE WHEN u.is_active THEN 1 ELSE 0 END AS BIGINT) AS n2, u.bot_type AS n3, \
             u.bot_owner_id AS n4, u.avatar_version AS n5, u.date_joined AS n6, \
             u.email_address_visibility AS n7, \
             CAST(CASE WHEN u.can_create_users THEN 1 ELSE 0 END AS BIGINT) AS n8, \
             u.delivery_email AS t1, u.full_name AS t2, u.timezone AS t3, \
             u.avatar_source AS t4, u.id AS ord \
             FROM users u WHERE u.id IN ({})",
            id_list(users.iter().map(|u| u.0))
        ));
    }
    if !channels.is_empty() {
        branches.push(format!(
            "SELECT CAST({CHANNEL} AS BIGINT) AS kind, c.id AS id, {NO_INT} AS n1, {NO_INT} AS n2, \
             {NO_INT} AS n3, {NO_INT} AS n4, {NO_INT} AS n5, {NO_INT} AS n6, {NO_INT} AS n7, \
             {NO_INT} AS n8, c.name AS t1, {NO_TEXT} AS t2, {NO_TEXT} AS t3, {NO_TEXT} AS t4, \
             c.id AS ord FROM channels c WHERE c.id IN ({})",
            id_list(channels.iter().map(|c| c.0))
        ));
    }
    if !messages.is_empty() {
        branches.push(format!(
            "SELECT CAST({REACTION} AS BIGINT) AS kind, r.message_id AS id, r.user_id AS n1, {NO_INT} AS n2, \
             {NO_INT} AS n3, {NO_INT} AS n4, {NO_INT} AS n5, {NO_INT} AS n6, {NO_INT} AS n7, \
             {NO_INT} AS n8, r.emoji_name AS t1, r.emoji_code AS t2, r.reaction_type AS t3, \
             {NO_TEXT} AS t4, r.id AS ord FROM reactions r WHERE r.message_id IN ({})",
            id_list(messages.iter().map(|m| m.0))
        ));
    }
    if branches.is_empty() {
        return Ok(References::default());
    }
    let mut sql = SqlBuilder::new();
    sql.push(&branches.join(" UNION ALL "));
    sql.push(" ORDER BY kind, ord");
    let mut found = References::default();
    for row in sql.load::<Row>(conn)? {
        match row.kind {
            USER => found.users.push(User::from(crate::users::UserRow {
                id: row.id,
                role: row.n1.unwrap_or_default(),
                is_active: row.n2 == Some(1),
                bot_type: row.n3,
                bot_owner_id: row.n4,
                avatar_version: row.n5.unwrap_or_default(),
                date_joined: row.n6.unwrap_or_default(),
                email_address_visibility: row.n7.unwrap_or_default(),
                can_create_users: row.n8 == Some(1),
                delivery_email: row.t1.unwrap_or_default(),
                full_name: row.t2.unwrap_or_default(),
                timezone: row.t3.unwrap_or_default(),
                avatar_source: row.t4.unwrap_or_default(),
            })),
            CHANNEL => found
                .channel_names
                .push((ChannelId(row.id), row.t1.unwrap_or_default())),
            _ => found.reactions.push(Reaction {
                message_id: MessageId(row.id),
                user_id: UserId(row.n1.unwrap_or_default()),
                emoji_name: row.t1.unwrap_or_default(),
                emoji_code: row.t2.unwrap_or_default(),
                reaction_type: row.t3.unwrap_or_default(),
            }),
        }
    }
    Ok(found)
}

//! Per-user summaries that register snapshots need: unread messages, starred messages and recent
//! direct-message conversations. Starred and direct ones read through a partial index on
//! `user_messages`; unread ones from the reader's spans, read ranges and rows.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::sql::{Bind, IdRow, SqlBuilder};
use crate::unread::UnreadRow;
use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use parley_domain::{MessageId, UserId};

/// A user's unread messages, oldest first, at most `limit` (the newest ones when there are more).
/// Found from the reader's spans, read ranges and rows ([`crate::unread::ids`]), never by
/// reading the history.
pub fn unread(conn: &mut DbConn, user: UserId, limit: i64) -> Result<Vec<UnreadRow>, StorageError> {
    let mut rows = crate::unread::rows(conn, user)?;
    let keep = usize::try_from(limit).unwrap_or(0);
    rows.drain(..rows.len().saturating_sub(keep));
    Ok(rows)
}

/// The IDs of a user's starred messages, oldest first.
pub fn starred(conn: &mut DbConn, user: UserId) -> Result<Vec<MessageId>, StorageError> {
    let mut sql = SqlBuilder::new();
    sql.push("SELECT message_id AS id FROM user_messages WHERE user_id = ");
    sql.bind(Bind::Int(user.0));
    sql.push(" AND (flags & 2) <> 0 ORDER BY message_id ASC");
    Ok(sql
        .prepared()
        .load::<IdRow>(conn)?
        .into_iter()
        .map(|r| MessageId(r.id))
        .collect())
}

/// A direct-message conversation and its newest message.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct ConversationRow {
    /// Participants' sorted IDs.
    #[diesel(sql_type = Text)]
    pub dm_key: String,
    /// The newest message the user received in it.
    #[diesel(sql_type = BigInt)]
    pub max_id: i64,
}

/// A user's most recent direct-message conversations, newest first. Reads the newest
/// `scan` direct messages, so the cost is bounded whatever the history. Each message's
/// conversation is read from the index of direct messages (`messages_direct`, migration
/// 000107), which holds it, rather than from the message's row: for the scale benchmark's
/// heaviest user on PostgreSQL, 1,000 probes of the table took 4.1 ms and of the index 2.3.
/// The scan is written into the text, which stays prepared (planning it was another 1.1 ms).
pub fn recent_conversations(
    conn: &mut DbConn,
    user: UserId,
    scan: u16,
) -> Result<Vec<ConversationRow>, StorageError> {
    let mut sql = SqlBuilder::new();
    sql.push(
        "SELECT m.dm_key AS dm_key, MAX(m.id) AS max_id FROM \
         (SELECT message_id FROM user_messages WHERE user_id = ",
    );
    sql.bind(Bind::Int(user.0));
    sql.push(&format!(
        " AND (flags & 2048) <> 0 ORDER BY message_id DESC LIMIT {scan}) um \
         JOIN messages m ON m.id = um.message_id WHERE m.dm_key IS NOT NULL \
         GROUP BY m.dm_key ORDER BY max_id DESC"
    ));
    sql.prepared().load(conn)
}

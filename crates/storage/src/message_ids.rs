//! The lock that keeps message IDs in commit order on PostgreSQL (migration 000110,
//! `docs/architecture.md`, "Message IDs in commit order").
//!
//! Every message insert takes it through the ID column's default (`parley_next_message_id()`),
//! after the send's channel locks, and holds it to the commit. A transaction that takes it
//! first, before any channel lock, is the writer's batch (`writer.rs`): a batch holds it from
//! its first send's insert to its commit and takes the channel locks of its later sends
//! meanwhile, so with the ID lock taken later, two nodes' batches (or a batch and a move
//! posting its notices) could each hold what the other waits for. Taken at the batch's start,
//! every batch of every node takes it before anything else, and a batch holding it waits only
//! for transactions that insert no message (which never wait for it).

use crate::conn::DbConn;
use crate::error::StorageError;
use diesel::prelude::*;

/// The advisory lock's key: 0x6d73_6769_6473 ("msgids"), as in `parley_next_message_id()`.
const MESSAGE_ID_LOCK: i64 = 0x6d73_6769_6473;

/// Takes the message ID lock for the rest of the transaction (nothing on SQLite, whose writes
/// take turns anyway); the inserts that follow take it again at no cost.
pub(crate) fn hold(conn: &mut DbConn) -> Result<(), StorageError> {
    if let DbConn::Pg(pg) = conn {
        diesel::select(crate::spans::advisory::pg_advisory_xact_lock(
            MESSAGE_ID_LOCK,
        ))
        .execute(pg)?;
    }
    Ok(())
}

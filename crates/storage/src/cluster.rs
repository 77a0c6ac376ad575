//! The server processes sharing one PostgreSQL database (`cluster_nodes`): each one says where
//! it is reached and how far it has delivered the event log, every few seconds. A node that
//! stopped saying so is gone: its queues are lost (unless it handed them over) and the log is
//! no longer kept for it. PostgreSQL only, like `event_log`.

use crate::conn::DbConn;
use crate::error::StorageError;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};

/// A node as the others see it.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct Node {
    /// Its name, the prefix of its queue IDs.
    #[diesel(sql_type = Text)]
    pub node_id: String,
    /// The base URL other nodes forward requests to.
    #[diesel(sql_type = Text)]
    pub address: String,
    /// The log position it has delivered.
    #[diesel(sql_type = BigInt)]
    pub position: i64,
    /// When it last said it was alive (Unix seconds, the database's clock).
    #[diesel(sql_type = BigInt)]
    pub heartbeat_at: i64,
    /// It is stopping gracefully: its queues are about to be handed over.
    #[diesel(sql_type = diesel::sql_types::Bool)]
    pub stopping: bool,
}

fn pg(conn: &mut DbConn) -> Result<&mut diesel::pg::PgConnection, StorageError> {
    conn.postgres_only("the cluster is")
}

const NOW: &str = "extract(epoch FROM clock_timestamp())::BIGINT";

/// Records that `node_id` is alive, reached at `address`, and has delivered up to `position`.
pub fn heartbeat(
    conn: &mut DbConn,
    node_id: &str,
    address: &str,
    position: i64,
) -> Result<(), StorageError> {
    let conn = pg(conn)?;
    diesel::sql_query(format!(
        "INSERT INTO cluster_nodes (node_id, address, position, started_at, heartbeat_at)
         VALUES ($1, $2, $3, {NOW}, {NOW})
         ON CONFLICT (node_id) DO UPDATE SET address = EXCLUDED.address,
           position = EXCLUDED.position, heartbeat_at = EXCLUDED.heartbeat_at"
    ))
    .bind::<Text, _>(node_id)
    .bind::<Text, _>(address)
    .bind::<BigInt, _>(position)
    .execute(conn)?;
    Ok(())
}

/// Records that `node_id` is stopping gracefully (requests for its queues wait for the
/// hand-over instead of failing).
pub fn mark_stopping(conn: &mut DbConn, node_id: &str) -> Result<(), StorageError> {
    let conn = pg(conn)?;
    diesel::sql_query("UPDATE cluster_nodes SET stopping = TRUE WHERE node_id = $1")
        .bind::<Text, _>(node_id)
        .execute(conn)?;
    Ok(())
}

/// Removes a node (it stopped, or was found dead).
pub fn remove(conn: &mut DbConn, node_id: &str) -> Result<(), StorageError> {
    let conn = pg(conn)?;
    diesel::sql_query("DELETE FROM cluster_nodes WHERE node_id = $1")
        .bind::<Text, _>(node_id)
        .execute(conn)?;
    Ok(())
}

/// The node `node_id`, if it said it was alive in the last `alive_seconds`.
pub fn live_node(
    conn: &mut DbConn,
    node_id: &str,
    alive_seconds: i64,
) -> Result<Option<Node>, StorageError> {
    let conn = pg(conn)?;
    Ok(diesel::sql_query(format!(
        "SELECT node_id, address, position, heartbeat_at, stopping FROM cluster_nodes
         WHERE node_id = $1 AND heartbeat_at >= {NOW} - $2"
    ))
    .bind::<Text, _>(node_id)
    .bind::<BigInt, _>(alive_seconds)
    .get_result(conn)
    .optional()?)
}

/// Every node that said it was alive in the last `alive_seconds`.
pub fn live_nodes(conn: &mut DbConn, alive_seconds: i64) -> Result<Vec<Node>, StorageError> {
    let conn = pg(conn)?;
    Ok(diesel::sql_query(format!(
        "SELECT node_id, address, position, heartbeat_at, stopping FROM cluster_nodes
         WHERE heartbeat_at >= {NOW} - $1 ORDER BY node_id"
    ))
    .bind::<BigInt, _>(alive_seconds)
    .load(conn)?)
}

/// Forgets nodes silent for longer than `dead_seconds`; returns their IDs.
pub fn remove_dead(conn: &mut DbConn, dead_seconds: i64) -> Result<Vec<String>, StorageError> {
    let conn = pg(conn)?;
    #[derive(QueryableByName)]
    struct Id {
        #[diesel(sql_type = Text)]
        node_id: String,
    }
    let ids: Vec<Id> = diesel::sql_query(format!(
        "DELETE FROM cluster_nodes WHERE heartbeat_at < {NOW} - $1 RETURNING node_id"
    ))
    .bind::<BigInt, _>(dead_seconds)
    .load(conn)?;
    Ok(ids.into_iter().map(|i| i.node_id).collect())
}

/// A queue a stopping node handed over.
#[derive(Debug, Clone, QueryableByName)]
pub struct HandedQueue {
    /// The queue's ID, unchanged for its client.
    #[diesel(sql_type = Text)]
    pub queue_id: String,
    /// Its owner.
    #[diesel(sql_type = BigInt)]
    pub user_id: i64,
    /// The log position its events reach.
    #[diesel(sql_type = BigInt)]
    pub position: i64,
    /// The queue as the event engine serialized it.
    #[diesel(sql_type = Text)]
    pub data: String,
}

/// Hands a queue over to whichever node a request for it reaches next.
pub fn hand_off(conn: &mut DbConn, queue: &HandedQueue) -> Result<(), StorageError> {
    let conn = pg(conn)?;
    diesel::sql_query(format!(
        "INSERT INTO queue_handoffs (queue_id, user_id, position, data, handed_at)
         VALUES ($1, $2, $3, $4, {NOW})
         ON CONFLICT (queue_id) DO UPDATE SET user_id = EXCLUDED.user_id,
           position = EXCLUDED.position, data = EXCLUDED.data, handed_at = EXCLUDED.handed_at"
    ))
    .bind::<Text, _>(&queue.queue_id)
    .bind::<BigInt, _>(queue.user_id)
    .bind::<BigInt, _>(queue.position)
    .bind::<Text, _>(&queue.data)
    .execute(conn)?;
    Ok(())
}

/// Takes a handed-over queue for node `node_id` (at most one node gets it), recording the
/// adoption so that other nodes forward its requests there.
fn adopt(
    conn: &mut DbConn,
    queue_id: &str,
    node_id: &str,
) -> Result<Option<HandedQueue>, StorageError> {
    let conn = pg(conn)?;
    let taken: Option<HandedQueue> = diesel::sql_query(
        "DELETE FROM queue_handoffs WHERE queue_id = $1
         RETURNING queue_id, user_id, position, data",
    )
    .bind::<Text, _>(queue_id)
    .get_result(conn)
    .optional()?;
    if taken.is_some() {
        diesel::sql_query(format!(
            "INSERT INTO queue_adoptions (queue_id, node_id, adopted_at) VALUES ($1, $2, {NOW})
             ON CONFLICT (queue_id) DO UPDATE SET node_id = EXCLUDED.node_id,
               adopted_at = EXCLUDED.adopted_at"
        ))
        .bind::<Text, _>(queue_id)
        .bind::<Text, _>(node_id)
        .execute(conn)?;
    }
    Ok(taken)
}

/// The node that adopted `queue_id`, if one did.
fn adopter(conn: &mut DbConn, queue_id: &str) -> Result<Option<String>, StorageError> {
    let conn = pg(conn)?;
    #[derive(QueryableByName)]
    struct Id {
        #[diesel(sql_type = Text)]
        node_id: String,
    }
    Ok(
        diesel::sql_query("SELECT node_id FROM queue_adoptions WHERE queue_id = $1")
            .bind::<Text, _>(queue_id)
            .get_result::<Id>(conn)
            .optional()?
            .map(|id| id.node_id),
    )
}

/// Where a queue that the asking node does not hold is.
#[derive(Debug)]
pub enum QueueWhereabouts {
    /// It was handed over, and the asking node has just taken it.
    Adopted(HandedQueue),
    /// A live node holds it (or is stopping and about to hand it over).
    HeldBy(Node),
    /// No live node holds it and nobody handed it over.
    Gone,
}

/// Looks for `queue_id` (created by the node `creator`) on behalf of the node `node_id`: takes
/// it if it was handed over, else finds the live node holding it (its adopter, else its
/// creator). Run it in one transaction (the adoption is two writes).
///
/// The holder is read before the hand-over is looked for, and read once more when it seemed
/// gone. A stopping node hands its queues over and leaves in one transaction, so a holder gone
/// at the first read means its hand-over was committed: the queue is taken here, or another
/// node took it meanwhile (also one transaction), and the second read finds that node. In the
/// other order, a hand-over committed between the two reads made the queue seem held by nobody.
pub fn find_queue(
    conn: &mut DbConn,
    queue_id: &str,
    creator: Option<&str>,
    node_id: &str,
    alive_seconds: i64,
) -> Result<QueueWhereabouts, StorageError> {
    let held_by = holder(conn, queue_id, creator, alive_seconds)?;
    if let Some(handed) = adopt(conn, queue_id, node_id)? {
        return Ok(QueueWhereabouts::Adopted(handed));
    }
    let held_by = match held_by {
        Some(node) => Some(node),
        None => holder(conn, queue_id, creator, alive_seconds)?,
    };
    Ok(held_by.map_or(QueueWhereabouts::Gone, QueueWhereabouts::HeldBy))
}

/// The live node holding `queue_id`: the one that adopted it last, else its creator.
fn holder(
    conn: &mut DbConn,
    queue_id: &str,
    creator: Option<&str>,
    alive_seconds: i64,
) -> Result<Option<Node>, StorageError> {
    let node = match adopter(conn, queue_id)? {
        Some(adopter) => adopter,
        None => match creator {
            Some(creator) => creator.to_owned(),
            None => return Ok(None),
        },
    };
    live_node(conn, &node, alive_seconds)
}

/// The oldest log position a handed-over queue still needs (None when there is none).
pub fn oldest_handoff(conn: &mut DbConn) -> Result<Option<i64>, StorageError> {
    let conn = pg(conn)?;
    #[derive(QueryableByName)]
    struct Oldest {
        #[diesel(sql_type = diesel::sql_types::Nullable<BigInt>)]
        position: Option<i64>,
    }
    Ok(
        diesel::sql_query("SELECT MIN(position) AS position FROM queue_handoffs")
            .get_result::<Oldest>(conn)?
            .position,
    )
}

/// Forgets handed-over queues nobody adopted within `seconds` (their clients re-register), and
/// the adoptions of nodes that are gone; returns how many queues went.
pub fn expire_handoffs(conn: &mut DbConn, seconds: i64) -> Result<usize, StorageError> {
    let conn = pg(conn)?;
    diesel::sql_query(
        "DELETE FROM queue_adoptions
         WHERE node_id NOT IN (SELECT node_id FROM cluster_nodes)",
    )
    .execute(conn)?;
    Ok(diesel::sql_query(format!(
        "DELETE FROM queue_handoffs WHERE handed_at < {NOW} - $1"
    ))
    .bind::<BigInt, _>(seconds)
    .execute(conn)?)
}

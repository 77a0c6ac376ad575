//! The engine's one error type; `api` maps it to error envelopes.

/// Why a queue operation failed.
#[derive(Debug, thiserror::Error)]
pub enum EventsError {
    /// The queue does not exist (never did, was collected, deleted or dropped for overflowing)
    /// or belongs to someone else — one error for both, so queue IDs leak nothing. The client
    /// must register again (`BAD_EVENT_QUEUE_ID`).
    #[error("Bad event queue ID: {0}")]
    BadQueueId(String),
    /// `last_event_id` is older than an event the client already acknowledged: the client lost
    /// track of its queue (`BAD_REQUEST`, as in the reference server).
    #[error("An event newer than {0} has already been pruned!")]
    AlreadyPruned(i64),
    /// `last_event_id` names an event this queue never handed out (`BAD_REQUEST`, as in the
    /// reference server).
    #[error("Event {0} was not in this queue")]
    NotInQueue(i64),
    /// Dumping or restoring the queues failed at the file system.
    #[error("event queue file: {0}")]
    Io(#[from] std::io::Error),
    /// A dump could not be read back; the queues it held are lost and clients re-register.
    #[error("corrupt event queue file: {0}")]
    Corrupt(String),
}

//! Event queues: the state a client polls with `GET /events`. Filled in by the real-time issue.

/// How long a queue lives without being polled, by default (the reference server's 10 minutes).
pub const DEFAULT_QUEUE_TIMEOUT_SECONDS: u64 = 600;

/// How often a blocking poll returns a heartbeat when nothing happens, by default.
pub const DEFAULT_HEARTBEAT_SECONDS: u64 = 60;

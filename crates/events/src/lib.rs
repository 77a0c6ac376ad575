//! Parley's event-queue engine (arrives with the real-time issue): per-client queues held in
//! memory, long-polling that holds no thread or database connection, heartbeats, garbage
//! collection of idle queues, and persistence of queues across a restart.
//!
//! Actions hand it the events they caused after their transaction commits; it computes nothing
//! about permissions itself, since the audience arrives with each event.

pub mod queue;

//! Parley's event-queue engine: per-client queues held in memory, long-polling that holds no
//! thread or database connection, heartbeats, garbage collection of idle queues, and
//! persistence of queues across a restart.
//!
//! Actions hand it the events they caused after their transaction commits; it computes nothing
//! about permissions itself, since the audience arrives with each event. Each event's body is
//! computed once and shared by every queue; per-client differences (capabilities, Markdown or
//! HTML, avatars, local echo, the empty topic's name) are resolved at delivery or at read time.

pub mod bus;
mod delivery;
pub mod engine;
pub mod error;
pub mod event;
mod filter;
mod merge;
pub mod options;
pub mod persist;
mod poll;
pub mod queue;
mod render;
mod resolve;
mod state;

pub use bus::{Bus, InProcessBus};
pub use engine::{Engine, EngineConfig};
pub use error::EventsError;
pub use event::{Audience, Body, Capability, Event, MessagePayload, MessageRecipient};
pub use options::{ClientCapabilities, NarrowFilter, QueueOptions};
pub use persist::HandedOff;

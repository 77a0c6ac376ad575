//! How events reach the engine.

use crate::engine::Engine;
use crate::event::Event;

/// How events reach queues. In-process now; shaped so several server processes sharing one
/// PostgreSQL database can later each run a bus that delivers every event to its local engine
/// (a queue belongs to one process; events reach every process).
///
/// Actions publish after their transaction commits, so a client never sees an event for a
/// change that was rolled back.
pub trait Bus: Send + Sync + 'static {
    /// Delivers `events` in order to every engine behind the bus.
    fn publish(&self, events: &[Event]);
}

/// The single-process bus: publishing is delivering to the one local engine.
#[derive(Clone)]
pub struct InProcessBus {
    engine: Engine,
}

impl InProcessBus {
    /// A bus delivering to `engine`.
    pub fn new(engine: Engine) -> Self {
        Self { engine }
    }
}

impl Bus for InProcessBus {
    fn publish(&self, events: &[Event]) {
        for event in events {
            self.engine.deliver(event);
        }
    }
}

//! Where actions hand over the events they caused. Events are published only after their
//! transaction commits, and never while a register is reading its snapshot: together these make
//! a snapshot plus the events that follow it exactly the current state.

use parley_events::{Bus, Engine, EngineConfig, Event, InProcessBus};
use std::sync::Arc;
use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The event engine of this process and the bus events travel on.
pub struct EventHub {
    engine: Engine,
    bus: Arc<dyn Bus>,
    /// Writers (actions) share it from before their commit until their events are delivered;
    /// a register holds it alone while it creates its queue and reads its snapshot.
    gate: RwLock<()>,
}

impl EventHub {
    /// A hub delivering through `bus` into `engine`.
    pub fn new(engine: Engine, bus: Arc<dyn Bus>) -> Self {
        EventHub {
            engine,
            bus,
            gate: RwLock::new(()),
        }
    }

    /// A single-process hub with an engine of this configuration.
    pub fn in_process(config: EngineConfig) -> Self {
        let engine = Engine::new(config);
        let bus = Arc::new(InProcessBus::new(engine.clone()));
        EventHub::new(engine, bus)
    }

    /// The queues of this process.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Held by a register while it creates its queue and reads its snapshot.
    pub(crate) async fn exclusive(&self) -> RwLockWriteGuard<'_, ()> {
        self.gate.write().await
    }

    /// Held by an action from before its commit until its events are published.
    pub(crate) async fn shared(&self) -> RwLockReadGuard<'_, ()> {
        self.gate.read().await
    }

    /// Hands events to the bus.
    pub(crate) fn publish(&self, events: Vec<Event>) {
        if !events.is_empty() {
            self.bus.publish(events);
        }
    }
}

/// The events a transaction caused, published once it commits.
#[derive(Default)]
pub struct Events(pub(crate) Vec<Event>);

impl Events {
    /// Adds an event.
    pub fn push(&mut self, event: Event) {
        self.0.push(event);
    }
}

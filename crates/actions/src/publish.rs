//! Where actions hand over the events they caused. Two ways, behind one interface:
//!
//! - **In process** (SQLite, one server process): events are published after their transaction
//!   commits, and never while a register is reading its snapshot (the gate); together these
//!   make a snapshot plus the events that follow it exactly the current state.
//! - **Event log** (PostgreSQL, any number of server processes): every transaction appends its
//!   events to the log in the database (`storage::event_log`), in commit order; every process
//!   delivers the log to its own queues in that order (`crate::event_log`), and a register
//!   reads its snapshot at a known log position, its queue taking the entries after it. No
//!   process lock is involved.

use crate::event_log::{LogFollower, NodeIdentity};
use crate::publish_in_order::{Delivered, InOrder};
use parley_events::{Bus, Engine, EngineConfig, Event, InProcessBus};
use parley_storage::{LogEntry, OnCommit, StorageError};
use std::sync::Arc;
use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The event engine of this process and the bus events travel on.
pub struct EventHub {
    engine: Engine,
    bus: Arc<dyn Bus>,
    /// Writers (actions) share it from before their commit until their events are delivered;
    /// a register holds it alone while it creates its queue and reads its snapshot. Unused
    /// (never held alone) with an event log.
    gate: RwLock<()>,
    /// The event log this process follows, when events go through the database.
    log: Option<LogFollower>,
    /// Without a log: the thread delivering committed transactions' events in commit order.
    in_order: Option<InOrder>,
    /// The organization cache, invalidated by the events delivered here.
    realm_cache: Arc<crate::realm_cache::RealmCache>,
}

impl EventHub {
    /// A hub delivering through `bus` into `engine`.
    pub fn new(engine: Engine, bus: Arc<dyn Bus>) -> Self {
        EventHub {
            engine,
            bus,
            gate: RwLock::new(()),
            log: None,
            in_order: None,
            realm_cache: Arc::default(),
        }
    }

    /// A single-process hub with an engine of this configuration, delivering committed
    /// transactions' events in commit order on a thread of its own (`publish_in_order`).
    pub fn in_process(config: EngineConfig) -> Self {
        let engine = Engine::new(config);
        let bus: Arc<dyn Bus> = Arc::new(InProcessBus::new(engine.clone()));
        let mut hub = EventHub::new(engine, Arc::clone(&bus));
        match InOrder::start(bus, Arc::clone(&hub.realm_cache)) {
            Ok(in_order) => hub.in_order = Some(in_order),
            // Then each commit delivers its events itself, in the turn: still in order.
            Err(e) => tracing::warn!(error = %e, "cannot start the publishing thread"),
        }
        hub
    }

    /// A hub whose events go through the event log of `db` (PostgreSQL), for a node named by
    /// `node`. Nothing is delivered until [`EventHub::follow`] starts following the log.
    pub fn logged(config: EngineConfig, db: parley_storage::Db, node: NodeIdentity) -> Self {
        let engine = Engine::new(config);
        let bus = Arc::new(InProcessBus::new(engine.clone()));
        let realm_cache = Arc::<crate::realm_cache::RealmCache>::default();
        let log = LogFollower::new(engine.clone(), db, node).with_realm_cache(realm_cache.clone());
        EventHub {
            log: Some(log),
            realm_cache,
            ..EventHub::new(engine, bus)
        }
    }

    /// The hub a server on `db` uses: the event log on PostgreSQL (any number of processes
    /// may share the database), in process on SQLite (one process).
    pub fn for_database(config: EngineConfig, db: &parley_storage::Db, node: NodeIdentity) -> Self {
        match db.url() {
            parley_storage::DatabaseUrl::Postgres(_) => EventHub::logged(config, db.clone(), node),
            parley_storage::DatabaseUrl::Sqlite(_) => EventHub::in_process(config),
        }
    }

    /// Starts delivering the log to this process's queues (from the position restored queues
    /// were saved at, else from the log's head) and listening for new entries. Does nothing
    /// without a log.
    pub async fn follow(&self) -> crate::error::ActionResult<()> {
        match &self.log {
            Some(log) => log.start().await,
            None => Ok(()),
        }
    }

    /// The event log this process follows, if any.
    pub fn log(&self) -> Option<&LogFollower> {
        self.log.as_ref()
    }

    /// The organization cache of this process (`crate::realm_cache`).
    pub fn realm_cache(&self) -> &Arc<crate::realm_cache::RealmCache> {
        &self.realm_cache
    }

    /// The queues of this process.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Creates a queue receiving every event from now on (no snapshot); returns its ID.
    pub(crate) fn register(&self, options: parley_events::QueueOptions) -> String {
        match &self.log {
            Some(log) => self.engine.register_named(options, log.new_queue_id()).0,
            None => self.engine.register(options).0,
        }
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
    pub(crate) fn publish(&self, events: &[Event]) {
        if !events.is_empty() {
            self.realm_cache.note_delivered(events);
            self.bus.publish(events);
        }
    }

    /// What a transaction that caused `events` hands to its commit: with a log, its entry,
    /// appended last in the transaction (the log is in commit order, and every process
    /// delivers it in that order); without one, their hand-over for publication, run right
    /// after the commit and before the process's next write commits (SQLite's writes take
    /// turns), and what says when they are delivered ([`EventHub::committed`] waits for it).
    /// Clients expect events in commit order: two message events published by their actions'
    /// tasks after the commit could come out the other way round, a message with a lower ID
    /// after one with a higher (`e2e/events_order.rs`, about one run in eight).
    pub(crate) fn on_commit(
        self: &Arc<Self>,
        events: &Arc<Vec<Event>>,
    ) -> Result<(Option<OnCommit>, Option<Delivered>), StorageError> {
        if self.log.is_some() {
            let entry = log_entry(self.log_origin().as_deref(), events)?;
            return Ok((entry.map(OnCommit::Append), None));
        }
        if events.is_empty() {
            return Ok((None, None));
        }
        if let Some(in_order) = &self.in_order {
            let (hand_over, delivered) = in_order.hand_over(events);
            return Ok((Some(OnCommit::Run(hand_over)), Some(delivered)));
        }
        let (hub, events) = (Arc::clone(self), Arc::clone(events));
        Ok((
            Some(OnCommit::Run(Box::new(move || hub.publish(&events)))),
            None,
        ))
    }

    /// With a log, the node transactions append their events as (this process); None when
    /// events are published in process.
    pub(crate) fn log_origin(&self) -> Option<String> {
        self.log.as_ref().map(|log| log.node().node_id.clone())
    }

    /// Right after the commit, with a log: hands this process's follower the entry the
    /// transaction appended at `position`, which it then delivers without reading it back.
    pub(crate) fn hand_over(&self, position: Option<i64>, events: &Arc<Vec<Event>>) {
        if let (Some(log), Some(position)) = (&self.log, position) {
            log.hand_over(position, Arc::clone(events));
        }
    }

    /// After the commit (and [`EventHub::hand_over`]): waits until this process has delivered
    /// the transaction's events, so that a client reading its own queue right after sees its
    /// change, and a register waiting at the gate does not find the change both in its
    /// snapshot and in its queue: with a log, the entry it appended at `position`; without
    /// one, the events its commit handed over ([`EventHub::on_commit`]).
    pub(crate) async fn committed(&self, position: Option<i64>, delivered: Option<Delivered>) {
        if let (Some(log), Some(position)) = (&self.log, position) {
            log.wait_delivered(position).await;
        }
        if let Some(delivered) = delivered {
            delivered.wait().await;
        }
    }

    /// Publishes events that change no stored state (typing): in their own small transaction
    /// with a log, under the gate without one. A failure is logged; such events are transient.
    pub(crate) async fn publish_transient(&self, db: &parley_storage::Db, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        if self.log.is_none() {
            let _turn = self.shared().await;
            self.publish(&events);
            return;
        }
        let origin = self.log_origin();
        let appended = db
            .logged_transaction(move |_| {
                let entry = log_entry(origin.as_deref(), &events)?;
                Ok::<_, StorageError>((Arc::new(events), entry.map(OnCommit::Append)))
            })
            .await;
        match appended {
            Ok((events, position)) => {
                self.hand_over(position, &events);
                self.committed(position, None).await
            }
            Err(e) => tracing::warn!(error = %e, "cannot append transient events to the log"),
        }
    }
}

/// The log entry of `events` as node `origin` (None: there is no log), appended when the
/// transaction commits (`Db::logged_transaction`); nothing (None) without a log or without
/// events.
pub(crate) fn log_entry(
    origin: Option<&str>,
    events: &[Event],
) -> Result<Option<LogEntry>, StorageError> {
    let Some(origin) = origin.filter(|_| !events.is_empty()) else {
        return Ok(None);
    };
    let text = serde_json::to_string(events)
        .map_err(|e| StorageError::Task(format!("cannot serialize events: {e}")))?;
    Ok(Some(LogEntry {
        events: text,
        origin: origin.to_owned(),
        now: crate::time::now(),
    }))
}

/// The events a transaction caused, published once it commits.
#[derive(Default)]
pub struct Events(pub(crate) Vec<Event>);

impl Events {
    /// Adds an event.
    pub fn push(&mut self, event: Event) {
        crate::realm_cache::note_recorded(&event);
        self.0.push(event);
    }
}

//! The engine: every queue of this process, registration, delivery, deletion and garbage
//! collection. Reading (`get_events`) is in `poll`, persistence in `persist`.

use crate::delivery;
use crate::event::Event;
use crate::options::QueueOptions;
use crate::queue::{Queue, DEFAULT_HEARTBEAT_SECONDS, DEFAULT_QUEUE_TIMEOUT_SECONDS};
use crate::state::State;

use parley_domain::UserId;
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The engine's tunables; the defaults are the reference server's.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// A queue nobody polled for this long is collected (default 600 s); its client must
    /// register again.
    pub queue_timeout: Duration,
    /// How long a blocking poll waits before answering with a heartbeat (default 60 s), which
    /// keeps proxies from cutting idle connections.
    pub heartbeat: Duration,
    /// A queue holding more unacknowledged events than this is dropped (default 10,000).
    ///
    /// The reference server has no cap and relies on collection after `queue_timeout` alone,
    /// but a queue whose client stopped acknowledging keeps every event alive until then. Past
    /// the cap the client is far behind anyway; dropping the queue makes it re-register
    /// (`BAD_EVENT_QUEUE_ID`) and reload a fresh snapshot, which is cheaper and always correct,
    /// whereas discarding some events would silently desynchronize it.
    pub max_queue_events: usize,
    /// How often the task from [`Engine::spawn_gc`] collects idle queues (default 60 s, as the
    /// reference server).
    pub gc_interval: Duration,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            queue_timeout: Duration::from_secs(DEFAULT_QUEUE_TIMEOUT_SECONDS),
            heartbeat: Duration::from_secs(DEFAULT_HEARTBEAT_SECONDS),
            max_queue_events: 10_000,
            gc_interval: Duration::from_secs(60),
        }
    }
}

pub(crate) struct Inner {
    pub config: EngineConfig,
    pub state: Mutex<State>,
    /// The heartbeat body, shared by every queue that gets one.
    pub heartbeat: Arc<Map<String, Value>>,
}

/// The in-memory event-queue engine of one server process: cheap to clone (an `Arc`), shared
/// by the HTTP handlers and the bus.
///
/// Queues live in one map behind one mutex held only for short, non-async sections. Delivery
/// pushes shared `Arc`s (no per-queue copy or serialization); rendering to JSON happens when a
/// client reads. A waiting long-poll holds no thread: it awaits its queue's `Notify`.
///
/// Measured with `examples/idle_queues.rs` (release build, this project's 2-core machine):
/// 50,000 idle queues cost about 630 bytes each (31 MB in all), and a message to 1,000
/// recipients with two queues each is delivered in about 1.5 ms.
#[derive(Clone)]
pub struct Engine(pub(crate) Arc<Inner>);

impl Engine {
    /// An engine with no queues.
    pub fn new(config: EngineConfig) -> Self {
        let mut heartbeat = Map::new();
        heartbeat.insert("type".to_owned(), Value::from("heartbeat"));
        Self(Arc::new(Inner {
            config,
            state: Mutex::new(State::default()),
            heartbeat: Arc::new(heartbeat),
        }))
    }

    /// The configuration the engine runs with.
    pub fn config(&self) -> &EngineConfig {
        &self.0.config
    }

    /// The state, even if a panic poisoned the mutex: every section leaves the state
    /// consistent between statements that matter, and refusing all later requests would be
    /// worse.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.0
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Creates a queue; returns (queue_id, last_event_id = -1).
    pub fn register(&self, options: QueueOptions) -> (String, i64) {
        let id = uuid::Uuid::new_v4().to_string();
        self.register_named(options, id)
    }

    /// Creates a queue with this ID (unique: a node's prefix and a UUID); it receives every
    /// event delivered from now on. Returns (queue_id, last_event_id = -1).
    pub fn register_named(&self, options: QueueOptions, id: String) -> (String, i64) {
        let mut queue = Queue::new(Arc::from(id.as_str()), Arc::new(options), Instant::now());
        let mut state = self.lock();
        queue.after = state.position;
        state.insert(queue);
        (id, -1)
    }

    /// Starts shutting down: every waiting poll answers now with what its queue holds, and
    /// later polls do not wait, so that in-flight requests finish before the queues are dumped.
    pub fn close(&self) {
        let mut state = self.lock();
        state.closing = true;
        for queue in state.queues.values_mut() {
            if queue.waiters > 0 {
                queue.generation += 1;
                queue.notify.notify_waiters();
            }
        }
    }

    /// Delivers one event to every matching queue (called by the bus).
    pub fn deliver(&self, event: &Event) {
        let max = self.0.config.max_queue_events;
        delivery::deliver(&mut self.lock(), event, max, None);
    }

    /// Delivers the events of the log entry at `seq`, in order, to every matching queue whose
    /// snapshot does not include them, and records `seq` as delivered. An entry at or below the
    /// delivered position is ignored, so an entry read twice is applied once.
    pub fn deliver_logged(&self, seq: i64, events: &[Event]) {
        let max = self.0.config.max_queue_events;
        let mut state = self.lock();
        if seq <= state.position {
            return;
        }
        for event in events {
            delivery::deliver(&mut state, event, max, Some(seq));
        }
        state.position = seq;
    }

    /// The newest log entry delivered to the queues.
    pub fn position(&self) -> i64 {
        self.lock().position
    }

    /// Sets the delivered position without delivering anything: where a node starts following
    /// the log (its head at start, or the position its restored queues were saved at).
    pub fn set_position(&self, seq: i64) {
        self.lock().position = seq;
    }

    /// Forgets every queue (their clients re-register): for a node that can no longer deliver
    /// every event to them, such as one that fell behind entries already pruned from the log.
    pub fn drop_all_queues(&self) -> usize {
        let mut state = self.lock();
        let ids: Vec<Arc<str>> = state.queues.keys().cloned().collect();
        for id in &ids {
            state.remove(id);
        }
        ids.len()
    }

    /// Creates a queue whose snapshot was read at log position `after`: it receives exactly
    /// the entries above `after`. When the engine has already delivered past `after`, the
    /// entries in between must be in `backlog` (entries above `after`, in order), and are
    /// delivered to the new queue alone; otherwise this returns `Err(position)` and the caller
    /// reads the log up to that position and tries again.
    pub fn register_after(
        &self,
        options: QueueOptions,
        queue_id: String,
        after: i64,
        backlog: &[(i64, Vec<Event>)],
    ) -> Result<String, i64> {
        let queue = Queue::new(
            Arc::from(queue_id.as_str()),
            Arc::new(options),
            Instant::now(),
        );
        self.insert_caught_up(queue, after, backlog)?;
        Ok(queue_id)
    }

    /// Inserts `queue`, whose events reach log position `after`, delivering to it alone the
    /// entries of `backlog` up to the engine's position (see [`Engine::register_after`]).
    pub(crate) fn insert_caught_up(
        &self,
        mut queue: Queue,
        after: i64,
        backlog: &[(i64, Vec<Event>)],
    ) -> Result<(), i64> {
        let max = self.0.config.max_queue_events;
        queue.after = queue.after.max(after);
        let mut state = self.lock();
        let position = state.position;
        if position > after {
            if backlog.last().is_none_or(|(seq, _)| *seq < position) {
                return Err(position);
            }
            // The same delivery code, on a state holding the new queue alone.
            let id = Arc::clone(&queue.id);
            let mut alone = State::default();
            alone.insert(queue);
            for (seq, events) in backlog.iter().filter(|(seq, _)| *seq <= position) {
                for event in events {
                    delivery::deliver(&mut alone, event, max, Some(*seq));
                }
            }
            let Some(mut caught_up) = alone.remove(&id) else {
                // Overflowed while catching up: its client re-registers.
                return Ok(());
            };
            caught_up.after = position;
            queue = caught_up;
        }
        if !state.queues.contains_key(&*queue.id) {
            state.insert(queue);
        }
        Ok(())
    }

    /// DELETE /events: removes the queue; a poll waiting on it returns `BadQueueId`.
    pub fn delete_queue(&self, user: UserId, queue_id: &str) -> Result<(), crate::EventsError> {
        let mut state = self.lock();
        if state.owned_mut(user, queue_id).is_none() {
            return Err(crate::EventsError::BadQueueId(queue_id.to_owned()));
        }
        state.remove(queue_id);
        Ok(())
    }

    /// Removes every queue of a user (deactivation, API key change), so that nothing more
    /// reaches a client that lost access.
    pub fn delete_user_queues(&self, user: UserId) {
        let mut state = self.lock();
        let ids = state.by_user.get(&user).cloned().unwrap_or_default();
        for id in ids {
            state.remove(&id);
        }
    }

    /// Removes queues unused for longer than queue_timeout (a queue with a waiting long-poll
    /// counts as in use); returns how many.
    pub fn collect_garbage(&self) -> usize {
        let timeout = self.0.config.queue_timeout;
        let now = Instant::now();
        let mut state = self.lock();
        let expired: Vec<Arc<str>> = state
            .queues
            .values()
            .filter(|q| q.waiters == 0 && now.saturating_duration_since(q.last_used) >= timeout)
            .map(|q| Arc::clone(&q.id))
            .collect();
        for id in &expired {
            state.remove(id);
        }
        if !expired.is_empty() {
            tracing::info!(
                removed = expired.len(),
                remaining = state.queues.len(),
                "collected idle event queues"
            );
        }
        expired.len()
    }

    /// Spawns the periodic GC task on the current tokio runtime; returns its JoinHandle.
    ///
    /// The task holds only a weak reference: it ends once every `Engine` clone is dropped.
    pub fn spawn_gc(&self) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(&self.0);
        let period = self.0.config.gc_interval.max(Duration::from_millis(1));
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(period);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                let Some(inner) = weak.upgrade() else {
                    break;
                };
                Engine(inner).collect_garbage();
            }
        })
    }

    /// Whether a queue of this ID exists (whoever owns it).
    pub fn has_queue(&self, queue_id: &str) -> bool {
        self.lock().queues.contains_key(queue_id)
    }

    /// Number of queues (for benchmarks and the docs).
    pub fn queue_count(&self) -> usize {
        self.lock().queues.len()
    }

    /// Number of waiting long-polls (for benchmarks and the docs).
    pub fn waiting_count(&self) -> usize {
        self.lock().waiting
    }

    /// Whether a queue exists for this user (used by send for local echo validation).
    pub fn queue_belongs_to(&self, user: UserId, queue_id: &str) -> bool {
        self.lock().owned_mut(user, queue_id).is_some()
    }
}

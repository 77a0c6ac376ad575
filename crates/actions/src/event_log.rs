//! Following the event log (PostgreSQL, several server processes): each process delivers every
//! entry of the log to its own queues, in the log's order, exactly once.
//!
//! - A **follower task** hands the entries after the position this process has delivered to
//!   the engine, in order. The entries this process appended it has in memory once they
//!   committed ([`LogFollower::hand_over`]), so it delivers them without reading
//!   them back: a send's entry names each recipient, and reading it back cost two statements,
//!   the entry's transfer and its decoding per write. It reads the log when another process
//!   appended (PostgreSQL's `NOTIFY`, whose payload names the appending process, heard by a
//!   listener thread), when an entry it holds follows one it does not, and every
//!   [`FALLBACK_POLL`] in case a notification was missed; since it reads the log itself rather
//!   than trusting notifications, a process that missed notifications or lost its connection
//!   catches up, and the engine ignores an entry it has delivered already.
//! - A **heartbeat task** records in `cluster_nodes` that this process is alive, where it is
//!   reached and how far it has delivered; one process at a time (an advisory lock) forgets
//!   processes that went silent and prunes entries every live process has delivered.
//! - **Registering** a queue: the snapshot is read at a log position (`at_snapshot`); the queue
//!   receives exactly the entries after it, the ones this process delivered before the queue
//!   existed coming from the log ([`LogFollower::register_after`]).

use crate::error::{ActionError, ActionResult};
use parley_events::{Engine, Event, QueueOptions};
use parley_storage::cluster::QueueWhereabouts;
use parley_storage::{cluster, event_log, DatabaseUrl, Db, StorageError};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{watch, Notify};

/// How often the follower reads the log even when nothing woke it.
pub const FALLBACK_POLL: Duration = Duration::from_secs(1);

/// The longest the listener sleeps on its connection before it looks whether to stop.
const LISTEN_WAIT: Duration = Duration::from_millis(500);

/// How often a process says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(2);

/// A process silent this long is gone: requests for its queues are answered
/// `BAD_EVENT_QUEUE_ID` and the log is no longer kept for it.
pub const NODE_TIMEOUT_SECONDS: i64 = 15;

/// Entries younger than this are kept even when every process has delivered them, so that a
/// register whose snapshot is a little older than its process's position finds them.
const KEEP_SECONDS: i64 = 120;

/// Queues handed over and not adopted within this long are forgotten (the reference server's
/// queue lifetime: their clients have given up on them).
const HANDOFF_KEEP_SECONDS: i64 = 600;

/// Rate-limit buckets untouched this long are deleted: every limit's window is shorter (the
/// longest, failed logins, is 30 minutes), so such a bucket is full, the same as no bucket.
const IDLE_BUCKET_MS: i64 = 60 * 60 * 1000;

/// Idle buckets are looked for every this many heartbeats (about a minute).
const BUCKET_PRUNE_EVERY: u32 = 30;

/// Entries read per query.
const BATCH: i64 = 500;

/// How long a write waits for its own entry to be delivered locally before giving up waiting
/// (the entry is committed either way and will be delivered).
const DELIVERY_WAIT: Duration = Duration::from_secs(10);

/// How long a request for a queue of a stopping process waits for the queue to be handed over.
const HANDOFF_WAIT: Duration = Duration::from_secs(15);

/// Where a queue that is not in this process lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueHome {
    /// Here (perhaps just adopted), or nowhere: this process answers.
    Here,
    /// In the live process reached at this base URL.
    There(String),
}

/// Who this process is among the processes sharing the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeIdentity {
    /// Unique among live processes; the prefix of the queue IDs it hands out (no `:`).
    pub node_id: String,
    /// The base URL other processes forward requests for its queues to (e.g.
    /// `http://10.0.0.2:9991`); empty when it takes no forwarded requests.
    pub address: String,
}

impl NodeIdentity {
    /// A fresh random name reached at `address`.
    pub fn random(address: impl Into<String>) -> Self {
        let id = uuid::Uuid::new_v4().simple().to_string();
        NodeIdentity {
            node_id: id[..12].to_owned(),
            address: address.into(),
        }
    }
}

struct Inner {
    engine: Engine,
    db: Db,
    node: NodeIdentity,
    wake: Arc<Notify>,
    /// Set when another process appended (or the listener reconnected): the follower reads the
    /// log on its next round.
    others_appended: Arc<AtomicBool>,
    /// This process's committed entries not yet delivered, by position.
    own: Arc<OwnEntries>,
    /// How many entries the follower read from the log (the others came from memory).
    read_from_log: Arc<AtomicU64>,
    delivered: Arc<watch::Sender<i64>>,
    stop: Arc<AtomicBool>,
    started: AtomicBool,
    /// Forwards requests for other processes' queues.
    client: reqwest::Client,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Invalidated by the entries delivered (another process's changes included).
    realm_cache: Arc<crate::realm_cache::RealmCache>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for task in self
            .tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            task.abort();
        }
    }
}

/// This process's reader of the event log; see the module documentation.
pub struct LogFollower {
    inner: Inner,
}

impl LogFollower {
    /// A follower delivering the log of `db` into `engine`; idle until [`LogFollower::start`].
    pub fn new(engine: Engine, db: Db, node: NodeIdentity) -> Self {
        let (delivered, _) = watch::channel(0);
        LogFollower {
            inner: Inner {
                engine,
                db,
                node,
                wake: Arc::new(Notify::new()),
                others_appended: Arc::new(AtomicBool::new(true)),
                own: Arc::default(),
                read_from_log: Arc::default(),
                delivered: Arc::new(delivered),
                stop: Arc::new(AtomicBool::new(false)),
                started: AtomicBool::new(false),
                client: reqwest::Client::new(),
                tasks: Mutex::new(Vec::new()),
                realm_cache: Arc::default(),
            },
        }
    }

    /// The same follower invalidating `cache` with the entries it delivers.
    pub fn with_realm_cache(mut self, cache: Arc<crate::realm_cache::RealmCache>) -> Self {
        self.inner.realm_cache = cache;
        self
    }

    /// Who this process is.
    pub fn node(&self) -> &NodeIdentity {
        &self.inner.node
    }

    /// The database the log is in.
    pub fn db(&self) -> &Db {
        &self.inner.db
    }

    /// Starts following: from the position restored queues were saved at (entries since are
    /// delivered to them), else from the log's head.
    pub async fn start(&self) -> ActionResult<()> {
        let engine = self.inner.engine.clone();
        let restored = engine.position();
        let (head, oldest) = self
            .inner
            .db
            .run(|conn| Ok::<_, StorageError>((event_log::head(conn)?, event_log::oldest(conn)?)))
            .await?;
        if restored == 0 || restored > head {
            engine.set_position(head);
        } else if oldest.map_or(head > restored, |oldest| oldest > restored + 1) {
            let dropped = engine.drop_all_queues();
            tracing::warn!(
                dropped,
                restored,
                head,
                "the event log no longer holds what the saved queues missed; their clients re-register"
            );
            engine.set_position(head);
        }
        self.inner.delivered.send_replace(engine.position());
        self.inner.started.store(true, Ordering::Release);
        let follower = tokio::spawn(follow(Follower {
            engine,
            realm_cache: Arc::clone(&self.inner.realm_cache),
            db: self.inner.db.clone(),
            wake: Arc::clone(&self.inner.wake),
            others_appended: Arc::clone(&self.inner.others_appended),
            own: Arc::clone(&self.inner.own),
            read_from_log: Arc::clone(&self.inner.read_from_log),
            delivered: Arc::clone(&self.inner.delivered),
        }));
        let heartbeat = tokio::spawn(heartbeat(
            self.inner.engine.clone(),
            self.inner.db.clone(),
            self.inner.node.clone(),
        ));
        let mut tasks = self.inner.tasks.lock().unwrap_or_else(|p| p.into_inner());
        tasks.push(follower);
        tasks.push(heartbeat);
        drop(tasks);
        if let DatabaseUrl::Postgres(url) = self.inner.db.url() {
            let url = url.clone();
            let wake = Arc::clone(&self.inner.wake);
            let others = Arc::clone(&self.inner.others_appended);
            let stop = Arc::clone(&self.inner.stop);
            let me = self.inner.node.node_id.clone();
            std::thread::Builder::new()
                .name("parley-listen".into())
                .spawn(move || listen(&url, &me, &wake, &others, &stop))
                .map_err(|e| ActionError::Internal(format!("cannot start the listener: {e}")))?;
        }
        Ok(())
    }

    /// Hands the follower `events`, the entry this process appended at `position` and has just
    /// committed, to deliver without reading it back. Before [`LogFollower::start`] (while the
    /// server starts) there are no queues to deliver to.
    pub fn hand_over(&self, position: i64, events: Arc<Vec<Event>>) {
        if !self.inner.started.load(Ordering::Acquire) {
            return;
        }
        self.inner.own.insert(position, events);
        self.inner.wake.notify_one();
    }

    /// How many entries this process's follower read from the log: other processes' entries,
    /// and its own only when it did not have them in memory.
    pub fn entries_read_from_log(&self) -> u64 {
        self.inner.read_from_log.load(Ordering::Relaxed)
    }

    /// Returns once this process has delivered the entry at `position` (or after
    /// [`DELIVERY_WAIT`], logged: the entry is committed and will be delivered).
    pub async fn wait_delivered(&self, position: i64) {
        if !self.inner.started.load(Ordering::Acquire) {
            return;
        }
        let mut delivered = self.inner.delivered.subscribe();
        let waited = tokio::time::timeout(DELIVERY_WAIT, delivered.wait_for(|p| *p >= position));
        if waited.await.is_err() {
            tracing::warn!(position, "the event log entry was not delivered in time");
        }
    }

    /// A new queue ID of this process.
    pub fn new_queue_id(&self) -> String {
        format!("{}:{}", self.inner.node.node_id, uuid::Uuid::new_v4())
    }

    /// Creates a queue whose snapshot was read at log position `after`: it receives exactly
    /// the entries after it. Entries this process delivered before the queue existed are read
    /// back from the log for it alone.
    pub async fn register_after(&self, options: QueueOptions, after: i64) -> ActionResult<String> {
        let id = self.new_queue_id();
        let mut backlog: Vec<(i64, Vec<Event>)> = Vec::new();
        for _ in 0..8 {
            let needed =
                match self
                    .inner
                    .engine
                    .register_after(options.clone(), id.clone(), after, &backlog)
                {
                    Ok(id) => return Ok(id),
                    Err(needed) => needed,
                };
            let from = backlog.last().map_or(after, |(seq, _)| *seq);
            let more = read_entries(&self.inner.db, from, needed - from).await?;
            if more.first().is_none_or(|(seq, _)| *seq != from + 1) {
                return Err(ActionError::Internal(format!(
                    "the event log no longer holds entry {} for a new queue",
                    from + 1
                )));
            }
            backlog.extend(more);
        }
        Err(ActionError::Internal(
            "a new queue could not catch up with the event log".into(),
        ))
    }
}

impl LogFollower {
    /// The HTTP client that forwards requests to other processes.
    pub fn client(&self) -> &reqwest::Client {
        &self.inner.client
    }

    /// Where the queue `queue_id`, which is not in this process, lives: a queue handed over by
    /// a stopped process is adopted here; a queue of a live process (its creator, or the one
    /// that adopted it) is there; a queue of a stopping process is waited for until it is
    /// handed over. Anything else is gone, and this process answers (`BAD_EVENT_QUEUE_ID`).
    pub async fn locate(&self, queue_id: &str) -> ActionResult<QueueHome> {
        let deadline = tokio::time::Instant::now() + HANDOFF_WAIT;
        loop {
            if self.inner.engine.has_queue(queue_id) {
                return Ok(QueueHome::Here);
            }
            let id = queue_id.to_owned();
            let me = self.inner.node.node_id.clone();
            let whereabouts = self
                .inner
                .db
                .transaction(move |conn| {
                    let creator = id.split_once(':').map(|(node, _)| node);
                    cluster::find_queue(conn, &id, creator, &me, NODE_TIMEOUT_SECONDS)
                })
                .await?;
            match whereabouts {
                QueueWhereabouts::Adopted(handed) => {
                    self.adopt(queue_id, handed).await?;
                    return Ok(QueueHome::Here);
                }
                QueueWhereabouts::HeldBy(node) if node.node_id == self.inner.node.node_id => {
                    return Ok(QueueHome::Here)
                }
                QueueWhereabouts::HeldBy(node) if node.stopping => {
                    if tokio::time::Instant::now() >= deadline {
                        return Ok(QueueHome::Here);
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                QueueWhereabouts::HeldBy(node) if !node.address.is_empty() => {
                    return Ok(QueueHome::There(node.address))
                }
                _ => return Ok(QueueHome::Here),
            }
        }
    }

    /// Puts a queue taken from the hand-overs into this process's engine, caught up from the
    /// log. One that cannot be (unreadable, or the log no longer holds what it missed) is
    /// dropped with a warning, and its client registers again.
    async fn adopt(&self, queue_id: &str, handed: cluster::HandedQueue) -> ActionResult<()> {
        let mut backlog: Vec<(i64, Vec<Event>)> = Vec::new();
        for _ in 0..8 {
            let needed = match self
                .inner
                .engine
                .adopt(&handed.data, handed.position, &backlog)
            {
                Ok(()) => {
                    tracing::info!(queue_id, "adopted a handed-over event queue");
                    return Ok(());
                }
                Err(None) => {
                    tracing::warn!(queue_id, "a handed-over event queue is unreadable");
                    return Ok(());
                }
                Err(Some(needed)) => needed,
            };
            let from = backlog.last().map_or(handed.position, |(seq, _)| *seq);
            let more = read_entries(&self.inner.db, from, needed - from).await?;
            if more.first().is_none_or(|(seq, _)| *seq != from + 1) {
                tracing::warn!(
                    queue_id,
                    "the event log no longer holds what a handed-over queue missed"
                );
                return Ok(());
            }
            backlog.extend(more);
        }
        tracing::warn!(
            queue_id,
            "a handed-over event queue could not catch up with the log"
        );
        Ok(())
    }

    /// Says that this process is stopping: requests for its queues reaching other processes
    /// wait for the hand-over rather than failing.
    pub async fn mark_stopping(&self) -> ActionResult<()> {
        let node = self.inner.node.node_id.clone();
        Ok(self
            .inner
            .db
            .run(move |conn| cluster::mark_stopping(conn, &node))
            .await?)
    }

    /// Hands every queue of this process over to the database, where the first process a
    /// request for it reaches adopts it, and leaves the cluster; returns how many queues.
    pub async fn hand_off(&self) -> ActionResult<usize> {
        for task in self
            .inner
            .tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            task.abort();
        }
        let (position, queues) = self.inner.engine.hand_off_all();
        let count = queues.len();
        let node = self.inner.node.node_id.clone();
        self.inner
            .db
            .transaction(move |conn| {
                for queue in queues {
                    cluster::hand_off(
                        conn,
                        &cluster::HandedQueue {
                            queue_id: queue.queue_id,
                            user_id: queue.user_id.0,
                            position,
                            data: queue.data,
                        },
                    )?;
                }
                cluster::remove(conn, &node)
            })
            .await?;
        Ok(count)
    }
}

/// Reads and decodes up to `limit` entries after `from` on a blocking thread.
async fn read_entries(db: &Db, from: i64, limit: i64) -> ActionResult<Vec<(i64, Vec<Event>)>> {
    let limit = limit.clamp(1, BATCH);
    Ok(db
        .run(move |conn| {
            let entries = event_log::read_after(conn, from, limit)?;
            Ok::<_, StorageError>(
                entries
                    .into_iter()
                    .map(|entry| {
                        let events = serde_json::from_str::<Vec<Event>>(&entry.events)
                            .unwrap_or_else(|e| {
                                tracing::error!(seq = entry.seq, error = %e, "unreadable event log entry; skipped");
                                Vec::new()
                            });
                        (entry.seq, events)
                    })
                    .collect(),
            )
        })
        .await?)
}

/// This process's committed entries that its follower has not delivered yet, by position.
#[derive(Default)]
struct OwnEntries(Mutex<BTreeMap<i64, Arc<Vec<Event>>>>);

impl OwnEntries {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<i64, Arc<Vec<Event>>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn insert(&self, position: i64, events: Arc<Vec<Event>>) {
        self.lock().insert(position, events);
    }

    /// The entry right after `position`, if this process appended it; forgets every entry at
    /// or before `position` (delivered from the log meanwhile).
    fn next_after(&self, position: i64) -> Option<Arc<Vec<Event>>> {
        let mut own = self.lock();
        while let Some(entry) = own.first_entry() {
            match *entry.key() {
                seq if seq <= position => drop(entry.remove()),
                seq if seq == position + 1 => return Some(entry.remove()),
                _ => return None,
            }
        }
        None
    }

    /// Whether an entry this process holds follows one it does not (another process's, which
    /// committed before it and is in the log).
    fn waits_for_others(&self, position: i64) -> bool {
        self.lock()
            .first_key_value()
            .is_some_and(|(seq, _)| *seq > position + 1)
    }
}

/// What the follower task works with.
struct Follower {
    engine: Engine,
    realm_cache: Arc<crate::realm_cache::RealmCache>,
    db: Db,
    wake: Arc<Notify>,
    others_appended: Arc<AtomicBool>,
    own: Arc<OwnEntries>,
    read_from_log: Arc<AtomicU64>,
    delivered: Arc<watch::Sender<i64>>,
}

/// The follower task: delivers every new entry, in order, whenever woken.
async fn follow(follower: Follower) {
    let mut read_log = true;
    loop {
        follower.catch_up(read_log).await;
        read_log = tokio::select! {
            _ = follower.wake.notified() => follower.others_appended.swap(false, Ordering::AcqRel),
            _ = tokio::time::sleep(FALLBACK_POLL) => true,
        };
    }
}

impl Follower {
    /// Delivers everything after the engine's position that this process holds, reading the
    /// log too when `read_log` or when what it holds cannot be delivered without the log.
    async fn catch_up(&self, mut read_log: bool) {
        loop {
            self.deliver_own();
            if !read_log && !self.own.waits_for_others(self.engine.position()) {
                return;
            }
            match self.deliver_from_log().await {
                Some(true) => {}
                Some(false) => read_log = false,
                None => return,
            }
        }
    }

    /// Delivers the entries right after the engine's position that this process holds.
    fn deliver_own(&self) {
        let mut count = 0;
        loop {
            let position = self.engine.position();
            let Some(events) = self.own.next_after(position) else {
                break;
            };
            self.deliver(position + 1, &events);
            count += 1;
        }
        if count > 0 {
            metrics::counter!("parley_event_log_entries_delivered_total").increment(count);
            self.delivered.send_replace(self.engine.position());
        }
    }

    /// Before the queues get an entry, the cache forgets what it changed: a client that sees
    /// the event and asks again finds the change applied.
    fn deliver(&self, seq: i64, events: &[Event]) {
        self.realm_cache.note_delivered(events);
        self.engine.deliver_logged(seq, events);
    }

    /// Reads and delivers one batch of the log after the engine's position: Some(true) when the
    /// batch was full (more may follow), Some(false) when it was not, None when nothing could
    /// be read.
    async fn deliver_from_log(&self) -> Option<bool> {
        let from = self.engine.position();
        let batch = match read_entries(&self.db, from, BATCH).await {
            Ok(batch) => batch,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the event log");
                tokio::time::sleep(Duration::from_millis(200)).await;
                return None;
            }
        };
        let (first, _) = batch.first()?;
        if *first != from + 1 {
            // Entries this process never delivered were pruned: it was taken for dead.
            let dropped = self.engine.drop_all_queues();
            tracing::error!(
                from,
                first,
                dropped,
                "event log entries were pruned before this process delivered them; its clients re-register"
            );
        }
        for (seq, events) in &batch {
            self.deliver(*seq, events);
        }
        self.read_from_log
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        metrics::counter!("parley_event_log_entries_delivered_total").increment(batch.len() as u64);
        self.delivered.send_replace(self.engine.position());
        Some(batch.len() as i64 >= BATCH)
    }
}

/// The listener thread: wakes the follower to read the log when PostgreSQL notifies another
/// process's append, reconnecting (and waking it, to catch up) when the connection is lost.
fn listen(url: &str, me: &str, wake: &Notify, others: &AtomicBool, stop: &AtomicBool) {
    let read_log = || {
        others.store(true, Ordering::Release);
        wake.notify_one();
    };
    while !stop.load(Ordering::Relaxed) {
        match event_log::Listener::connect(url) {
            Ok(mut listener) => {
                read_log();
                while !stop.load(Ordering::Relaxed) {
                    match listener.wait(me, LISTEN_WAIT) {
                        Ok(true) => read_log(),
                        Ok(false) => {}
                        Err(e) => {
                            tracing::warn!(error = %e, "the event log listener lost its connection");
                            break;
                        }
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot listen for event log entries"),
        }
        read_log();
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Advisory lock key of the log's maintenance (pruning, forgetting silent processes).
const MAINTENANCE_LOCK: i64 = 0x7061_726c_0001;

/// The advisory lock of the pruning of rate-limit buckets.
const BUCKET_PRUNE_LOCK: i64 = 0x7061_726c_0002;

/// The heartbeat task: says this process is alive and how far it delivered; one process at a
/// time does the log's maintenance.
async fn heartbeat(engine: Engine, db: Db, node: NodeIdentity) {
    let mut ticks = tokio::time::interval(HEARTBEAT);
    let mut beats: u32 = 0;
    loop {
        ticks.tick().await;
        beats = beats.wrapping_add(1);
        let position = engine.position();
        let node = node.clone();
        let done = db
            .transaction(move |conn| {
                cluster::heartbeat(conn, &node.node_id, &node.address, position)?;
                Ok::<_, StorageError>(())
            })
            .await;
        if let Err(e) = done {
            tracing::warn!(error = %e, "cannot record this node's heartbeat");
            continue;
        }
        match db.transaction(maintain).await {
            Ok(0) => {}
            Ok(pruned) => tracing::debug!(pruned, "pruned the event log"),
            Err(e) => tracing::warn!(error = %e, "cannot prune the event log"),
        }
        if beats.is_multiple_of(BUCKET_PRUNE_EVERY) {
            match db.transaction(prune_idle_buckets).await {
                Ok(0) => {}
                Ok(pruned) => tracing::debug!(pruned, "pruned idle rate-limit buckets"),
                Err(e) => tracing::warn!(error = %e, "cannot prune rate-limit buckets"),
            }
        }
    }
}

/// Deletes the rate-limit buckets idle for [`IDLE_BUCKET_MS`], when no other process is
/// doing it; returns how many went.
pub(crate) fn prune_idle_buckets(conn: &mut parley_storage::DbConn) -> Result<usize, StorageError> {
    if !event_log::try_job_lock(conn, BUCKET_PRUNE_LOCK)? {
        return Ok(0);
    }
    parley_storage::rate_buckets::prune_tokens(conn, IDLE_BUCKET_MS)
}

/// Forgets silent processes and prunes the entries every live one has delivered (older than
/// [`KEEP_SECONDS`]), when no other process is doing it; returns how many entries went.
pub(crate) fn maintain(conn: &mut parley_storage::DbConn) -> Result<usize, StorageError> {
    if !event_log::try_job_lock(conn, MAINTENANCE_LOCK)? {
        return Ok(0);
    }
    for gone in cluster::remove_dead(conn, NODE_TIMEOUT_SECONDS)? {
        tracing::info!(node = %gone, "a node stopped sending heartbeats; forgotten");
    }
    cluster::expire_handoffs(conn, HANDOFF_KEEP_SECONDS)?;
    let nodes = cluster::live_nodes(conn, NODE_TIMEOUT_SECONDS)?;
    let handed = cluster::oldest_handoff(conn)?;
    let Some(slowest) = nodes.iter().map(|n| n.position).chain(handed).min() else {
        return Ok(0);
    };
    event_log::prune_delivered(conn, slowest, crate::time::now() - KEEP_SECONDS)
}

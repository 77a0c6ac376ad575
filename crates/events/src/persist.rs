//! Persistence of the queues across a restart: clients keep their queues (and the events they
//! have not read) when the server is upgraded or restarted.
//!
//! The file is JSON: each shared body once, then the queues with their events referring to the
//! bodies by index, so a message delivered to a thousand queues is written and restored once
//! and stays shared in memory after a restore.

use crate::engine::Engine;
use crate::error::EventsError;
use crate::event::MessagePayload;
use crate::options::QueueOptions;
use crate::queue::{Item, Queue, QueuedEvent};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Bumped when the file's shape changes incompatibly; other versions are not restored.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Snapshot {
    format: u32,
    /// The event-log position the queues had received up to (0 without a log).
    #[serde(default)]
    position: i64,
    bodies: Vec<StoredBody>,
    queues: Vec<StoredQueue>,
}

#[derive(Serialize, Deserialize)]
enum StoredBody {
    Json(Arc<Map<String, Value>>),
    Message(Arc<MessagePayload>),
}

#[derive(Serialize, Deserialize)]
struct StoredQueue {
    queue_id: String,
    options: Arc<QueueOptions>,
    next_event_id: i64,
    newest_pruned_id: i64,
    handed_out: i64,
    #[serde(default)]
    mergeable: Vec<i64>,
    events: Vec<StoredEvent>,
    /// See `Queue::after`.
    #[serde(default = "no_position")]
    after: i64,
}

fn no_position() -> i64 {
    i64::MIN
}

#[derive(Serialize, Deserialize)]
struct StoredEvent {
    id: i64,
    /// Index into `Snapshot::bodies`.
    body: usize,
    /// The recipient's flags, for messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    flags: Option<Vec<String>>,
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name: OsString = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

impl Engine {
    /// Writes every queue (options, next id, pending events) to `path`, through a temporary
    /// file renamed into place so a crash never leaves a half-written dump; returns how many.
    pub fn dump(&self, path: &Path) -> Result<usize, EventsError> {
        let snapshot = self.snapshot();
        let count = snapshot.queues.len();
        let tmp = with_suffix(path, ".tmp");
        // The queues hold message contents: readable by the server's user only.
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options.open(&tmp)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        let mut writer = BufWriter::new(file);
        serde_json::to_writer(&mut writer, &snapshot).map_err(std::io::Error::from)?;
        writer.flush()?;
        writer
            .into_inner()
            .map_err(|e| e.into_error())?
            .sync_all()?;
        std::fs::rename(&tmp, path)?;
        tracing::info!(queues = count, path = %path.display(), "dumped event queues");
        Ok(count)
    }

    /// Loads the queues dumped at `path`, resetting their last-used time to now; returns how
    /// many. A missing file means no queues.
    ///
    /// A corrupt file is logged as a warning and loads nothing: start-up never fails or panics
    /// because of it, and the affected clients simply re-register. The file is then renamed to
    /// `<path>.last`, as the reference server does, so that a crash before the next dump cannot
    /// resurrect queues that have since missed events.
    pub fn restore(&self, path: &Path) -> Result<usize, EventsError> {
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e.into()),
        };
        let parsed = serde_json::from_reader::<_, Snapshot>(BufReader::new(file))
            .map_err(|e| EventsError::Corrupt(e.to_string()))
            .and_then(|snapshot| {
                let position = snapshot.position;
                rebuild(snapshot, Instant::now()).map(|queues| (position, queues))
            });
        if let Err(e) = std::fs::rename(path, with_suffix(path, ".last")) {
            tracing::warn!(path = %path.display(), error = %e, "could not set the event queue file aside");
        }
        let (position, queues) = match parsed {
            Ok(parsed) => parsed,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "event queues not restored");
                return Ok(0);
            }
        };
        let mut state = self.lock();
        // Entries of the log after this position are delivered to the restored queues when
        // the node follows the log again.
        if position > 0 {
            state.position = position;
        }
        let mut count = 0;
        for queue in queues {
            if !state.queues.contains_key(&*queue.id) {
                state.insert(queue);
                count += 1;
            }
        }
        tracing::info!(queues = count, path = %path.display(), "restored event queues");
        Ok(count)
    }

    /// A copy of every queue, sharing bodies (cheap `Arc` clones), taken under the lock and
    /// serialized outside it.
    fn snapshot(&self) -> Snapshot {
        let state = self.lock();
        let snapshot = snapshot_of(state.queues.values(), state.position);
        drop(state);
        snapshot
    }

    /// Removes every queue and serializes each on its own, for a stopping node to hand them to
    /// the others (see `parley_actions::event_log`): returns the log position their events
    /// reach and the queues. Waiting polls answer (their queues are gone here).
    pub fn hand_off_all(&self) -> (i64, Vec<HandedOff>) {
        let mut state = self.lock();
        let position = state.position;
        let handed = state
            .queues
            .values()
            .filter_map(|queue| {
                let snapshot = snapshot_of(std::iter::once(queue), position);
                match serde_json::to_string(&snapshot) {
                    Ok(data) => Some(HandedOff {
                        queue_id: queue.id.to_string(),
                        user_id: queue.options.user_id,
                        data,
                    }),
                    Err(e) => {
                        tracing::warn!(queue_id = %queue.id, error = %e, "queue not handed over");
                        None
                    }
                }
            })
            .collect();
        let ids: Vec<Arc<str>> = state.queues.keys().cloned().collect();
        for id in &ids {
            state.remove(id);
        }
        (position, handed)
    }

    /// Adopts a queue another node handed over (`data` from [`Engine::hand_off_all`]), whose
    /// events reach log position `position`; entries after it that this engine delivered
    /// already must be in `backlog`, as for [`Engine::register_after`] (else `Err(Some(n))`:
    /// read the log up to `n` and try again). `Err(None)`: the data is unreadable.
    pub fn adopt(
        &self,
        data: &str,
        position: i64,
        backlog: &[(i64, Vec<crate::Event>)],
    ) -> Result<(), Option<i64>> {
        let queue = serde_json::from_str::<Snapshot>(data)
            .map_err(|e| EventsError::Corrupt(e.to_string()))
            .and_then(|snapshot| rebuild(snapshot, Instant::now()))
            .map_err(|e| {
                tracing::warn!(error = %e, "a handed-over queue is unreadable");
                None
            })?
            .pop()
            .ok_or(None)?;
        self.insert_caught_up(queue, position, backlog)
            .map_err(Some)
    }
}

/// A queue serialized on its own for another node.
#[derive(Debug, Clone)]
pub struct HandedOff {
    /// Its ID, which its client keeps using.
    pub queue_id: String,
    /// Its owner.
    pub user_id: parley_domain::UserId,
    /// The queue (options, events, IDs), as JSON.
    pub data: String,
}

/// The queues given, each shared body once.
fn snapshot_of<'a>(queues: impl Iterator<Item = &'a Queue>, position: i64) -> Snapshot {
    let mut bodies = Vec::new();
    let mut index: HashMap<usize, usize> = HashMap::new();
    let mut body_index = |body: StoredBody, ptr: usize| {
        *index.entry(ptr).or_insert_with(|| {
            bodies.push(body);
            bodies.len() - 1
        })
    };
    let queues = queues
        .map(|queue| StoredQueue {
            queue_id: queue.id.to_string(),
            options: Arc::clone(&queue.options),
            next_event_id: queue.next_id,
            newest_pruned_id: queue.newest_pruned_id,
            handed_out: queue.handed_out,
            mergeable: queue.mergeable.clone(),
            after: queue.after,
            events: queue
                .events
                .iter()
                .map(|event| match &event.item {
                    Item::Json(map) => StoredEvent {
                        id: event.id,
                        body: body_index(
                            StoredBody::Json(Arc::clone(map)),
                            Arc::as_ptr(map) as usize,
                        ),
                        flags: None,
                    },
                    Item::Message { payload, flags } => StoredEvent {
                        id: event.id,
                        body: body_index(
                            StoredBody::Message(Arc::clone(payload)),
                            Arc::as_ptr(payload) as usize,
                        ),
                        flags: Some(flags.to_vec()),
                    },
                })
                .collect(),
        })
        .collect();
    Snapshot {
        format: FORMAT,
        position,
        bodies,
        queues,
    }
}

/// The queues of a snapshot, checked: a dump that does not hold together is corrupt.
fn rebuild(snapshot: Snapshot, now: Instant) -> Result<Vec<Queue>, EventsError> {
    if snapshot.format != FORMAT {
        return Err(EventsError::Corrupt(format!(
            "format {} (expected {FORMAT})",
            snapshot.format
        )));
    }
    let bodies = snapshot.bodies;
    snapshot
        .queues
        .into_iter()
        .map(|stored| {
            let mut events = VecDeque::with_capacity(stored.events.len());
            let mut previous = stored.newest_pruned_id;
            for event in stored.events {
                if event.id <= previous || event.id >= stored.next_event_id {
                    return Err(EventsError::Corrupt(format!(
                        "queue {}: event ID {} out of order",
                        stored.queue_id, event.id
                    )));
                }
                previous = event.id;
                let item = match (bodies.get(event.body), event.flags) {
                    (Some(StoredBody::Json(map)), _) => Item::Json(Arc::clone(map)),
                    (Some(StoredBody::Message(payload)), flags) => Item::Message {
                        payload: Arc::clone(payload),
                        flags: Arc::from(flags.unwrap_or_default()),
                    },
                    (None, _) => {
                        return Err(EventsError::Corrupt(format!(
                            "queue {}: missing body {}",
                            stored.queue_id, event.body
                        )))
                    }
                };
                events.push_back(QueuedEvent { id: event.id, item });
            }
            let mut queue = Queue::new(Arc::from(stored.queue_id.as_str()), stored.options, now);
            queue.events = events;
            queue.next_id = stored.next_event_id;
            queue.newest_pruned_id = stored.newest_pruned_id;
            queue.handed_out = stored.handed_out;
            queue.after = stored.after;
            queue.mergeable = stored
                .mergeable
                .into_iter()
                .filter(|&id| id > queue.handed_out && queue.events.iter().any(|e| e.id == id))
                .collect();
            Ok(queue)
        })
        .collect()
}

//! One event queue: the events a client has not acknowledged yet, numbered per queue, and the
//! bookkeeping for long-polls waiting on it.

use crate::merge;
use crate::options::QueueOptions;
use crate::MessagePayload;
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Notify;

/// How long a queue lives without being polled, by default (the reference server's 10 minutes).
pub const DEFAULT_QUEUE_TIMEOUT_SECONDS: u64 = 600;

/// How often a blocking poll returns a heartbeat when nothing happens, by default.
pub const DEFAULT_HEARTBEAT_SECONDS: u64 = 60;

/// A queued event, already resolved for this queue's capabilities but not yet rendered to JSON:
/// the body is shared with every other queue that received it.
#[derive(Debug, Clone)]
pub(crate) enum Item {
    /// The same object for everyone; rendering adds the ID (and the empty-topic name).
    Json(Arc<Map<String, Value>>),
    /// A message with this recipient's flags.
    Message {
        payload: Arc<MessagePayload>,
        flags: Arc<[String]>,
    },
}

/// An item with its ID in the queue.
#[derive(Debug, Clone)]
pub(crate) struct QueuedEvent {
    pub id: i64,
    pub item: Item,
}

/// What a read hands out: copies of the shared bodies, rendered to JSON outside the lock.
pub(crate) struct Contents {
    pub queue_id: Arc<str>,
    pub options: Arc<QueueOptions>,
    pub events: Vec<QueuedEvent>,
}

/// Why an acknowledgement was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum AckError {
    AlreadyPruned,
    NotInQueue,
}

/// A client's queue.
#[derive(Debug)]
pub(crate) struct Queue {
    pub id: Arc<str>,
    pub options: Arc<QueueOptions>,
    /// Unacknowledged events, IDs strictly increasing.
    pub events: VecDeque<QueuedEvent>,
    pub next_id: i64,
    /// The ID of the newest acknowledged event (-1 before any).
    pub newest_pruned_id: i64,
    /// The newest ID handed out by a read; events after it may still be merged.
    pub handed_out: i64,
    /// IDs of mergeable events not yet handed out (the reference server's "virtual events").
    pub mergeable: Vec<i64>,
    pub last_used: Instant,
    /// Long-polls currently waiting on this queue.
    pub waiters: u32,
    /// Bumped when a new poll supersedes a waiting one, which then returns.
    pub generation: u64,
    pub notify: Arc<Notify>,
    /// The event-log position the queue's snapshot includes: log entries at or below it are
    /// not delivered to it (`i64::MIN` when events do not come from a log).
    pub after: i64,
}

impl Queue {
    pub fn new(id: Arc<str>, options: Arc<QueueOptions>, now: Instant) -> Self {
        Self {
            id,
            options,
            events: VecDeque::new(),
            next_id: 0,
            newest_pruned_id: -1,
            handed_out: -1,
            mergeable: Vec::new(),
            last_used: now,
            waiters: 0,
            generation: 0,
            notify: Arc::new(Notify::new()),
            after: i64::MIN,
        }
    }

    /// Appends an event with the next ID. An `update_message_flags` event that the reference
    /// server compresses is merged into the newest pending event when that one has the same
    /// (op, flag), taking the new ID; clients see one event instead of hundreds while scrolling.
    pub fn push(&mut self, item: Item) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        if let Item::Json(map) = &item {
            if merge::is_mergeable(map) {
                if let Some(merged) = self.merge_into_pending(map, id) {
                    return merged;
                }
                self.mergeable.push(id);
            }
        }
        self.events.push_back(QueuedEvent { id, item });
        id
    }

    /// Merges only into the newest queued event: unlike the reference, which moves a merged
    /// event past everything queued since, so that a flag change can arrive after the deletion
    /// of its message, merging never reorders what the client applies.
    fn merge_into_pending(&mut self, map: &Map<String, Value>, id: i64) -> Option<i64> {
        let last = self.events.back()?.id;
        let slot = self.mergeable.iter().position(|&pending| {
            pending == last
                && matches!(self.find(pending), Some(QueuedEvent { item: Item::Json(old), .. })
                    if merge::same_kind(old, map))
        })?;
        let old_id = self.mergeable.remove(slot);
        let index = self.index_of(old_id)?;
        let old = self.events.remove(index)?;
        let Item::Json(old_map) = old.item else {
            return None;
        };
        let merged = merge::merge(&old_map, map);
        self.events.push_back(QueuedEvent {
            id,
            item: Item::Json(Arc::new(merged)),
        });
        self.mergeable.push(id);
        Some(id)
    }

    fn index_of(&self, id: i64) -> Option<usize> {
        self.events.binary_search_by_key(&id, |e| e.id).ok()
    }

    fn find(&self, id: i64) -> Option<&QueuedEvent> {
        self.index_of(id).and_then(|i| self.events.get(i))
    }

    /// Acknowledges every event up to `last_event_id`, which must be the newest acknowledged
    /// event or one still in the queue (the reference server's checks; nothing changes when
    /// they fail).
    pub fn acknowledge(&mut self, last_event_id: i64) -> Result<(), AckError> {
        if last_event_id < self.newest_pruned_id {
            return Err(AckError::AlreadyPruned);
        }
        if last_event_id == self.newest_pruned_id {
            return Ok(());
        }
        if self.find(last_event_id).is_none() {
            return Err(AckError::NotInQueue);
        }
        while self.events.front().is_some_and(|e| e.id <= last_event_id) {
            self.events.pop_front();
        }
        self.newest_pruned_id = last_event_id;
        self.mergeable.retain(|&id| id > last_event_id);
        Ok(())
    }

    /// Everything not acknowledged, marking it handed out (so it is no longer merged into).
    pub fn contents(&mut self) -> Contents {
        if let Some(last) = self.events.back() {
            self.handed_out = self.handed_out.max(last.id);
        }
        self.mergeable.clear();
        Contents {
            queue_id: Arc::clone(&self.id),
            options: Arc::clone(&self.options),
            events: self.events.iter().cloned().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use parley_domain::UserId;
    use serde_json::json;

    fn item(v: Value) -> Item {
        match v {
            Value::Object(m) => Item::Json(Arc::new(m)),
            _ => unreachable!(),
        }
    }

    fn queue() -> Queue {
        Queue::new(
            Arc::from("q"),
            Arc::new(QueueOptions::new(UserId(1))),
            Instant::now(),
        )
    }

    #[test]
    fn acknowledge_follows_the_reference_checks() {
        let mut q = queue();
        for _ in 0..4 {
            q.push(item(json!({"type": "x"})));
        }
        assert_eq!(q.acknowledge(-1), Ok(()));
        assert_eq!(q.acknowledge(7), Err(AckError::NotInQueue));
        assert_eq!(q.events.len(), 4);
        assert_eq!(q.acknowledge(1), Ok(()));
        assert_eq!(q.events.front().unwrap().id, 2);
        assert_eq!(q.acknowledge(1), Ok(()));
        assert_eq!(q.acknowledge(0), Err(AckError::AlreadyPruned));
    }
}

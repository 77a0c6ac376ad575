//! `GET /events`: acknowledging, reading and long-polling a queue.
//!
//! A waiting poll subscribes to its queue's `Notify` (`enable`) under the lock and before it
//! looks for events, so a delivery between the check and the wait cannot be missed; it then
//! awaits without the lock, holding no thread and no database connection.

use crate::engine::Engine;
use crate::error::EventsError;
use crate::queue::{AckError, Contents, Item};
use crate::render::render;
use parley_domain::UserId;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

impl Engine {
    /// GET /events: acknowledges events <= last_event_id (prunes them), then returns the
    /// remaining events as JSON.
    ///
    /// If none and !dont_block: waits up to `heartbeat`; if still none, queues a
    /// `{"type":"heartbeat"}` event and returns it. A newer poll of the same queue makes a
    /// waiting one return at once with what there is (possibly nothing), as the reference
    /// server disconnects the older handler.
    ///
    /// Errors: [`EventsError::BadQueueId`] when the queue does not exist or belongs to another
    /// user (the same error, so nothing leaks); [`EventsError::AlreadyPruned`] and
    /// [`EventsError::NotInQueue`] when `last_event_id` is not the newest acknowledged event
    /// nor one in the queue (the reference server's checks). `None` acknowledges nothing.
    pub async fn get_events(
        &self,
        user: UserId,
        queue_id: &str,
        last_event_id: Option<i64>,
        dont_block: bool,
    ) -> Result<Vec<Value>, EventsError> {
        let bad_queue = || EventsError::BadQueueId(queue_id.to_owned());
        let (notify, generation, key) = {
            let mut state = self.lock();
            let closing = state.closing;
            let queue = state.owned_mut(user, queue_id).ok_or_else(bad_queue)?;
            if let Some(last) = last_event_id {
                queue.acknowledge(last).map_err(|e| match e {
                    AckError::AlreadyPruned => EventsError::AlreadyPruned(last),
                    AckError::NotInQueue => EventsError::NotInQueue(last),
                })?;
            }
            queue.last_used = Instant::now();
            if queue.waiters > 0 {
                queue.generation += 1;
                queue.notify.notify_waiters();
            }
            if dont_block || !queue.events.is_empty() || closing {
                let contents = queue.contents();
                drop(state);
                return Ok(render_all(&contents));
            }
            queue.waiters += 1;
            let waiting = (
                Arc::clone(&queue.notify),
                queue.generation,
                Arc::clone(&queue.id),
            );
            state.waiting += 1;
            waiting
        };
        let _waiting = WaitGuard {
            engine: self,
            queue_id: key,
        };

        let deadline = tokio::time::Instant::now() + self.0.config.heartbeat;
        loop {
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let contents = {
                let mut state = self.lock();
                let queue = state.owned_mut(user, queue_id).ok_or_else(bad_queue)?;
                if queue.generation != generation || !queue.events.is_empty() {
                    Some(queue.contents())
                } else if tokio::time::Instant::now() >= deadline {
                    queue.push(Item::Json(Arc::clone(&self.0.heartbeat)));
                    Some(queue.contents())
                } else {
                    None
                }
            };
            if let Some(contents) = contents {
                return Ok(render_all(&contents));
            }
            // Timing out is not an error: the next turn answers with a heartbeat.
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    }
}

fn render_all(contents: &Contents) -> Vec<Value> {
    metrics::counter!("parley_events_delivered_total").increment(contents.events.len() as u64);
    contents
        .events
        .iter()
        .map(|e| render(e, &contents.options, &contents.queue_id))
        .collect()
}

/// Counts a poll as waiting for as long as it waits, including when the client disconnects and
/// the future is dropped; a queue with a waiter is in use and is not collected.
struct WaitGuard<'a> {
    engine: &'a Engine,
    queue_id: Arc<str>,
}

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        let mut state = self.engine.lock();
        state.waiting = state.waiting.saturating_sub(1);
        if let Some(queue) = state.queues.get_mut(&*self.queue_id) {
            queue.waiters = queue.waiters.saturating_sub(1);
            queue.last_used = Instant::now();
        }
    }
}

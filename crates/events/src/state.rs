//! The engine's shared state behind its one mutex: the queues and the indexes delivery uses to
//! find them. Critical sections are short and never span an `.await`.

use crate::queue::Queue;
use parley_domain::UserId;
use std::collections::HashMap;
use std::sync::Arc;

/// Queues by ID, plus the indexes that keep delivery proportional to the audience.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub queues: HashMap<Arc<str>, Queue>,
    /// Each user's queues.
    pub by_user: HashMap<UserId, Vec<Arc<str>>>,
    /// Queues registered with all_public_streams.
    pub all_public: Vec<Arc<str>>,
    /// Long-polls waiting, over all queues (including queues removed while they waited).
    pub waiting: usize,
    /// Set when the server shuts down: polls answer at once instead of waiting.
    pub closing: bool,
    /// The newest event-log entry delivered to the queues (0 before any, and when events do
    /// not come from a log).
    pub position: i64,
}

impl State {
    pub fn insert(&mut self, queue: Queue) {
        let id = Arc::clone(&queue.id);
        self.by_user
            .entry(queue.options.user_id)
            .or_default()
            .push(Arc::clone(&id));
        if queue.options.all_public_streams {
            self.all_public.push(Arc::clone(&id));
        }
        self.queues.insert(id, queue);
    }

    /// Removes a queue and wakes its waiting poll, which then reports the queue as gone.
    pub fn remove(&mut self, id: &str) -> Option<Queue> {
        let queue = self.queues.remove(id)?;
        let user = queue.options.user_id;
        if let Some(ids) = self.by_user.get_mut(&user) {
            ids.retain(|q| &**q != id);
            if ids.is_empty() {
                self.by_user.remove(&user);
            }
        }
        if queue.options.all_public_streams {
            self.all_public.retain(|q| &**q != id);
        }
        queue.notify.notify_waiters();
        Some(queue)
    }

    /// The queue, if it exists and belongs to `user`; anything else is the same "bad queue".
    pub fn owned_mut(&mut self, user: UserId, id: &str) -> Option<&mut Queue> {
        self.queues
            .get_mut(id)
            .filter(|q| q.options.user_id == user)
    }
}

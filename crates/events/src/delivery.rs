//! Delivery of one published event to every queue of its audience: a filter check and an `Arc`
//! push per queue, under the engine's lock so that every queue sees events in publication order.

use crate::event::{Audience, Body, Event};
use crate::filter;
use crate::queue::{Item, Queue};
use crate::resolve::{first_message, for_each_leaf, Leaf};
use crate::state::State;
use parley_domain::UserId;
use std::collections::HashSet;
use std::sync::Arc;

/// Delivers `event`; queues left holding more than `max_events` are dropped (see
/// [`crate::EngineConfig::max_queue_events`]). An event from the log at position `seq` skips
/// the queues whose snapshot already includes it.
pub(crate) fn deliver(state: &mut State, event: &Event, max_events: usize, seq: Option<i64>) {
    let no_flags: Arc<[String]> = Arc::from(Vec::new());
    let mut overflowed: Vec<Arc<str>> = Vec::new();
    let State {
        queues,
        by_user,
        all_public,
        ..
    } = &mut *state;
    let mut deliver_one = |queue: &mut Queue, flags: &Arc<[String]>| {
        if seq.is_some_and(|seq| queue.after >= seq) {
            return;
        }
        if deliver_to(queue, &event.body, flags) && queue.events.len() > max_events {
            overflowed.push(Arc::clone(&queue.id));
        }
    };

    match &event.audience {
        Audience::Everyone => {
            for queue in queues.values_mut() {
                deliver_one(queue, &no_flags);
            }
        }
        Audience::Users(users) => {
            let mut users = users.clone();
            users.sort_unstable();
            users.dedup();
            for user in &users {
                for id in by_user.get(user).into_iter().flatten() {
                    if let Some(queue) = queues.get_mut(id) {
                        deliver_one(queue, &no_flags);
                    }
                }
            }
        }
        Audience::Message(recipients) => {
            let mut seen: HashSet<UserId> = HashSet::with_capacity(recipients.len());
            for recipient in recipients {
                if !seen.insert(recipient.user_id) {
                    continue;
                }
                let Some(ids) = by_user.get(&recipient.user_id) else {
                    continue;
                };
                let flags: Arc<[String]> = Arc::from(recipient.flags.as_slice());
                for id in ids {
                    if let Some(queue) = queues.get_mut(id) {
                        deliver_one(queue, &flags);
                    }
                }
            }
            if is_public_message(&event.body) {
                for id in all_public.iter() {
                    if let Some(queue) = queues.get_mut(id) {
                        if !seen.contains(&queue.options.user_id) {
                            deliver_one(queue, &no_flags);
                        }
                    }
                }
            }
        }
    }

    for id in overflowed {
        tracing::info!(
            queue_id = %id,
            max_events,
            "event queue dropped: too many unacknowledged events"
        );
        state.remove(&id);
    }
}

fn is_public_message(body: &Body) -> bool {
    first_message(body).is_some_and(|p| p.public_channel)
}

/// Queues what this queue accepts of `body`; whether anything was queued.
fn deliver_to(queue: &mut Queue, body: &Body, flags: &Arc<[String]>) -> bool {
    let options = Arc::clone(&queue.options);
    let mut pushed = false;
    for_each_leaf(body, &options.capabilities, &mut |leaf| match leaf {
        Leaf::Json(map) => {
            if filter::accepts_json(&options, map) {
                queue.push(Item::Json(Arc::clone(map)));
                pushed = true;
            }
        }
        Leaf::Message(payload) => {
            if filter::accepts_message(&options, payload, flags) {
                queue.push(Item::Message {
                    payload: Arc::clone(payload),
                    flags: Arc::clone(flags),
                });
                pushed = true;
            }
        }
    });
    if pushed && queue.waiters > 0 {
        queue.notify.notify_waiters();
    }
    pushed
}

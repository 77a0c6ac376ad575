//! Typed events into queue bodies: every builder of this folder goes through here.

use parley_domain::UserId;
use parley_events::{Body, Event};
use parley_wire as wire;

/// The queue body of a typed event.
pub fn body(event: wire::Event) -> Body {
    match serde_json::to_value(event) {
        Ok(value) => Body::json(value),
        Err(err) => {
            tracing::error!(%err, "event body does not serialize; dropped");
            Body::Many(Vec::new())
        }
    }
}

/// A typed event for every queue of `users`.
pub fn to_users(users: Vec<UserId>, event: wire::Event) -> Event {
    Event::to_users(users, body(event))
}

/// A typed event for every queue.
pub fn to_everyone(event: wire::Event) -> Event {
    Event::everyone(body(event))
}

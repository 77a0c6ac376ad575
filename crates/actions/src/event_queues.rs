//! Reading and removing event queues (`GET /events`, `DELETE /events`).

use crate::context::Context;
use crate::error::ActionResult;
use crate::register::RegisterRequest;
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError};
use parley_events::EventsError;
use serde_json::Value;

/// A `GET /events` request.
#[derive(Debug, Clone, Default)]
pub struct GetEvents {
    /// The queue; None registers one from `register`.
    pub queue_id: Option<String>,
    /// Events up to this ID are acknowledged.
    pub last_event_id: Option<i64>,
    /// Return at once even with no events.
    pub dont_block: bool,
    /// Queue options when no `queue_id` was given.
    pub register: RegisterRequest,
}

/// What `GET /events` returns.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EventBatch {
    /// Events newer than `last_event_id`.
    pub events: Vec<Value>,
    /// The queue they came from.
    pub queue_id: String,
}

/// The error a client re-registers on.
pub(crate) fn bad_queue(queue_id: &str) -> RequestError {
    RequestError::new(
        ErrorCode::BadEventQueueId,
        format!("Bad event queue ID: {queue_id}"),
    )
    .with("queue_id", queue_id)
}

fn map_error(err: EventsError) -> crate::error::ActionError {
    match err {
        EventsError::BadQueueId(id) => bad_queue(&id).into(),
        EventsError::AlreadyPruned(_) | EventsError::NotInQueue(_) => {
            RequestError::invalid_param("last_event_id", err.to_string()).into()
        }
        other => crate::error::ActionError::Internal(other.to_string()),
    }
}

/// `GET /events`: waits (without holding a thread or connection) until the queue has events
/// newer than `last_event_id`, or returns a heartbeat when nothing happened for a while.
///
/// The caller is authenticated without using their API allowance; polling meters itself. A
/// long-poll that follows its queue (acknowledges everything the previous poll returned) is
/// free, however busy the organization: it answers only when there is something new, so it
/// costs no more than the events it carries, and a client must be able to poll again right
/// after each answer without ever being refused, nor spend the allowance its sends need. Any
/// other poll uses one unit of the caller's API allowance: `dont_block` polls, polls that
/// re-read events already served, and polls of another user's or an unknown queue. (A
/// long-poll that comes back empty, because the server is stopping or a newer poll of the same
/// queue took over, is not charged: a client re-polling then must not run out of allowance.)
pub async fn get_events(ctx: &Context, user: User, request: GetEvents) -> ActionResult<EventBatch> {
    let charge = || ctx.limits.api_by_user.hit(&user.id.to_string());
    let engine = ctx.events.engine();
    let queue_id = match request.queue_id {
        Some(id) => {
            let follows = !request.dont_block
                && engine.queue_belongs_to(user.id, &id)
                && ctx.limits.polls.follows(&id, request.last_event_id);
            if !follows {
                charge()?;
            }
            id
        }
        None => {
            charge()?;
            let register =
                crate::register::with_bot_defaults(ctx, &user, request.register.clone()).await?;
            let options = crate::register::queue_options(&user, &register)?;
            engine.register(options).0
        }
    };
    let events = ctx
        .events
        .engine()
        .get_events(
            user.id,
            &queue_id,
            request.last_event_id,
            request.dont_block,
        )
        .await
        .map_err(map_error)?;
    if let Some(highest) = events.iter().filter_map(|e| e["id"].as_i64()).max() {
        ctx.limits.polls.served(&queue_id, highest);
    }
    Ok(EventBatch { events, queue_id })
}

/// `DELETE /events`: removes one of the caller's queues.
pub async fn delete_queue(ctx: &Context, user: User, queue_id: String) -> ActionResult<()> {
    ctx.events
        .engine()
        .delete_queue(user.id, &queue_id)
        .map_err(map_error)?;
    ctx.limits.polls.forget(&queue_id);
    Ok(())
}

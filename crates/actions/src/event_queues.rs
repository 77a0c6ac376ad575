//! Reading and removing event queues (`GET /events`, `DELETE /events`).

use crate::context::Context;
use crate::error::ActionResult;
use crate::event_log::{LogFollower, QueueHome};
use crate::register::RegisterRequest;
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError};
use parley_events::EventsError;
use serde_json::Value;

/// The header marking a request one server process forwarded to another, which answers it
/// itself rather than forwarding it again.
pub const FORWARDED_HEADER: &str = "x-parley-forwarded";

/// What a request for a queue came to: answered here, or by the process holding the queue.
#[derive(Debug)]
pub enum Answer<T> {
    /// This process answered.
    Here(T),
    /// Another process answered; its response, passed on as it came.
    Forwarded {
        /// Its HTTP status.
        status: u16,
        /// Its body (a JSON envelope).
        body: Vec<u8>,
    },
}

/// Where a request for `queue_id` is answered: another live process holding it (through the
/// event log's registry of processes), else here. A forwarded request is always answered here.
async fn home<'a>(
    ctx: &'a Context,
    queue_id: &str,
    forwarded: bool,
) -> ActionResult<Option<(&'a LogFollower, String)>> {
    let Some(log) = ctx.events.log() else {
        return Ok(None);
    };
    if forwarded {
        return Ok(None);
    }
    Ok(match log.locate(queue_id).await? {
        QueueHome::Here => None,
        QueueHome::There(address) => Some((log, address)),
    })
}

/// How long a request keeps looking for its queue's process when the one it was sent to does
/// not answer: long enough for a process that closed its listener to announce its stop (then
/// [`LogFollower::locate`] waits for the hand-over) even when a busy database delays that
/// announcement by seconds, and short beside a long-poll's heartbeat for one that died.
const UNREACHABLE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Answers a queue request in the process holding the queue when that is another one: None
/// when it is this one. A process that cannot be reached is looked up again, because it may
/// be stopping and about to hand its queues over (then another process adopts the queue); only
/// when it stays unreachable is the queue gone.
async fn answer_elsewhere<T>(
    ctx: &Context,
    method: reqwest::Method,
    authorization: Option<&str>,
    query: &[(&str, String)],
    forwarded: bool,
) -> ActionResult<Option<Answer<T>>> {
    let queue_id = query
        .iter()
        .find(|(name, _)| *name == "queue_id")
        .map(|(_, value)| value.as_str())
        .unwrap_or_default();
    let deadline = tokio::time::Instant::now() + UNREACHABLE_WAIT;
    loop {
        let Some((log, address)) = home(ctx, queue_id, forwarded).await? else {
            return Ok(None);
        };
        match forward(ctx, log, method.clone(), &address, authorization, query).await {
            Some(answer) => return Ok(Some(answer)),
            None if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            None => return Err(bad_queue(queue_id).into()),
        }
    }
}

/// Sends a queue request on to the process at `address`, with the caller's credentials; None
/// when that process cannot be reached or does not finish its answer.
async fn forward<T>(
    ctx: &Context,
    log: &LogFollower,
    method: reqwest::Method,
    address: &str,
    authorization: Option<&str>,
    query: &[(&str, String)],
) -> Option<Answer<T>> {
    // A long-poll waits up to the heartbeat; the answer may take a little longer.
    let timeout = ctx.events.engine().config().heartbeat + std::time::Duration::from_secs(30);
    let mut outgoing = log
        .client()
        .request(
            method,
            format!("{}/api/v1/events", address.trim_end_matches('/')),
        )
        .query(query)
        .header(FORWARDED_HEADER, log.node().node_id.as_str())
        .timeout(timeout);
    if let Some(authorization) = authorization {
        outgoing = outgoing.header(reqwest::header::AUTHORIZATION, authorization);
    }
    let answer = async {
        let response = outgoing.send().await?;
        let status = response.status().as_u16();
        let body = response.bytes().await?;
        Ok::<_, reqwest::Error>(Answer::Forwarded {
            status,
            body: body.to_vec(),
        })
    };
    match answer.await {
        Ok(answer) => {
            metrics::counter!("parley_event_requests_forwarded_total").increment(1);
            Some(answer)
        }
        Err(e) => {
            tracing::info!(address, error = %e, "cannot forward an event queue request");
            None
        }
    }
}

/// `GET /events` reaching any process: forwarded to the process holding the queue, else
/// answered here ([`get_events`]). `authorization` is the caller's header, passed on.
pub async fn get_events_anywhere(
    ctx: &Context,
    user: User,
    request: GetEvents,
    authorization: Option<&str>,
    forwarded: bool,
) -> ActionResult<Answer<EventBatch>> {
    if let Some(queue_id) = &request.queue_id {
        let mut query = vec![
            ("queue_id", queue_id.clone()),
            ("dont_block", request.dont_block.to_string()),
        ];
        if let Some(last) = request.last_event_id {
            query.push(("last_event_id", last.to_string()));
        }
        let method = reqwest::Method::GET;
        if let Some(answer) =
            answer_elsewhere(ctx, method, authorization, &query, forwarded).await?
        {
            return Ok(answer);
        }
    }
    get_events(ctx, user, request).await.map(Answer::Here)
}

/// `DELETE /events` reaching any process, as [`get_events_anywhere`].
pub async fn delete_queue_anywhere(
    ctx: &Context,
    user: User,
    queue_id: String,
    authorization: Option<&str>,
    forwarded: bool,
) -> ActionResult<Answer<()>> {
    let query = [("queue_id", queue_id.clone())];
    let method = reqwest::Method::DELETE;
    if let Some(answer) = answer_elsewhere(ctx, method, authorization, &query, forwarded).await? {
        return Ok(answer);
    }
    delete_queue(ctx, user, queue_id).await.map(Answer::Here)
}

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
    let key = user.id.to_string();
    let engine = ctx.events.engine();
    let queue_id = match request.queue_id {
        Some(id) => {
            let follows = !request.dont_block
                && engine.queue_belongs_to(user.id, &id)
                && ctx.limits.polls.follows(&id, request.last_event_id);
            if !follows {
                ctx.limits.api_by_user.take(&key).await?;
            }
            id
        }
        None => {
            ctx.limits.api_by_user.take(&key).await?;
            let register =
                crate::register::with_bot_defaults(ctx, &user, request.register.clone()).await?;
            let options = crate::register::queue_options(&user, &register)?;
            ctx.events.register(options)
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

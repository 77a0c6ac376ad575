//! The scheduler: sends scheduled messages and reminders when they are due (and moves full
//! membership forward, see [`crate::full_members`]). Each is sent
//! through the ordinary send path (so every permission is checked again at send time) in the
//! same transaction that marks it delivered, so a crash can delay a message but never send it
//! twice. A send that is refused is kept as failed, with the reason, and its owner is told, as
//! the reference does.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::messages_send::{send_in, Destination, SendMessage};
use crate::notices::notification_bot;
use crate::notify::scheduled::{removed, updated};
use crate::publish::Events;
use crate::scheduled_messages::{stored_request, SCHEDULER_CLIENT};
use crate::time::now;
use parley_domain::message::MessageKind;
use parley_domain::narrow::UserOperand;
use parley_domain::user::User;
use parley_domain::{RequestError, UserId};
use parley_storage::savepoint::savepoint;
use parley_storage::scheduled_messages::{self as stored, ScheduledMessage};
use parley_storage::{users, DbConn};
use std::time::Duration;

/// How often the scheduler looks for due messages. Clients schedule to the minute; a few
/// seconds of delay is not noticed.
pub const TICK: Duration = Duration::from_secs(5);

/// Sends every message due at `now`, earliest first, one transaction each; returns how many
/// were handled (sent or failed).
pub async fn do_deliver_due(ctx: &Context, now: i64) -> ActionResult<usize> {
    let mut handled = 0;
    loop {
        let ctx2 = ctx.clone();
        let more = ctx
            .write(move |conn, events| deliver_next(&ctx2, conn, events, now))
            .await?;
        if !more {
            return Ok(handled);
        }
        handled += 1;
    }
}

/// Why a scheduled message failed when its send broke for a reason other than a refusal.
const UNEXPECTED_FAILURE: &str = "Message could not be sent at the scheduled time.";

/// Sends (or fails) the earliest due message; whether there was one.
fn deliver_next(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    now: i64,
) -> ActionResult<bool> {
    let Some(row) = stored::next_due(conn, now)? else {
        return Ok(false);
    };
    let owner = users::by_id(conn, UserId(row.sender_id))?
        .ok_or_else(|| ActionError::Internal("the owner of a scheduled message vanished".into()))?;
    let sender = match row.reminder_target_message_id {
        Some(_) => notification_bot(conn)?,
        None => owner.clone(),
    };
    let mark = events.0.len();
    let outcome = match owner.is_active {
        true => savepoint(conn, |conn| {
            send_in(
                ctx,
                conn,
                events,
                &sender,
                &stored_request(&row),
                &row.content,
            )
        }),
        false => Err(RequestError::bad_request("The sender is deactivated.").into()),
    };
    match outcome {
        Ok(sent) => {
            stored::mark_delivered(conn, row.id, sent.id.0)?;
            events.push(removed(&row));
        }
        Err(ActionError::Request(refused)) => {
            events.0.truncate(mark);
            fail(ctx, conn, events, &row, &owner, &refused.msg)?;
        }
        Err(other) => {
            // Not the request's fault (a storage or internal failure inside the send, rolled
            // back to its savepoint): the message fails, as the reference does, rather than
            // blocking every later one on each tick. If the database itself is gone, recording
            // that fails too, and the next tick tries again.
            tracing::error!(
                scheduled_message_id = row.id,
                error = %other,
                "a scheduled message could not be sent"
            );
            events.0.truncate(mark);
            fail(ctx, conn, events, &row, &owner, UNEXPECTED_FAILURE)?;
        }
    }
    Ok(true)
}

/// Keeps a refused message as failed and tells its owner why.
fn fail(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    row: &ScheduledMessage,
    owner: &User,
    why: &str,
) -> ActionResult<()> {
    stored::mark_failed(conn, row.id, why)?;
    let failed = ScheduledMessage {
        failed: true,
        failure_message: Some(why.to_owned()),
        ..row.clone()
    };
    if row.reminder_target_message_id.is_none() {
        events.push(updated(&failed));
    } else {
        // Reminders have no update event: the failed one is removed from clients' lists.
        events.push(removed(&failed));
    }
    if !owner.is_active {
        return Ok(());
    }
    let what = match row.reminder_target_message_id {
        Some(_) => "reminder",
        None => "message",
    };
    let notice = format!(
        "The {what} you scheduled for <time:{}> was not sent because of the following error:\n\n> {why}\n\n[View scheduled messages](#scheduled)",
        crate::time::iso8601(row.scheduled_at)
    );
    let bot = notification_bot(conn)?;
    let request = SendMessage {
        kind: MessageKind::Direct,
        to: Destination::Users(vec![UserOperand::Id(owner.id.0)]),
        topic: None,
        content: notice.clone(),
        read_by_sender: None,
        client: SCHEDULER_CLIENT.to_owned(),
        local_echo: None,
    };
    send_in(ctx, conn, events, &bot, &request, &notice)?;
    Ok(())
}

/// Runs the scheduler until the server stops: every [`TICK`], everything due is sent; every
/// [`crate::full_members::CHECK_EVERY_TICKS`] ticks, members past the waiting period become
/// full members.
pub fn spawn_scheduler(ctx: Context) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(TICK);
        let mut ticks: u32 = 0;
        loop {
            ticker.tick().await;
            if ticks.is_multiple_of(crate::full_members::CHECK_EVERY_TICKS) {
                if let Err(e) = crate::full_members::do_update_full_members(&ctx, now()).await {
                    tracing::warn!(error = %e, "cannot update full members");
                }
            }
            ticks = ticks.wrapping_add(1);
            match do_deliver_due(&ctx, now()).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(handled = n, "sent scheduled messages"),
                Err(e) => tracing::warn!(error = %e, "cannot send scheduled messages"),
            }
        }
    })
}

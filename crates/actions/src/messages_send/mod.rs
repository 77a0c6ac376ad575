//! Sending messages: to a channel topic, or directly to users, in two steps: [`prepare`]
//! checks and reads, [`commit`] writes.

mod commit;
mod prepare;

use prepare::Reading;
pub(crate) use prepare::{check_may_post, check_topic_policy, mentioned_users};

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::publish::Events;
use crate::rendering;
use parley_domain::message::{self, normalize_content};
use parley_domain::narrow::UserOperand;
use parley_domain::user::User;
use parley_domain::{ChannelId, MessageId};
use parley_markdown::Rendered;
use parley_storage::DbConn;

/// Where a message goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Destination {
    /// A channel by name.
    ChannelName(String),
    /// A channel by ID.
    ChannelId(ChannelId),
    /// Users, by ID or email.
    Users(Vec<UserOperand>),
    /// A channel message that names no channel: the sender's `default_sending_stream` (bots
    /// have one), else "Missing channel", as the reference.
    SenderDefault,
}

/// A message to send.
#[derive(Debug, Clone)]
pub struct SendMessage {
    /// Channel or direct.
    pub kind: message::MessageKind,
    /// Recipient.
    pub to: Destination,
    /// Topic, for channel messages.
    pub topic: Option<String>,
    /// Markdown content.
    pub content: String,
    /// Start as read for the sender; None applies the client heuristic.
    pub read_by_sender: Option<bool>,
    /// The sending client's name.
    pub client: String,
    /// `(queue_id, local_id)`: the message event to that queue carries `local_id`.
    pub local_echo: Option<(String, String)>,
}

/// What sending produced.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Sent {
    /// The new message's ID.
    pub id: MessageId,
    /// The sender's new policy for the topic, when sending changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub automatic_new_visibility_policy: Option<i64>,
}

/// `POST /messages`. On SQLite it renders and checks the message and reads its recipients on a
/// reading connection, then writes it in one transaction, so the one writer's turn is spent on
/// the writes (`prepare`, `commit`). On PostgreSQL it renders the message first and checks,
/// reads and writes in the transaction, which commits with the other logged writes waiting
/// (`Db::logged_transaction`); without group commit everything runs in the transaction,
/// rendering included, one trip to a blocking thread.
pub async fn do_send_message(
    ctx: &Context,
    sender: User,
    request: SendMessage,
) -> ActionResult<Sent> {
    let content = normalize_content(&request.content)?;
    let (reading, sender, request, content) = match ctx.db.writes_in_turn() {
        true => read_before_turn(ctx, sender, request, content).await?,
        false if ctx.db.commits_in_batches() => {
            let rendered = render_before_turn(ctx, &content).await?;
            (Reading::Inside(Some(rendered)), sender, request, content)
        }
        false => (Reading::Inside(None), sender, request, content),
    };
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        commit::commit(&ctx2, conn, events, &sender, &request, &content, reading)
    })
    .await
    .inspect(|_| metrics::counter!("parley_messages_sent_total").increment(1))
}

/// SQLite's first step: renders the message on a reading connection and, unless something a
/// send reads is being changed, checks and reads everything else there too (`prepare`).
async fn read_before_turn(
    ctx: &Context,
    sender: User,
    request: SendMessage,
    content: String,
) -> ActionResult<(Reading, User, SendMessage, String)> {
    let ctx2 = ctx.clone();
    ctx.run(move |conn| {
        let rendered =
            rendering::render_message(conn, &ctx2.realm.url, ctx2.camo.as_ref(), &content);
        let reading = match crate::realm_cache::inputs_mark() {
            Some(mark) => Reading::Outside {
                prepared: Box::new(prepare::prepare(
                    &ctx2,
                    conn,
                    &sender,
                    &request,
                    &content,
                    Some(rendered),
                )?),
                mark,
            },
            None => Reading::Inside(Some(rendered)),
        };
        Ok::<_, ActionError>((reading, sender, request, content))
    })
    .await
}

/// PostgreSQL's first step when logged writes commit in batches: renders the message on a
/// pooled connection, beside the writer, whose batches then hold the checks and writes alone.
/// Everything else is read in the transaction, where the channel's subscribers cannot change
/// under it, whichever node changes them.
async fn render_before_turn(ctx: &Context, content: &str) -> ActionResult<Rendered> {
    let ctx2 = ctx.clone();
    let content = content.to_owned();
    ctx.run(move |conn| {
        Ok::<_, ActionError>(rendering::render_message(
            conn,
            &ctx2.realm.url,
            ctx2.camo.as_ref(),
            &content,
        ))
    })
    .await
}

/// Sends `request` inside the caller's transaction: every check of `POST /messages`, the
/// message and its recipients' rows, and its events. The scheduler delivers scheduled messages
/// and reminders through it, in the same transaction that marks them delivered.
pub(crate) fn send_in(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    sender: &User,
    request: &SendMessage,
    content: &str,
) -> ActionResult<Sent> {
    let reading = Reading::Inside(None);
    commit::commit(ctx, conn, events, sender, request, content, reading)
}

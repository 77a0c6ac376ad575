//! What an outgoing webhook bot says: its answer in the conversation that triggered it, a
//! "Failure!" notice there when the call failed, and a direct message to its owner explaining
//! the failure. All are ordinary messages sent by the bot through the send path.

use crate::context::Context;
use crate::error::ActionResult;
use crate::messages_send::{do_send_message, Destination, SendMessage};
use crate::moderation::{dm_message_url, encode_hash_component};
use parley_domain::message::MessageKind;
use parley_domain::narrow::UserOperand;
use parley_domain::user::User;
use parley_domain::{ChannelId, UserId};
use serde_json::{Map, Value};

/// The client name replies are sent with, as the reference's.
const CLIENT: &str = "OutgoingWebhookResponse";

/// The bot that answers and the message that triggered it (as `GET /messages` shows it with
/// `apply_markdown: false`).
pub(super) struct Answering<'a> {
    pub(super) bot: &'a User,
    pub(super) message: &'a Map<String, Value>,
}

/// Posts `content` as the bot in the conversation of the triggering message.
pub(super) async fn send_reply(
    ctx: &Context,
    answering: &Answering<'_>,
    content: &str,
) -> ActionResult<()> {
    let message = answering.message;
    let request = if message.get("type").and_then(Value::as_str) == Some("stream") {
        SendMessage {
            kind: MessageKind::Channel,
            to: Destination::ChannelId(ChannelId(
                message
                    .get("stream_id")
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
            )),
            topic: message
                .get("subject")
                .and_then(Value::as_str)
                .map(str::to_owned),
            ..base(content)
        }
    } else {
        let participants: Vec<UserOperand> = message
            .get("display_recipient")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("id").and_then(Value::as_i64))
            .filter(|id| *id != answering.bot.id.0)
            .map(UserOperand::Id)
            .collect();
        SendMessage {
            kind: MessageKind::Direct,
            to: Destination::Users(participants),
            ..base(content)
        }
    };
    do_send_message(ctx, answering.bot.clone(), request).await?;
    Ok(())
}

/// Tells the conversation that the bot failed: "Failure! <why>".
pub(super) async fn fail(ctx: &Context, answering: &Answering<'_>, why: &str) -> ActionResult<()> {
    send_reply(ctx, answering, &format!("Failure! {why}")).await
}

/// Tells the bot's owner, in a direct message from the bot, which message triggered the call
/// and what went wrong.
pub(super) async fn notify_owner(
    ctx: &Context,
    answering: &Answering<'_>,
    details: &str,
) -> ActionResult<()> {
    let Some(owner) = answering.bot.bot_owner_id else {
        return Ok(());
    };
    let content = format!(
        "[A message]({}) to your bot @_**{}|{}** triggered an outgoing webhook.\n{details}",
        message_url(&ctx.realm.url, answering.message),
        answering.bot.full_name,
        answering.bot.id
    );
    let request = SendMessage {
        kind: MessageKind::Direct,
        to: Destination::Users(vec![UserOperand::Id(owner.0)]),
        ..base(&content)
    };
    do_send_message(ctx, answering.bot.clone(), request).await?;
    Ok(())
}

/// The address of the triggering message in the web client.
fn message_url(realm_url: &str, message: &serde_json::Map<String, Value>) -> String {
    let id = message.get("id").and_then(Value::as_i64).unwrap_or(0);
    let text = |key: &str| message.get(key).and_then(Value::as_str).unwrap_or("");
    match message.get("stream_id").and_then(Value::as_i64) {
        Some(channel) => format!(
            "{}/#narrow/channel/{channel}-{}/topic/{}/near/{id}",
            realm_url.trim_end_matches('/'),
            encode_hash_component(&text("display_recipient").replace(' ', "-")),
            encode_hash_component(text("subject")),
        ),
        None => {
            let participants: Vec<UserId> = message
                .get("display_recipient")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r.get("id").and_then(Value::as_i64))
                .map(UserId)
                .collect();
            dm_message_url(realm_url, &participants, id)
        }
    }
}

/// A message from the bot with `content`; the caller sets where it goes.
fn base(content: &str) -> SendMessage {
    SendMessage {
        kind: MessageKind::Direct,
        to: Destination::Users(Vec::new()),
        topic: None,
        content: content.to_owned(),
        read_by_sender: None,
        client: CLIENT.to_owned(),
        local_echo: None,
    }
}

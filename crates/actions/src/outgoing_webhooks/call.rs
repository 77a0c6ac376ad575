//! One webhook call: the request in the bot's format (Zulip's or Slack's), the answer read as
//! the reference reads it, and what the bot says back or what went wrong.

use super::reply::{fail, notify_owner, send_reply, Answering};
use super::Trigger;
use crate::context::Context;
use crate::error::ActionError;
use parley_domain::user::{BotType, User};
use parley_domain::UserId;
use parley_events::MessagePayload;
use parley_storage::bots::BotSettings;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// How long the bot's server has to answer (the reference's default
/// `OUTGOING_WEBHOOKS_TIMEOUT_SECONDS`).
const TIMEOUT: Duration = Duration::from_secs(10);

/// Calls that time out or cannot connect are tried again this many times (the reference's
/// `MAX_REQUEST_RETRIES`).
const RETRIES: u32 = 3;

/// The bot's `interface` for Slack-compatible requests.
const SLACK_INTERFACE: i64 = 2;

/// Everything one call needs, read once.
pub(super) struct Call {
    pub(super) bot: User,
    pub(super) settings: BotSettings,
    /// The message as `GET /messages` shows it with `apply_markdown: false`.
    pub(super) message: Map<String, Value>,
    pub(super) trigger: Trigger,
}

/// What came of a call that reached the bot's server.
enum Outcome {
    /// Post this in the conversation (None: the bot chose not to answer).
    Reply(Option<String>),
    /// The call failed: the conversation is told why and, unless the message could not be
    /// sent at all in the bot's format, so is the bot's owner.
    Failed {
        /// For the conversation ("Failure! ...").
        conversation: String,
        /// For the owner, after "[A message](...) to your bot ... triggered an outgoing webhook."
        owner: Option<String>,
    },
}

/// Calls `bot`'s webhook for `message`, then replies or reports the failure. Never fails
/// itself: what goes wrong is logged, told to the conversation and to the bot's owner.
pub(super) async fn deliver(
    ctx: &Context,
    message: Arc<MessagePayload>,
    trigger: Trigger,
    sender: UserId,
    bot: UserId,
) {
    let call = match load(ctx, &message, trigger, sender, bot).await {
        Ok(Some(call)) => call,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!("outgoing webhook of bot {bot}: {e}");
            return;
        }
    };
    let outcome = match request(&call) {
        Err(refusal) => Outcome::Failed {
            conversation: refusal,
            owner: None,
        },
        Ok(request) => match send_with_retries(&call, request).await {
            Ok((status, body)) => read_answer(&call, status, &body),
            Err(error) => {
                tracing::info!("outgoing webhook of bot {}: {error}", call.bot.id);
                Outcome::Failed {
                    conversation: "Bot is unavailable".to_owned(),
                    owner: Some(error),
                }
            }
        },
    };
    let answering = Answering {
        bot: &call.bot,
        message: &call.message,
    };
    let result = match outcome {
        Outcome::Reply(None) => Ok(()),
        Outcome::Reply(Some(content)) => match send_reply(ctx, &answering, &content).await {
            Ok(()) => Ok(()),
            Err(e) => {
                let error = e.to_string();
                let conversation = fail(ctx, &answering, &error).await;
                let owner = notify_owner(
                    ctx,
                    &answering,
                    &format!(
                        "The outgoing webhook server attempted to send a message in Parley, \
                         but that request resulted in the following error:\n> {error}"
                    ),
                )
                .await;
                conversation.and(owner)
            }
        },
        Outcome::Failed {
            conversation,
            owner,
        } => {
            let told = fail(ctx, &answering, &conversation).await;
            match owner {
                Some(owner) => notify_owner(ctx, &answering, &owner).await.and(told),
                None => told,
            }
        }
    };
    if let Err(e) = result {
        tracing::warn!("outgoing webhook of bot {}: {e}", call.bot.id);
    }
}

/// The bot, its settings and the message as the payload shows it; None when nothing is to be
/// called (the sender is a bot, the bot is gone or has no URL).
async fn load(
    ctx: &Context,
    message: &MessagePayload,
    trigger: Trigger,
    sender: UserId,
    bot: UserId,
) -> Result<Option<Call>, ActionError> {
    let (people, settings) = ctx
        .run(move |conn| {
            let people = parley_storage::users::by_ids(conn, &[sender, bot])?;
            let settings = parley_storage::bots::get(conn, bot)?;
            Ok::<_, ActionError>((people, settings))
        })
        .await?;
    let sender = people.iter().find(|u| u.id == sender);
    let Some(bot) = people.iter().find(|u| u.id == bot).cloned() else {
        return Ok(None);
    };
    if sender.is_none_or(User::is_bot)
        || !bot.is_active
        || bot.bot_type != Some(BotType::OutgoingWebhook)
        || settings
            .service_base_url
            .as_deref()
            .is_none_or(str::is_empty)
    {
        return Ok(None);
    }
    let mut shown = message.message.clone();
    shown.insert("content".into(), json!(message.content_markdown));
    shown.insert("content_type".into(), json!("text/x-markdown"));
    shown.insert("rendered_content".into(), json!(message.content_html));
    let avatar = message.avatar_url.as_ref().unwrap_or(&message.gravatar_url);
    shown.insert("avatar_url".into(), json!(avatar));
    Ok(Some(Call {
        bot,
        settings,
        message: shown,
        trigger,
    }))
}

/// The request body in the bot's format; Err when the format cannot carry this message.
fn request(call: &Call) -> Result<Vec<u8>, String> {
    let token = call.settings.service_token.clone().unwrap_or_default();
    let content = call.message.get("content").cloned().unwrap_or_default();
    if call.settings.service_interface != Some(SLACK_INTERFACE) {
        let body = json!({
            "data": content,
            "message": call.message,
            "bot_email": call.bot.delivery_email,
            "bot_full_name": call.bot.full_name,
            "token": token,
            "trigger": call.trigger.as_str(),
        });
        return Ok(body.to_string().into_bytes());
    }
    if call.message.get("type").and_then(Value::as_str) != Some("stream") {
        return Err("Slack outgoing webhooks don't support direct messages.".to_owned());
    }
    let field = |key: &str| match call.message.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let form = [
        ("token", token),
        ("team_id", "T1".to_owned()),
        ("team_domain", field("sender_realm_str")),
        ("channel_id", format!("C{}", field("stream_id"))),
        ("channel_name", field("display_recipient")),
        ("thread_ts", field("timestamp")),
        ("timestamp", field("timestamp")),
        ("user_id", format!("U{}", field("sender_id"))),
        ("user_name", field("sender_full_name")),
        ("text", field("content")),
        ("trigger_word", call.trigger.as_str().to_owned()),
        ("service_id", call.bot.id.0.to_string()),
    ];
    let encoded = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter())
        .finish();
    Ok(encoded.into_bytes())
}

/// POSTs the request, trying again after a timeout or a failed connection; the answer's
/// status and body, or why there is none.
async fn send_with_retries(call: &Call, bytes: Vec<u8>) -> Result<(u16, String), String> {
    let url = call.settings.service_base_url.clone().unwrap_or_default();
    let content_type = if call.settings.service_interface == Some(SLACK_INTERFACE) {
        "application/x-www-form-urlencoded"
    } else {
        "application/json"
    };
    let client = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .user_agent(concat!("ParleyOutgoingWebhook/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))?;
    let mut last = String::new();
    for attempt in 0..=RETRIES {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(500 * u64::from(attempt))).await;
        }
        let sent = client
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(bytes.clone())
            .send()
            .await;
        match sent {
            Ok(response) => {
                let status = response.status().as_u16();
                let text = response.text().await.unwrap_or_default();
                return Ok((status, text));
            }
            Err(e) if e.is_timeout() => {
                last = "Unable to connect with the third party.".to_owned();
            }
            Err(e) if e.is_connect() => {
                last = format!(
                    "The message `{}` resulted in a connection error when sending a request \
                     to an outgoing webhook! See the Parley server logs for more information.",
                    call.message
                        .get("content")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                );
                tracing::info!("outgoing webhook {url}: {e}");
            }
            Err(e) => {
                tracing::info!("outgoing webhook {url}: {e}");
                return Err(format!(
                    "When trying to send a request to the webhook service, an error \
                     occurred:\n```\n{e}\n```"
                ));
            }
        }
    }
    Err(last)
}

/// The bot server's answer, read as the reference reads it.
fn read_answer(call: &Call, status: u16, body: &str) -> Outcome {
    if !(200..300).contains(&status) {
        let mut owner = format!("The webhook got a response with status code *{status}*.");
        if !body.is_empty() {
            owner.push_str(&format!(
                "\nThe response contains the following payload:\n```\n{body}\n```"
            ));
        }
        return Outcome::Failed {
            conversation: format!("Third party responded with {status}"),
            owner: Some(owner),
        };
    }
    let unusable = |why: &str| Outcome::Failed {
        conversation: why.to_owned(),
        owner: Some(format!(
            "The outgoing webhook server attempted to send a message in Parley, but that \
             request resulted in the following error:\n> {why}"
        )),
    };
    let Ok(answer) = serde_json::from_str::<Value>(body) else {
        return unusable("Invalid JSON in response");
    };
    let Some(answer) = answer.as_object() else {
        return unusable("Invalid response format");
    };
    Outcome::Reply(reply_content(call, answer))
}

/// What the bot asks to post, if anything: `content` (or the older `response_string`) in the
/// Zulip format, `text` in Slack's; nothing for `response_not_required` or an empty text.
fn reply_content(call: &Call, answer: &Map<String, Value>) -> Option<String> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let content = if call.settings.service_interface == Some(SLACK_INTERFACE) {
        answer.get("text").map(text)
    } else if answer
        .get("response_not_required")
        .is_some_and(|v| v.as_bool() == Some(true))
    {
        None
    } else {
        answer
            .get("response_string")
            .or_else(|| answer.get("content"))
            .map(text)
    };
    content.filter(|c| !c.trim().is_empty())
}

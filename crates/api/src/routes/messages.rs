//! Messages: sending, reading, rendering.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::{ApiError, ApiResult};
use crate::params;
use crate::params::{path_param, Json, ParamMap, Params};
use actix_web::{web, HttpRequest};
use parley_actions::messages_edit::{self, MessageEdit, PropagateMode};
use parley_actions::messages_read::{self, Anchor, MessageQuery, Presentation};
use parley_actions::messages_send::{self, Destination, SendMessage};
use parley_actions::Context;
use parley_domain::message::{client_name, MessageKind};
use parley_domain::narrow::{parse_narrow, NarrowTerm, UserOperand};
use parley_domain::{limits, ChannelId, MessageId, RequestError};
use serde_json::Value;

/// Parses `to` for a message kind: a channel name or ID, or a list of user IDs or emails. A
/// channel message without `to` (or with an empty list) goes to the sender's default channel.
pub(crate) fn destination(
    kind: MessageKind,
    raw: Option<&str>,
) -> Result<Destination, RequestError> {
    let Some(raw) = raw else {
        return match kind {
            MessageKind::Channel => Ok(Destination::SenderDefault),
            MessageKind::Direct => Err(RequestError::missing_param("to")),
        };
    };
    let parsed: Option<Value> = serde_json::from_str(raw).ok();
    match kind {
        MessageKind::Channel => match parsed {
            Some(Value::Number(n)) => n
                .as_i64()
                .map(|id| Destination::ChannelId(ChannelId(id)))
                .ok_or_else(|| RequestError::invalid_param("to", "Invalid data type for channel")),
            Some(Value::String(name)) => Ok(Destination::ChannelName(name)),
            Some(Value::Array(items)) if items.is_empty() => Ok(Destination::SenderDefault),
            Some(Value::Array(items)) => {
                if items.len() != 1 {
                    return Err(RequestError::invalid_param(
                        "to",
                        "Expected exactly one channel",
                    ));
                }
                match &items[0] {
                    Value::Number(n) => n
                        .as_i64()
                        .map(|id| Destination::ChannelId(ChannelId(id)))
                        .ok_or_else(|| {
                            RequestError::invalid_param("to", "Invalid data type for channel")
                        }),
                    Value::String(name) => Ok(Destination::ChannelName(name.clone())),
                    _ => Err(RequestError::invalid_param(
                        "to",
                        "Invalid data type for channel",
                    )),
                }
            }
            Some(_) => Err(RequestError::invalid_param(
                "to",
                "Invalid data type for channel",
            )),
            None => Ok(Destination::ChannelName(raw.to_owned())),
        },
        MessageKind::Direct => {
            let operands = match parsed {
                Some(Value::Array(items)) => {
                    let ids: Option<Vec<UserOperand>> = items
                        .iter()
                        .map(|v| v.as_i64().map(UserOperand::Id))
                        .collect();
                    let emails: Option<Vec<UserOperand>> = items
                        .iter()
                        .map(|v| v.as_str().map(|s| UserOperand::Email(s.to_owned())))
                        .collect();
                    match (ids, emails) {
                        (Some(ids), _) => ids,
                        (None, Some(emails)) => emails,
                        (None, None) if items.iter().all(|v| v.is_i64() || v.is_string()) => {
                            return Err(RequestError::invalid_param(
                                "to",
                                "Recipient lists may contain emails or user IDs, but not both.",
                            ))
                        }
                        _ => {
                            return Err(RequestError::invalid_param(
                                "to",
                                "Invalid data type for recipients",
                            ))
                        }
                    }
                }
                Some(Value::Number(n)) => vec![UserOperand::Id(n.as_i64().unwrap_or_default())],
                Some(Value::String(s)) => split_emails(&s),
                Some(_) => {
                    return Err(RequestError::invalid_param(
                        "to",
                        "Invalid data type for recipients",
                    ))
                }
                None => split_emails(raw),
            };
            limits::check_list("to", operands.len())?;
            Ok(Destination::Users(operands))
        }
    }
}

fn split_emails(raw: &str) -> Vec<UserOperand> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| UserOperand::Email(s.to_owned()))
        .collect()
}

params! {
    /// `POST /messages`.
    pub struct SendParams {
        r#type: String,
        to: Option<String>,
        content: String,
        topic: Option<String>,
        subject: Option<String>,
        queue_id: Option<String>,
        local_id: Option<String>,
        read_by_sender: Option<bool>,
    }
}

/// POST /messages — send a channel or direct message.
pub async fn send(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    request: HttpRequest,
    Params(p): Params<SendParams>,
) -> ApiResult<Success> {
    let kind = MessageKind::parse(&p.r#type)?;
    if p.queue_id.is_some() && p.local_id.is_none() {
        return Err(ApiError(RequestError::missing_param("local_id")));
    }
    let user_agent = request
        .headers()
        .get(actix_web::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok());
    let message = SendMessage {
        kind,
        to: destination(kind, p.to.as_deref())?,
        topic: p.topic.or(p.subject),
        content: p.content,
        read_by_sender: p.read_by_sender,
        client: client_name(user_agent),
        local_echo: p.queue_id.zip(p.local_id),
    };
    let sent = messages_send::do_send_message(&ctx, me, message).await?;
    Ok(Success::from_fields(sent))
}

/// `GET /messages`: a range around an anchor, or exactly `message_ids`.
#[derive(Debug)]
pub enum GetMessagesParams {
    /// Anchor, range and narrow.
    Range(MessageQuery),
    /// These messages, filtered by the narrow.
    Ids {
        /// The messages.
        ids: Vec<MessageId>,
        /// The narrow.
        narrow: Vec<NarrowTerm>,
        /// Output options.
        presentation: Presentation,
    },
}

fn narrow_param(p: &mut ParamMap, name: &str) -> Result<Vec<NarrowTerm>, RequestError> {
    match p.take::<Option<Json<Value>>>(name)? {
        Some(Json(value)) => parse_narrow(&value, name),
        None => Ok(Vec::new()),
    }
}

fn presentation(p: &mut ParamMap) -> Result<Presentation, RequestError> {
    Ok(Presentation {
        apply_markdown: p.take::<Option<bool>>("apply_markdown")?.unwrap_or(true),
        client_gravatar: p.take::<Option<bool>>("client_gravatar")?.unwrap_or(true),
        allow_empty_topic_name: p
            .take::<Option<bool>>("allow_empty_topic_name")?
            .unwrap_or(false),
    })
}

/// The anchor, range and narrow shared by `GET /messages` and `POST /messages/flags/narrow`
/// (which requires the range).
pub fn message_query(p: &mut ParamMap, range_required: bool) -> Result<MessageQuery, RequestError> {
    let first_unread = p
        .take::<Option<bool>>("use_first_unread_anchor")?
        .unwrap_or(false);
    // As in the reference, `use_first_unread_anchor` wins over any `anchor` (zulip-term sends
    // `anchor=0` beside it).
    let anchor = match p.take::<Option<String>>("anchor")? {
        _ if first_unread => Anchor::FirstUnread,
        Some(raw) => Anchor::parse(&raw)?,
        None => return Err(RequestError::missing_param("anchor")),
    };
    let (num_before, num_after) = if range_required {
        (p.take::<i64>("num_before")?, p.take::<i64>("num_after")?)
    } else {
        (
            p.take::<Option<i64>>("num_before")?.unwrap_or(0),
            p.take::<Option<i64>>("num_after")?.unwrap_or(0),
        )
    };
    Ok(MessageQuery {
        anchor,
        num_before,
        num_after,
        include_anchor: p.take::<Option<bool>>("include_anchor")?.unwrap_or(true),
        narrow: narrow_param(p, "narrow")?,
        presentation: presentation(p)?,
    })
}

impl params::FromParams for GetMessagesParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        if let Some(Json(ids)) = p.take::<Option<Json<Vec<MessageId>>>>("message_ids")? {
            const RANGE: [&str; 5] = [
                "anchor",
                "num_before",
                "num_after",
                "include_anchor",
                "use_first_unread_anchor",
            ];
            if RANGE.iter().any(|name| p.raw(name).is_some()) {
                return Err(RequestError::bad_request(
                    "Unsupported parameter combination: num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor",
                ));
            }
            return Ok(GetMessagesParams::Ids {
                ids,
                narrow: narrow_param(p, "narrow")?,
                presentation: presentation(p)?,
            });
        }
        Ok(GetMessagesParams::Range(message_query(p, false)?))
    }
}

/// GET /messages — a page of messages around an anchor, filtered by a narrow.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<GetMessagesParams>,
) -> ApiResult<Success> {
    let page = match p {
        GetMessagesParams::Range(query) => messages_read::get_messages(&ctx, me, query).await?,
        GetMessagesParams::Ids {
            ids,
            narrow,
            presentation,
        } => messages_read::get_messages_by_ids(&ctx, me, ids, narrow, presentation).await?,
    };
    Ok(Success::written(page))
}

/// `GET /messages/{message_id}`.
#[derive(Debug)]
pub struct GetMessageParams {
    presentation: Presentation,
}

impl params::FromParams for GetMessageParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let mut presentation = presentation(p)?;
        presentation.client_gravatar = true;
        Ok(GetMessageParams { presentation })
    }
}

/// The message ID of a path.
pub fn message_id(raw: &str) -> Result<MessageId, ApiError> {
    path_param::<i64>("message_id", raw).map(MessageId)
}

/// GET /messages/{message_id} — one message and its Markdown.
pub async fn get_one(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<GetMessageParams>,
) -> ApiResult<Success> {
    let found = messages_read::get_message(&ctx, me, message_id(&path)?, p.presentation).await?;
    Ok(Success::from_fields(found))
}

params! {
    /// `POST /messages/render`.
    pub struct RenderParams {
        content: String,
    }
}

/// POST /messages/render — preview a message's HTML.
pub async fn render(
    ctx: web::Data<Context>,
    Auth(_): Auth,
    Params(p): Params<RenderParams>,
) -> ApiResult<Success> {
    let rendered = parley_actions::rendering::preview(&ctx, p.content).await?;
    Ok(Success::empty().with("rendered", rendered))
}

params! {
    /// `DELETE /messages/{message_id}`.
    pub struct DeleteParams {}
}

/// DELETE /messages/{message_id} — delete a message.
pub async fn delete(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<DeleteParams>,
) -> ApiResult<Success> {
    parley_actions::messages_delete::delete_message(&ctx, me, message_id(&path)?).await?;
    Ok(Success::empty())
}

params! {
    /// `GET /users/me/{stream_id}/topics`.
    pub struct TopicsParams {
        allow_empty_topic_name: bool = false,
    }
}

/// GET /users/me/{stream_id}/topics — a channel's topics, newest first.
pub async fn topics(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<TopicsParams>,
) -> ApiResult<Success> {
    let channel = ChannelId(path_param::<i64>("stream_id", &path)?);
    let topics = messages_read::channel_topics(&ctx, me, channel, p.allow_empty_topic_name).await?;
    Ok(Success::empty().with("topics", topics))
}

/// `PATCH /messages/{message_id}`.
#[derive(Debug)]
pub struct EditParams {
    edit: MessageEdit,
}

impl params::FromParams for EditParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let topic = p.take::<Option<String>>("topic")?;
        let subject = p.take::<Option<String>>("subject")?;
        let mode = p.take::<Option<String>>("propagate_mode")?;
        Ok(EditParams {
            edit: MessageEdit {
                topic: topic.or(subject),
                channel_id: p.take::<Option<i64>>("stream_id")?.map(ChannelId),
                content: p.take("content")?,
                propagate_mode: match mode {
                    Some(raw) => PropagateMode::parse(raw.trim_matches('"'))?,
                    None => PropagateMode::ChangeOne,
                },
                send_notification_to_old_thread: p
                    .take::<Option<bool>>("send_notification_to_old_thread")?
                    .unwrap_or(false),
                send_notification_to_new_thread: p
                    .take::<Option<bool>>("send_notification_to_new_thread")?
                    .unwrap_or(true),
                prev_content_sha256: p.take("prev_content_sha256")?,
            },
        })
    }
}

/// PATCH /messages/{message_id} — edit content, move, resolve or unresolve.
pub async fn edit(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<EditParams>,
) -> ApiResult<Success> {
    let result = messages_edit::update_message(&ctx, me, message_id(&path)?, p.edit).await?;
    Ok(Success::from_fields(result))
}

params! {
    /// `GET /messages/{message_id}/history`.
    pub struct HistoryParams {
        allow_empty_topic_name: bool = false,
    }
}

/// GET /messages/{message_id}/history — the message after each edit, oldest first.
pub async fn history(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<HistoryParams>,
) -> ApiResult<Success> {
    let history =
        messages_edit::message_history(&ctx, me, message_id(&path)?, p.allow_empty_topic_name)
            .await?;
    Ok(Success::empty().with("message_history", history))
}

/// `GET /messages/matches_narrow`.
#[derive(Debug)]
pub struct MatchesNarrowParams {
    msg_ids: Vec<MessageId>,
    narrow: Vec<NarrowTerm>,
}

impl params::FromParams for MatchesNarrowParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let msg_ids = p.take::<Json<Vec<MessageId>>>("msg_ids")?.0;
        let Json(narrow) = p.take::<Json<Value>>("narrow")?;
        Ok(MatchesNarrowParams {
            msg_ids,
            narrow: parse_narrow(&narrow, "narrow")?,
        })
    }
}

/// GET /messages/matches_narrow — which of some messages match a narrow.
pub async fn matches_narrow(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<MatchesNarrowParams>,
) -> ApiResult<Success> {
    let found = messages_read::matches_narrow(&ctx, me, p.msg_ids, p.narrow).await?;
    Ok(Success::empty().with("messages", found))
}

params! {
    /// `GET /messages/{message_id}/read_receipts`.
    pub struct ReadReceiptsParams {}
}

/// GET /messages/{message_id}/read_receipts — who has read a message.
pub async fn read_receipts(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<ReadReceiptsParams>,
) -> ApiResult<Success> {
    let ids = messages_read::read_receipts(&ctx, me, message_id(&path)?).await?;
    Ok(Success::empty().with("user_ids", ids))
}

params! {
    /// `POST /streams/{stream_id}/delete_topic`.
    pub struct DeleteTopicParams {
        topic_name: String,
    }
}

/// POST /streams/{stream_id}/delete_topic — administrators delete a topic.
pub async fn delete_topic(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<DeleteTopicParams>,
) -> ApiResult<Success> {
    let channel = ChannelId(path_param::<i64>("stream_id", &path)?);
    let complete =
        parley_actions::messages_delete::delete_topic(&ctx, me, channel, p.topic_name).await?;
    Ok(Success::empty().with("complete", complete))
}

params! {
    /// `POST /messages/{message_id}/report`.
    pub struct ReportParams {
        report_type: String,
        description: Option<String>,
    }
}

/// POST /messages/{message_id}/report — ask the moderators to review a message.
pub async fn report(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<ReportParams>,
) -> ApiResult<Success> {
    let report_type = parley_actions::moderation::ReportType::parse(&p.report_type)?;
    parley_actions::moderation::report_message(
        &ctx,
        me,
        message_id(&path)?,
        report_type,
        p.description.unwrap_or_default(),
    )
    .await?;
    Ok(Success::empty())
}

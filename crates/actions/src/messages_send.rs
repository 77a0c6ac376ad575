//! Sending messages: to a channel topic, or directly to users.

use crate::access::access_channel_by_name;
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::{self, messages::MessageAudience};
use crate::policy::{self, Policy};
use crate::publish::Events;
use crate::rendering;
use crate::time::now;
use parley_domain::access::can_access_channel_content;
use parley_domain::channel::{Channel, TopicsPolicy};
use parley_domain::message::{
    self, default_read_by_sender, dm_key, flags, normalize_content, normalize_topic,
    EMPTY_TOPIC_DISPLAY_NAME, WILDCARD_MENTION_THRESHOLD,
};
use parley_domain::narrow::UserOperand;
use parley_domain::user::User;
use parley_domain::{ChannelId, ErrorCode, MessageId, RequestError, UserId};
use parley_storage::messages::{self, NewMessage};
use parley_storage::{channels, reactions, subscriptions, users, DbConn};
use std::collections::BTreeSet;

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

fn not_authorized(channel: &str) -> ActionError {
    RequestError::bad_request(format!("Not authorized to send to channel '{channel}'")).into()
}

/// Finds the channel of a message: missing and invisible channels both read as missing.
fn channel_for_send(
    conn: &mut DbConn,
    policy: &Policy,
    sender: &User,
    to: &Destination,
) -> ActionResult<(Channel, bool)> {
    match to {
        Destination::ChannelName(name) => {
            let name = parley_domain::channel::check_channel_name(name, "to")?;
            access_channel_by_name(conn, policy, sender, &name)?.ok_or_else(|| {
                RequestError::new(
                    ErrorCode::StreamDoesNotExist,
                    format!("Channel '{name}' does not exist"),
                )
                .with("stream", name.as_str())
                .into()
            })
        }
        Destination::ChannelId(id) => {
            match crate::access::access_channel_by_id(conn, policy, sender, *id) {
                Ok(found) => Ok(found),
                Err(ActionError::Request(_)) => Err(RequestError::new(
                    ErrorCode::StreamDoesNotExist,
                    format!("Channel with ID '{id}' does not exist"),
                )
                .with("stream_id", id.0)
                .into()),
                Err(other) => Err(other),
            }
        }
        Destination::SenderDefault => {
            let default = match sender.is_bot() {
                true => parley_storage::bots::get(conn, sender.id)?.default_sending_stream,
                false => None,
            };
            let id = default.ok_or_else(|| RequestError::bad_request("Missing channel"))?;
            channel_for_send(conn, policy, sender, &Destination::ChannelId(id))
        }
        Destination::Users(_) => Err(RequestError::bad_request("Invalid message type").into()),
    }
}

/// The effective empty-topic policy of a channel.
fn topics_policy(policy: &Policy, channel: &Channel) -> TopicsPolicy {
    match channel.topics_policy {
        TopicsPolicy::Inherit => TopicsPolicy::from_name(&policy.realm.topics_policy)
            .unwrap_or(TopicsPolicy::AllowEmptyTopic),
        other => other,
    }
}

/// Checks the empty-topic rules of a channel for a topic.
pub(crate) fn check_topic_policy(
    policy: &Policy,
    channel: &Channel,
    topic: &str,
) -> Result<(), RequestError> {
    match topics_policy(policy, channel) {
        TopicsPolicy::DisableEmptyTopic if topic.is_empty() => {
            Err(RequestError::bad_request(format!(
            "Sending messages to the {EMPTY_TOPIC_DISPLAY_NAME} is not allowed in this channel."
        )))
        }
        TopicsPolicy::EmptyTopicOnly if !topic.is_empty() => Err(RequestError::bad_request(
            format!("Only the {EMPTY_TOPIC_DISPLAY_NAME} topic is allowed in this channel."),
        )),
        _ => Ok(()),
    }
}

/// Resolves direct-message recipients; every one must be an active user.
fn dm_recipients(
    ctx: &Context,
    conn: &mut DbConn,
    operands: &[UserOperand],
) -> ActionResult<Vec<User>> {
    if operands.is_empty() {
        return Err(RequestError::bad_request("Message must have recipients").into());
    }
    let mut out: Vec<User> = Vec::new();
    for operand in operands {
        let user = match operand {
            UserOperand::Id(id) => users::by_id(conn, UserId(*id))?
                .ok_or_else(|| RequestError::bad_request(format!("Invalid user ID {id}")))?,
            UserOperand::Email(email) => {
                crate::auth::user_by_any_email(conn, email, &ctx.realm.host)?
                    .map(|(u, _)| u)
                    .ok_or_else(|| RequestError::bad_request(format!("Invalid email '{email}'")))?
            }
        };
        if !user.is_active {
            return Err(RequestError::bad_request(format!(
                "'{}' is no longer using Zulip.",
                user.api_email(&ctx.realm.host)
            ))
            .into());
        }
        if !out.iter().any(|u| u.id == user.id) {
            out.push(user);
        }
    }
    Ok(out)
}

/// The users a message mentions by name or through user groups, once the sender's right to
/// mention each group (`can_mention_group`) is checked. Silent mentions reach nobody.
pub(crate) fn mentioned_users(
    conn: &mut DbConn,
    policy: &Policy,
    sender: &User,
    rendered: &parley_markdown::Rendered,
) -> ActionResult<BTreeSet<UserId>> {
    let mut mentioned: BTreeSet<UserId> = rendered
        .mentioned_user_ids
        .iter()
        .map(|id| UserId(*id))
        .collect();
    let groups: Vec<i64> = rendered.mentioned_group_ids.iter().copied().collect();
    if !groups.is_empty() {
        crate::user_groups::check_can_mention_groups(conn, policy, sender, &groups)?;
        mentioned.extend(crate::user_groups::group_mention_user_ids(
            conn, policy, &groups,
        )?);
    }
    Ok(mentioned)
}

/// Whether the sender may use a wildcard mention reaching `count` people.
fn check_wildcard(
    policy: &Policy,
    sender: &User,
    count: usize,
    code: ErrorCode,
    msg: &str,
) -> Result<(), RequestError> {
    if count <= WILDCARD_MENTION_THRESHOLD
        || policy
            .groups
            .setting_contains(&policy.realm.can_mention_many_users_group, sender)
    {
        Ok(())
    } else {
        Err(RequestError::new(code, msg))
    }
}

/// `POST /messages`: sends a message in one transaction (the message row and one row per
/// recipient, inserted in batches).
pub async fn do_send_message(
    ctx: &Context,
    sender: User,
    request: SendMessage,
) -> ActionResult<Sent> {
    let content = normalize_content(&request.content)?;
    // Rendering reads the organization's data but writes nothing: it runs before the write
    // transaction, so that SQLite's one writer is never held while Markdown is rendered.
    let rendered = {
        let (url, camo, content) = (ctx.realm.url.clone(), ctx.camo.clone(), content.clone());
        ctx.run(move |conn| {
            Ok::<_, ActionError>(rendering::render_message(
                conn,
                &url,
                camo.as_ref(),
                &content,
            ))
        })
        .await?
    };
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        send_rendered_in(
            &ctx2,
            conn,
            events,
            &sender,
            &request,
            &content,
            Some(rendered),
        )
    })
    .await
    .inspect(|_| metrics::counter!("parley_messages_sent_total").increment(1))
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
    send_rendered_in(ctx, conn, events, sender, request, content, None)
}

/// [`send_in`] with the content already rendered (`None`: rendered here).
fn send_rendered_in(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    sender: &User,
    request: &SendMessage,
    content: &str,
    rendered: Option<parley_markdown::Rendered>,
) -> ActionResult<Sent> {
    let policy = policy::load(conn)?;
    let read_by_sender = request
        .read_by_sender
        .unwrap_or_else(|| default_read_by_sender(&request.client));
    let sender_bits = if read_by_sender { flags::READ } else { 0 };
    let now = now();
    let mut automatic_new_visibility_policy = None;
    let id = match request.kind {
        message::MessageKind::Channel => {
            let (channel, subscribed) = channel_for_send(conn, &policy, sender, &request.to)?;
            if channel.is_archived
                || !can_access_channel_content(sender, &channel, subscribed, &policy.groups)
            {
                return Err(not_authorized(&channel.name));
            }
            if !policy
                .groups
                .setting_contains(&channel.permissions.can_send_message_group, sender)
            {
                return Err(RequestError::bad_request(
                    "You do not have permission to post in this channel.",
                )
                .into());
            }
            let raw_topic = request
                .topic
                .as_deref()
                .ok_or_else(|| RequestError::bad_request("Missing topic"))?;
            let topic = normalize_topic(raw_topic, "topic")?;
            check_topic_policy(&policy, &channel, &topic)?;
            let starts_topic = !messages::topic_exists(conn, channel.id, &topic)?;
            let rendered = rendered.unwrap_or_else(|| {
                rendering::render_message(conn, &ctx.realm.url, ctx.camo.as_ref(), content)
            });
            let mentioned = mentioned_users(conn, &policy, sender, &rendered)?;
            let recipients = subscriptions::active_recipients(conn, channel.id)?;
            if rendered.stream_wildcard {
                check_wildcard(
                    &policy,
                    sender,
                    recipients.len(),
                    ErrorCode::StreamWildcardMentionNotAllowed,
                    "You do not have permission to use channel wildcard mentions in this channel.",
                )?;
            }
            let participants: BTreeSet<UserId> = if rendered.topic_wildcard {
                let key = topic.to_lowercase();
                let mut set: BTreeSet<UserId> = messages::topic_senders(conn, channel.id, &topic)?
                    .into_iter()
                    .collect();
                set.extend(reactions::reactors_in_topic(conn, channel.id.0, &key)?);
                set.insert(sender.id);
                check_wildcard(
                    &policy,
                    sender,
                    set.len(),
                    ErrorCode::TopicWildcardMentionNotAllowed,
                    "You do not have permission to use topic wildcard mentions in this topic.",
                )?;
                set
            } else {
                BTreeSet::new()
            };
            let mut rows: Vec<(UserId, i64)> = recipients
                .iter()
                .map(|user| {
                    let mut bits = if *user == sender.id { sender_bits } else { 0 };
                    if mentioned.contains(user) {
                        bits |= flags::MENTIONED;
                    }
                    if rendered.stream_wildcard {
                        bits |= flags::STREAM_WILDCARD_MENTIONED;
                    }
                    if rendered.topic_wildcard && participants.contains(user) {
                        bits |= flags::TOPIC_WILDCARD_MENTIONED;
                    }
                    (*user, bits)
                })
                .collect();
            // The sender keeps a copy even when not subscribed, as in the reference.
            if !rows.iter().any(|(user, _)| *user == sender.id) {
                rows.push((sender.id, sender_bits));
            }
            crate::alert_words::flag_alerted(conn, content, sender.id, &mut rows)?;
            crate::muted_users::mark_read_for_muters(conn, sender.id, &mut rows)?;
            let new = NewMessage {
                sender_id: sender.id,
                channel_id: Some(channel.id),
                topic,
                dm_key: None,
                dm_group_id: None,
                recipient_user_id: None,
                content: content.to_owned(),
                rendered_content: rendered.html,
                date_sent: now,
                has_link: rendered.has_link,
                has_image: rendered.has_image,
                has_attachment: rendered.has_attachment,
                client: request.client.clone(),
            };
            let id = messages::insert(conn, &new, &rows)?;
            channels::set_first_message(conn, channel.id, id.0)?;
            crate::uploads::claim_attachments(conn, events, sender, &ctx.realm.url, id, content)?;
            events.push(notify::messages::message_sent(
                ctx,
                conn,
                sender,
                id,
                MessageAudience {
                    rows: &rows,
                    channel_name: Some(channel.name.clone()),
                    public_channel: channel.is_public(),
                    local_echo: request.local_echo.clone(),
                },
            )?);
            let mentioned_ids: Vec<UserId> = rows
                .iter()
                .filter(|(_, bits)| bits & flags::MENTIONED != 0)
                .map(|(user, _)| *user)
                .collect();
            let mentioned = users::by_ids(conn, &mentioned_ids)?;
            automatic_new_visibility_policy = crate::user_topics::apply_after_send(
                conn,
                events,
                sender,
                channel.id,
                &new.topic,
                starts_topic,
                &mentioned,
            )?;
            id
        }
        message::MessageKind::Direct => {
            let Destination::Users(operands) = &request.to else {
                return Err(RequestError::bad_request("Invalid data type for recipients").into());
            };
            let recipients = dm_recipients(ctx, conn, operands)?;
            let mut participants: Vec<UserId> = recipients.iter().map(|u| u.id).collect();
            participants.push(sender.id);
            let key = dm_key(&participants);
            let unique = parley_domain::message::dm_participants(&key);
            let (group, other) = match unique.len() {
                1 => (None, Some(sender.id)),
                2 => (None, unique.iter().copied().find(|u| *u != sender.id)),
                _ => (Some(messages::dm_group(conn, &key)?), None),
            };
            let rendered = rendered.unwrap_or_else(|| {
                rendering::render_message(conn, &ctx.realm.url, ctx.camo.as_ref(), content)
            });
            let mentioned = mentioned_users(conn, &policy, sender, &rendered)?;
            let mut rows: Vec<(UserId, i64)> = unique
                .iter()
                .map(|user| {
                    let mut bits = flags::IS_PRIVATE;
                    if *user == sender.id {
                        bits |= sender_bits;
                    }
                    if mentioned.contains(user) {
                        bits |= flags::MENTIONED;
                    }
                    if rendered.stream_wildcard {
                        bits |= flags::STREAM_WILDCARD_MENTIONED;
                    }
                    (*user, bits)
                })
                .collect();
            crate::alert_words::flag_alerted(conn, content, sender.id, &mut rows)?;
            crate::muted_users::mark_read_for_muters(conn, sender.id, &mut rows)?;
            let new = NewMessage {
                sender_id: sender.id,
                channel_id: None,
                topic: String::new(),
                dm_key: Some(key),
                dm_group_id: group,
                recipient_user_id: other,
                content: content.to_owned(),
                rendered_content: rendered.html,
                date_sent: now,
                has_link: rendered.has_link,
                has_image: rendered.has_image,
                has_attachment: rendered.has_attachment,
                client: request.client.clone(),
            };
            let id = messages::insert(conn, &new, &rows)?;
            crate::uploads::claim_attachments(conn, events, sender, &ctx.realm.url, id, content)?;
            events.push(notify::messages::message_sent(
                ctx,
                conn,
                sender,
                id,
                MessageAudience {
                    rows: &rows,
                    channel_name: None,
                    public_channel: false,
                    local_echo: request.local_echo.clone(),
                },
            )?);
            id
        }
    };
    Ok(Sent {
        id,
        automatic_new_visibility_policy,
    })
}

//! The first step of a send: every check and everything a send reads but does not write (the
//! channel and the sender's right to post, the recipients and their flags, mentions, alert
//! words, mutes). On SQLite it runs on a reading connection before the writing turn, so the
//! one writer spends its turn on the writes only; [`super::commit`] then checks that nothing it
//! read changed meanwhile.

use crate::access::access_channel_for_send;
use crate::context::Context;
use crate::error::ActionResult;
use crate::policy::{self, Policy};
use crate::rendering;
use crate::user_topics::{sender_topic_rules, SenderTopicRules};
use parley_domain::access::can_access_channel_content;
use parley_domain::channel::{Channel, TopicsPolicy};
use parley_domain::message::{
    self, default_read_by_sender, dm_key, flags, normalize_topic, EMPTY_TOPIC_DISPLAY_NAME,
    WILDCARD_MENTION_THRESHOLD,
};
use parley_domain::narrow::UserOperand;
use parley_domain::user::User;
use parley_domain::{ChannelId, ErrorCode, RequestError, UserId};
use parley_markdown::Rendered;
use parley_storage::channels::ChannelKey;
use parley_storage::messages::TopicForSend;
use parley_storage::spans::SendHold;
use parley_storage::subscriptions::Subscription;
use parley_storage::{users, DbConn};
use std::collections::{BTreeSet, HashSet};

use super::{Destination, SendMessage};

/// What the reading step left for the writing transaction.
pub(super) enum Reading {
    /// Checked and read outside the transaction, when the send's inputs stood at `mark`
    /// (`realm_cache::inputs_mark`).
    Outside { prepared: Box<Prepared>, mark: u64 },
    /// To be checked and read in the transaction, with the content rendered if it was.
    Inside(Option<Rendered>),
}

/// What a send checked and read, ready to be written.
pub(super) struct Prepared {
    /// The policy the checks used.
    pub policy: std::sync::Arc<Policy>,
    /// The rendered content.
    pub rendered: Rendered,
    /// Everyone who receives the message and their flags, but for topic wildcard mentions,
    /// which follow the topic's senders and are added when written.
    pub rows: Vec<(UserId, i64)>,
    /// Where it goes.
    pub target: Target,
}

/// Where a prepared message goes.
pub(super) enum Target {
    /// A channel topic.
    Channel {
        channel: Box<Channel>,
        topic: String,
        /// Users with an open span of the channel (`spans::open_users`).
        spanned: HashSet<UserId>,
        /// The users mentioned, for the topic visibility rules after the send.
        mentioned: Vec<User>,
        /// The sender's automatic topic policy rules.
        rules: Option<SenderTopicRules>,
        /// The topic's state, when read with the recipients (PostgreSQL), else read when
        /// written.
        topic_before: Option<TopicForSend>,
    },
    /// A direct conversation.
    Direct {
        /// Sorted participant IDs.
        key: String,
        /// Everyone in the conversation, sender included.
        participants: Vec<User>,
    },
}

/// Checks `request` and reads what writing it needs. `rendered` is the content rendered
/// beforehand, if it was.
pub(super) fn prepare(
    ctx: &Context,
    conn: &mut DbConn,
    sender: &User,
    request: &SendMessage,
    content: &str,
    rendered: Option<Rendered>,
) -> ActionResult<Prepared> {
    let policy = policy::load(conn)?;
    let read_by_sender = request
        .read_by_sender
        .unwrap_or_else(|| default_read_by_sender(&request.client));
    let sender_bits = if read_by_sender { flags::READ } else { 0 };
    let render = |conn: &mut DbConn, rendered: Option<Rendered>| {
        rendered.unwrap_or_else(|| {
            rendering::render_message(conn, &ctx.realm.url, ctx.camo.as_ref(), content)
        })
    };
    let (rendered, mut rows, target) = match request.kind {
        message::MessageKind::Channel => {
            // Rendered before the channel's locks are taken, so that they are not held for it.
            let rendered = render(conn, rendered);
            let (channel, topic, channel_muted, hold) =
                check_channel_send(conn, &policy, sender, request)?;
            let mentioned = mentioned_users(conn, &policy, sender, &rendered)?;
            // The send's recipient rule (active subscribers who are active users) is what the
            // open spans hold (`storage::spans`).
            let (recipients, topic_before) =
                crate::realm_cache::recipients_for_send(conn, &hold, &topic, sender.id)?;
            let spanned: HashSet<UserId> = recipients.iter().copied().collect();
            if rendered.stream_wildcard {
                check_wildcard(
                    &policy,
                    sender,
                    recipients.len(),
                    ErrorCode::StreamWildcardMentionNotAllowed,
                    "You do not have permission to use channel wildcard mentions in this channel.",
                )?;
            }
            let mut rows = recipient_rows(&recipients, sender, sender_bits, &mentioned, &rendered);
            // The sender keeps a copy even when not subscribed, as in the reference.
            if !rows.iter().any(|(user, _)| *user == sender.id) {
                rows.push((sender.id, sender_bits));
            }
            crate::alert_words::flag_alerted(conn, content, sender.id, &mut rows)?;
            let mentioned_ids: Vec<UserId> = rows
                .iter()
                .filter(|(_, bits)| bits & flags::MENTIONED != 0)
                .map(|(user, _)| *user)
                .collect();
            let target = Target::Channel {
                rules: sender_topic_rules(conn, sender, channel_muted)?,
                topic_before,
                spanned,
                mentioned: users::by_ids(conn, &mentioned_ids)?,
                channel: Box::new(channel),
                topic,
            };
            (rendered, rows, target)
        }
        message::MessageKind::Direct => {
            let Destination::Users(operands) = &request.to else {
                return Err(RequestError::bad_request("Invalid data type for recipients").into());
            };
            let mut participants = dm_recipients(ctx, conn, operands)?;
            if !participants.iter().any(|u| u.id == sender.id) {
                participants.push(sender.clone());
            }
            let ids: Vec<UserId> = participants.iter().map(|u| u.id).collect();
            let key = dm_key(&ids);
            let rendered = render(conn, rendered);
            let mentioned = mentioned_users(conn, &policy, sender, &rendered)?;
            let unique = parley_domain::message::dm_participants(&key);
            let mut rows = recipient_rows(&unique, sender, sender_bits, &mentioned, &rendered);
            for (_, bits) in rows.iter_mut() {
                *bits |= flags::IS_PRIVATE;
            }
            crate::alert_words::flag_alerted(conn, content, sender.id, &mut rows)?;
            (rendered, rows, Target::Direct { key, participants })
        }
    };
    crate::muted_users::mark_read_for_muters(conn, sender.id, &mut rows)?;
    Ok(Prepared {
        policy,
        rendered,
        rows,
        target,
    })
}

/// Each recipient's flags: the sender's own bits, mentions and `@all`.
fn recipient_rows(
    recipients: &[UserId],
    sender: &User,
    sender_bits: i64,
    mentioned: &BTreeSet<UserId>,
    rendered: &Rendered,
) -> Vec<(UserId, i64)> {
    recipients
        .iter()
        .map(|user| {
            let mut bits = if *user == sender.id { sender_bits } else { 0 };
            if mentioned.contains(user) {
                bits |= flags::MENTIONED;
            }
            if rendered.stream_wildcard {
                bits |= flags::STREAM_WILDCARD_MENTIONED;
            }
            (*user, bits)
        })
        .collect()
}

/// The channel of a channel message, its normalized topic and whether the sender muted the
/// channel, once the sender may post there, with the channel held for the send.
fn check_channel_send(
    conn: &mut DbConn,
    policy: &Policy,
    sender: &User,
    request: &SendMessage,
) -> ActionResult<(Channel, String, bool, SendHold)> {
    let (channel, subscription, hold) = channel_for_send(conn, policy, sender, &request.to)?;
    let subscribed = subscription.as_ref().is_some_and(|s| s.active);
    let muted = subscribed && subscription.is_some_and(|s| s.settings.is_muted);
    check_may_post(policy, sender, &channel, subscribed)?;
    let raw_topic = request
        .topic
        .as_deref()
        .ok_or_else(|| RequestError::bad_request("Missing topic"))?;
    let topic = normalize_topic(raw_topic, "topic")?;
    check_topic_policy(policy, &channel, &topic)?;
    Ok((channel, topic, muted, hold))
}

/// Whether `sender` may post in `channel` (messages, and typing notices): not archived, its
/// content accessible, and in its `can_send_message_group`.
pub(crate) fn check_may_post(
    policy: &Policy,
    sender: &User,
    channel: &Channel,
    subscribed: bool,
) -> Result<(), RequestError> {
    if channel.is_archived
        || !can_access_channel_content(sender, channel, subscribed, &policy.groups)
    {
        return Err(RequestError::bad_request(format!(
            "Not authorized to send to channel '{}'",
            channel.name
        )));
    }
    if !policy
        .groups
        .setting_contains(&channel.permissions.can_send_message_group, sender)
    {
        return Err(RequestError::bad_request(
            "You do not have permission to post in this channel.",
        ));
    }
    Ok(())
}

/// Finds the channel of a message and the sender's subscription to it, and holds the channel
/// for the send: missing and invisible channels both read as missing.
fn channel_for_send(
    conn: &mut DbConn,
    policy: &Policy,
    sender: &User,
    to: &Destination,
) -> ActionResult<(Channel, Option<Subscription>, SendHold)> {
    match to {
        Destination::ChannelName(name) => {
            let name = parley_domain::channel::check_channel_name(name, "to")?;
            let key = ChannelKey::Name(&name);
            access_channel_for_send(conn, policy, sender, key)?.ok_or_else(|| {
                RequestError::new(
                    ErrorCode::StreamDoesNotExist,
                    format!("Channel '{name}' does not exist"),
                )
                .with("stream", name.as_str())
                .into()
            })
        }
        Destination::ChannelId(id) => {
            let key = ChannelKey::Id(*id);
            access_channel_for_send(conn, policy, sender, key)?.ok_or_else(|| {
                RequestError::new(
                    ErrorCode::StreamDoesNotExist,
                    format!("Channel with ID '{id}' does not exist"),
                )
                .with("stream_id", id.0)
                .into()
            })
        }
        Destination::SenderDefault => {
            let default = match sender.is_bot() {
                true => parley_storage::bots::get(conn, sender.id)?.default_sending_stream,
                false => None,
            };
            let id: ChannelId =
                default.ok_or_else(|| RequestError::bad_request("Missing channel"))?;
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
    rendered: &Rendered,
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
pub(super) fn check_wildcard(
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

//! Topic visibility: muting, unmuting and following topics, by hand (`POST /user_topics`) and
//! automatically when sending or being mentioned.

use crate::access::access_channel_by_id;
use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::topics::{muted_topics_changed, user_topic_changed};
use crate::policy;
use crate::publish::Events;
use crate::time::now;
use parley_domain::message::normalize_topic;
use parley_domain::user::User;
use parley_domain::user_topic::{self, SendContext, VisibilityPolicy};
use parley_domain::{ChannelId, RequestError, UserId};
use parley_storage::{channels, user_topics, DbConn};
use parley_wire::personal::{MutedTopic, UserTopic as WireUserTopic};
use std::collections::HashMap;

/// Stores a policy and records its events: `user_topic`, and `muted_topics` when muting is
/// involved.
fn set_policy(
    conn: &mut DbConn,
    events: &mut Events,
    user: UserId,
    channel: ChannelId,
    topic: &str,
    old: VisibilityPolicy,
    new: VisibilityPolicy,
) -> ActionResult<()> {
    let now = now();
    user_topics::set(conn, user, channel, topic, new.code(), now)?;
    events.push(user_topic_changed(user, channel, topic, new.code(), now));
    if old == VisibilityPolicy::Muted || new == VisibilityPolicy::Muted {
        let all = user_topics::of_user(conn, user)?;
        let ids: Vec<ChannelId> = all.iter().map(|t| ChannelId(t.channel_id)).collect();
        let names: HashMap<i64, String> = channels::by_ids(conn, &ids)?
            .into_iter()
            .map(|c| (c.id.0, c.name))
            .collect();
        let muted = all
            .iter()
            .filter(|t| t.visibility_policy == VisibilityPolicy::Muted.code())
            .filter_map(|t| names.get(&t.channel_id).map(|n| (n.clone(), t)))
            .collect();
        events.push(muted_topics_changed(user, muted));
    }
    Ok(())
}

fn current(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    topic: &str,
) -> ActionResult<VisibilityPolicy> {
    Ok(user_topics::for_topic(conn, &[user], channel, topic)?
        .first()
        .and_then(|t| VisibilityPolicy::from_code(t.visibility_policy))
        .unwrap_or(VisibilityPolicy::Inherit))
}

/// `POST /user_topics`: sets the caller's policy for a topic of a channel they may see.
pub async fn do_set_user_topic(
    ctx: &Context,
    user: User,
    channel: ChannelId,
    topic: String,
    policy: i64,
) -> ActionResult<()> {
    let new = VisibilityPolicy::from_code(policy).ok_or_else(|| {
        RequestError::invalid_param("visibility_policy", "Invalid visibility_policy")
    })?;
    let topic = normalize_topic(&topic, "topic")?;
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        access_channel_by_id(conn, &policy, &user, channel)?;
        let old = current(conn, user.id, channel, &topic)?;
        if old != new {
            set_policy(conn, events, user.id, channel, &topic, old, new)?;
        }
        Ok(())
    })
    .await
}

/// What decides the sender's automatic topic policy after a send: their two settings and
/// whether they muted the channel. Read before the send's writing turn (`messages_send`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SenderTopicRules {
    follow_policy: i64,
    unmute_policy: i64,
    channel_muted: bool,
}

/// What a send found of its topic before writing, read in the writing transaction with the
/// topic's first message (`storage::messages::topic_for_send`): whether the send starts the
/// topic, and the sender's policy for it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TopicBefore {
    /// No message was in the topic.
    pub starts: bool,
    /// The sender's policy for the topic.
    pub sender_policy: VisibilityPolicy,
}

/// The sender's [`SenderTopicRules`] for a channel they have muted or not; None for bots, which
/// have none.
pub(crate) fn sender_topic_rules(
    conn: &mut DbConn,
    sender: &User,
    channel_muted: bool,
) -> ActionResult<Option<SenderTopicRules>> {
    if sender.is_bot() {
        return Ok(None);
    }
    let settings = crate::realm_cache::send_settings(conn, sender)?;
    Ok(Some(SenderTopicRules {
        follow_policy: settings.follow_policy,
        unmute_policy: settings.unmute_policy,
        channel_muted,
    }))
}

/// After a channel message is stored: the sender's automatic follow/unmute policies (by
/// `rules`) and, for mentioned people, following topics where they are mentioned. Returns the
/// sender's new policy when it changed (`automatic_new_visibility_policy`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply_after_send(
    conn: &mut DbConn,
    events: &mut Events,
    sender: &User,
    channel: ChannelId,
    topic: &str,
    before: TopicBefore,
    rules: Option<SenderTopicRules>,
    mentioned: &[User],
) -> ActionResult<Option<i64>> {
    let mut sender_change = None;
    if let Some(rules) = rules {
        let old = before.sender_policy;
        let decision = user_topic::after_send(SendContext {
            follow_policy: rules.follow_policy,
            unmute_policy: rules.unmute_policy,
            starts_topic: before.starts,
            channel_muted: rules.channel_muted,
            current: old,
        });
        if let Some(new) = decision {
            set_policy(conn, events, sender.id, channel, topic, old, new)?;
            sender_change = Some(new.code());
        }
    }
    for person in mentioned
        .iter()
        .filter(|p| p.id != sender.id && !p.is_bot())
    {
        if !crate::realm_cache::send_settings(conn, person)?.follow_where_mentioned {
            continue;
        }
        let old = current(conn, person.id, channel, topic)?;
        if let Some(new) = user_topic::after_mention(old) {
            set_policy(conn, events, person.id, channel, topic, old, new)?;
        }
    }
    Ok(sender_change)
}

/// The snapshot's `user_topics` and legacy `muted_topics`.
pub(crate) fn snapshot(
    conn: &mut DbConn,
    user: UserId,
    show_topic: impl Fn(&str) -> String,
) -> ActionResult<(Vec<WireUserTopic>, Vec<MutedTopic>)> {
    let all = user_topics::of_user(conn, user)?;
    let ids: Vec<ChannelId> = all.iter().map(|t| ChannelId(t.channel_id)).collect();
    let names: HashMap<i64, String> = channels::by_ids(conn, &ids)?
        .into_iter()
        .map(|c| (c.id.0, c.name))
        .collect();
    let user_topics = all
        .iter()
        .map(|t| WireUserTopic {
            stream_id: ChannelId(t.channel_id),
            topic_name: show_topic(&t.topic),
            last_updated: t.last_updated,
            visibility_policy: t.visibility_policy,
        })
        .collect();
    let muted = all
        .iter()
        .filter(|t| t.visibility_policy == VisibilityPolicy::Muted.code())
        .filter_map(|t| {
            names
                .get(&t.channel_id)
                .map(|n| (n.clone(), show_topic(&t.topic), t.last_updated))
        })
        .collect();
    Ok((user_topics, muted))
}

/// A channel named by ID or by name, as the legacy muting endpoint accepts it.
#[derive(Debug, Clone)]
pub enum ChannelRef {
    /// By ID.
    Id(ChannelId),
    /// By name.
    Name(String),
}

/// `PATCH /users/me/subscriptions/muted_topics` (deprecated): `add` mutes a topic, `remove`
/// returns it to the channel's default; errors as the reference when nothing would change.
pub async fn do_legacy_mute(
    ctx: &Context,
    user: User,
    channel: ChannelRef,
    topic: String,
    op: String,
) -> ActionResult<()> {
    let mute = match op.as_str() {
        "add" => true,
        "remove" => false,
        _ => return Err(RequestError::invalid_param("op", "Invalid op").into()),
    };
    let topic = normalize_topic(&topic, "topic")?;
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        let channel = match &channel {
            ChannelRef::Id(id) => access_channel_by_id(conn, &policy, &user, *id)?.0,
            ChannelRef::Name(name) => {
                crate::access::access_channel_by_name(conn, &policy, &user, name)?
                    .map(|(c, _)| c)
                    .ok_or_else(|| {
                        RequestError::bad_request(format!("Channel '{name}' does not exist"))
                    })?
            }
        };
        let old = current(conn, user.id, channel.id, &topic)?;
        match (mute, old == VisibilityPolicy::Muted) {
            (true, true) => return Err(RequestError::bad_request("Topic already muted").into()),
            (false, false) => return Err(RequestError::bad_request("Topic is not muted").into()),
            _ => {}
        }
        let new = if mute {
            VisibilityPolicy::Muted
        } else {
            VisibilityPolicy::Inherit
        };
        set_policy(conn, events, user.id, channel.id, &topic, old, new)
    })
    .await
}

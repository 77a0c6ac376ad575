//! The second step of a send, inside the writing transaction: what depends on other sends (a
//! topic's first message, its senders for topic wildcard mentions), the writes and the events.

use super::prepare::{check_wildcard, prepare, Prepared, Reading, Target};
use super::{SendMessage, Sent};
use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::{self, messages::MessageAudience};
use crate::publish::Events;
use crate::time::now;
use crate::user_topics::TopicBefore;
use parley_domain::message::flags;
use parley_domain::user::User;
use parley_domain::user_topic::VisibilityPolicy;
use parley_domain::{ChannelId, ErrorCode, UserId};
use parley_storage::messages::{self, NewMessage};
use parley_storage::{channels, reactions, DbConn};
use std::collections::BTreeSet;

/// Writes a message and records its events, reading its inputs first unless the reading step
/// did and nothing changed them since (`realm_cache::inputs_unchanged_since`); when they
/// changed they are read again here, with the same rendering, so the send is checked and
/// addressed as of this transaction.
pub(super) fn commit(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    sender: &User,
    request: &SendMessage,
    content: &str,
    reading: Reading,
) -> ActionResult<Sent> {
    let prepared = match reading {
        Reading::Outside { prepared, mark } if crate::realm_cache::inputs_unchanged_since(mark) => {
            *prepared
        }
        Reading::Outside { prepared, .. } => {
            prepare(ctx, conn, sender, request, content, Some(prepared.rendered))?
        }
        Reading::Inside(rendered) => prepare(ctx, conn, sender, request, content, rendered)?,
    };
    let Prepared {
        policy,
        rendered,
        mut rows,
        target,
        ..
    } = prepared;
    let new = NewMessage {
        sender_id: sender.id,
        channel_id: None,
        topic: String::new(),
        dm_key: None,
        dm_group_id: None,
        recipient_user_id: None,
        content: content.to_owned(),
        rendered_content: rendered.html.clone(),
        date_sent: now(),
        has_link: rendered.has_link,
        has_image: rendered.has_image,
        has_attachment: rendered.has_attachment,
        client: request.client.clone(),
    };
    match &target {
        Target::Channel {
            channel,
            topic,
            spanned,
            mentioned,
            rules,
            topic_before,
        } => {
            let read = match topic_before {
                Some(read) => *read,
                None => messages::topic_for_send(conn, channel.id, topic, sender.id)?,
            };
            let before = TopicBefore {
                starts: !read.has_messages,
                sender_policy: read
                    .sender_policy
                    .and_then(VisibilityPolicy::from_code)
                    .unwrap_or(VisibilityPolicy::Inherit),
            };
            if rendered.topic_wildcard {
                let participants = topic_participants(conn, channel.id, topic, sender)?;
                check_wildcard(
                    &policy,
                    sender,
                    participants.len(),
                    ErrorCode::TopicWildcardMentionNotAllowed,
                    "You do not have permission to use topic wildcard mentions in this topic.",
                )?;
                for (user, bits) in rows.iter_mut() {
                    if participants.contains(user) {
                        *bits |= flags::TOPIC_WILDCARD_MENTIONED;
                    }
                }
            }
            let new = NewMessage {
                channel_id: Some(channel.id),
                topic: topic.clone(),
                ..new
            };
            let rows = &rows;
            let id = messages::insert_spanned(conn, &new, rows, spanned)?;
            if channel.first_message_id.is_none() {
                // Once set it never changes: only a channel's first send writes it.
                channels::set_first_message(conn, channel.id, id.0)?;
            }
            crate::uploads::claim_attachments(conn, events, sender, &ctx.realm.url, id, content)?;
            let audience = MessageAudience {
                rows,
                channel_name: Some(channel.name.clone()),
                public_channel: channel.is_public(),
                local_echo: request.local_echo.clone(),
            };
            let event =
                notify::messages::new_message_sent(ctx, conn, sender, new.row(id), &[], audience)?;
            events.push(event);
            let automatic_new_visibility_policy = crate::user_topics::apply_after_send(
                conn, events, sender, channel.id, topic, before, *rules, mentioned,
            )?;
            Ok(Sent {
                id,
                automatic_new_visibility_policy,
            })
        }
        Target::Direct { key, participants } => {
            let unique = parley_domain::message::dm_participants(key);
            let (group, other) = match unique.len() {
                1 => (None, Some(sender.id)),
                2 => (None, unique.iter().copied().find(|u| *u != sender.id)),
                _ => (Some(messages::dm_group(conn, key)?), None),
            };
            let new = NewMessage {
                dm_key: Some(key.clone()),
                dm_group_id: group,
                recipient_user_id: other,
                ..new
            };
            let rows = &rows;
            let id = messages::insert(conn, &new, rows)?;
            crate::uploads::claim_attachments(conn, events, sender, &ctx.realm.url, id, content)?;
            let audience = MessageAudience {
                rows,
                channel_name: None,
                public_channel: false,
                local_echo: request.local_echo.clone(),
            };
            let event = notify::messages::new_message_sent(
                ctx,
                conn,
                sender,
                new.row(id),
                participants,
                audience,
            )?;
            events.push(event);
            Ok(Sent {
                id,
                automatic_new_visibility_policy: None,
            })
        }
    }
}

/// Who `@topic` reaches: the topic's senders and reactors, and the sender. Read in the
/// transaction, since other sends change it.
fn topic_participants(
    conn: &mut DbConn,
    channel: ChannelId,
    topic: &str,
    sender: &User,
) -> ActionResult<BTreeSet<UserId>> {
    let mut participants: BTreeSet<UserId> = messages::topic_senders(conn, channel, topic)?
        .into_iter()
        .collect();
    participants.extend(reactions::reactors_in_topic(
        conn,
        channel.0,
        &topic.to_lowercase(),
    )?);
    participants.insert(sender.id);
    Ok(participants)
}

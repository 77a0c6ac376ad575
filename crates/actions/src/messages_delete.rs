//! Deleting messages.

use crate::access::{accessible_message, invalid_message};
use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::messages::{message_viewers, messages_deleted, DeletedFrom};
use crate::policy;
use crate::time::now;
use parley_domain::user::User;
use parley_domain::{ChannelId, MessageId, RequestError};
use parley_storage::{channels, messages};

/// Grace the reference adds to time limits, for clients whose clocks lag.
pub const TIME_LIMIT_GRACE_SECONDS: i64 = 20;

/// `DELETE /messages/{message_id}`: whoever may delete any message (organization or channel
/// setting) always may; others only their own messages, with the own-message permission, within
/// the organization's time limit.
pub async fn delete_message(ctx: &Context, user: User, id: MessageId) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        let message = accessible_message(conn, &policy, &user, id)?.ok_or_else(invalid_message)?;
        let channel = match message.row.channel_id {
            Some(c) => channels::by_id(conn, ChannelId(c))?,
            None => None,
        };
        let groups = &policy.groups;
        let any = groups.setting_contains(&policy.realm.can_delete_any_message_group, &user)
            || channel.as_ref().is_some_and(|c| {
                groups.setting_contains(&c.permissions.can_delete_any_message_group, &user)
            });
        if !any {
            let denied =
                || RequestError::bad_request("You don't have permission to delete this message");
            if message.row.sender_id != user.id.0 {
                return Err(denied().into());
            }
            let own = groups.setting_contains(&policy.realm.can_delete_own_message_group, &user)
                || channel.as_ref().is_some_and(|c| {
                    groups.setting_contains(&c.permissions.can_delete_own_message_group, &user)
                });
            if !own {
                return Err(denied().into());
            }
            if let Some(limit) = policy.realm.message_content_delete_limit_seconds {
                if now() - message.row.date_sent > limit + TIME_LIMIT_GRACE_SECONDS {
                    return Err(RequestError::bad_request(
                        "The time limit for deleting this message has passed",
                    )
                    .into());
                }
            }
        }
        let audience = message_viewers(conn, &message.row)?;
        if messages::delete(conn, &[id])? == 0 {
            return Err(RequestError::bad_request("Message already deleted").into());
        }
        let from = DeletedFrom {
            channel: message.row.channel_id.map(ChannelId),
            topic: message.row.topic.clone(),
        };
        events.push(messages_deleted(&[id], &from, audience));
        Ok(())
    })
    .await
}

/// `POST /streams/{stream_id}/delete_topic`: administrators delete the messages of a topic
/// that they may see, the newest [`parley_domain::limits::MAX_TOPIC_DELETE_BATCH`] per call.
/// Answers whether the topic is now empty (the reference's `complete`).
pub async fn delete_topic(
    ctx: &Context,
    user: User,
    channel: ChannelId,
    topic: String,
) -> ActionResult<bool> {
    if !user.role.is_admin() {
        return Err(RequestError::admin_required().into());
    }
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        let (found, _) = crate::access::access_channel_by_id(conn, &policy, &user, channel)?;
        let topic = parley_domain::message::normalize_topic(&topic, "topic_name")?;
        let history = if found.is_public() || found.history_public_to_subscribers {
            vec![channel]
        } else {
            Vec::new()
        };
        let audience = messages::Audience::new(user.id, history);
        let conditions = [
            messages::Condition::Channel(channel),
            messages::Condition::Topic(topic),
        ];
        // Newest first, one batch per request, as the reference: the client repeats the
        // request while `complete` is false, and no request holds the writer for long.
        let batch = parley_domain::limits::MAX_TOPIC_DELETE_BATCH;
        let mut found_messages = messages::page(
            conn,
            &audience,
            &conditions,
            i64::MAX,
            messages::Direction::Before,
            true,
            batch as i64 + 1,
        )?;
        let complete = found_messages.len() <= batch;
        found_messages.truncate(batch);
        let ids: Vec<MessageId> = found_messages.iter().map(|m| MessageId(m.row.id)).collect();
        let Some(first) = found_messages.first() else {
            return Ok(true);
        };
        let mut audience = message_viewers(conn, &first.row)?;
        audience.extend(messages::recipients_of_any(conn, &ids)?);
        audience.sort_unstable();
        audience.dedup();
        let from = DeletedFrom {
            channel: Some(channel),
            topic: first.row.topic.clone(),
        };
        for chunk in ids.chunks(1000) {
            messages::delete(conn, chunk)?;
            events.push(messages_deleted(chunk, &from, audience.clone()));
        }
        Ok(complete)
    })
    .await
}

//! The permission-checked lookups: each `access_*` function fetches something and checks that
//! the caller may see it, failing exactly as for something that does not exist, so that a
//! private channel or message never reveals itself. Every action that looks up a channel, a
//! message or a list of people on a caller's behalf goes through here.

use crate::error::{ActionError, ActionResult};
use crate::policy::Policy;
use parley_domain::access::{can_access_channel_content, can_access_channel_metadata};
use parley_domain::channel::Channel;
use parley_domain::user::User;
use parley_domain::{ChannelId, MessageId, RequestError, UserId};
use parley_storage::channels::ChannelKey;
use parley_storage::messages::{self, ReadMessage};
use parley_storage::spans::SendHold;
use parley_storage::subscriptions::Subscription;
use parley_storage::{channels, users, DbConn};
use std::collections::HashSet;

/// A channel the user may see, with whether they are subscribed. Channels they may not see fail
/// exactly like channels that do not exist.
pub(crate) fn access_channel_by_id(
    conn: &mut DbConn,
    policy: &Policy,
    user: &User,
    id: ChannelId,
) -> ActionResult<(Channel, bool)> {
    access_channel_and_subscription_by_id(conn, policy, user, id)
        .map(|(channel, subscription)| (channel, is_active(&subscription)))
}

/// [`access_channel_by_id`] with the user's subscription row itself (active or not), for the
/// caller that needs its settings as well (a send, which follows the sender's mute of the
/// channel), so the row is read once.
pub(crate) fn access_channel_and_subscription_by_id(
    conn: &mut DbConn,
    policy: &Policy,
    user: &User,
    id: ChannelId,
) -> ActionResult<(Channel, Option<Subscription>)> {
    let invalid = || ActionError::from(RequestError::bad_request("Invalid channel ID"));
    let (channel, subscription) =
        channels::by_id_with_subscription(conn, id, user.id)?.ok_or_else(invalid)?;
    if can_access_channel_metadata(user, &channel, is_active(&subscription), &policy.groups) {
        Ok((channel, subscription))
    } else {
        Err(invalid())
    }
}

/// Like [`access_channel_by_id`], by name; the error is `STREAM_DOES_NOT_EXIST`-free
/// ("Invalid channel name") as the reference answers lookups.
pub(crate) fn access_channel_by_name(
    conn: &mut DbConn,
    policy: &Policy,
    user: &User,
    name: &str,
) -> ActionResult<Option<(Channel, bool)>> {
    Ok(
        access_channel_and_subscription_by_name(conn, policy, user, name)?
            .map(|(channel, subscription)| (channel, is_active(&subscription))),
    )
}

/// [`access_channel_by_name`] with the subscription row, as
/// [`access_channel_and_subscription_by_id`].
pub(crate) fn access_channel_and_subscription_by_name(
    conn: &mut DbConn,
    policy: &Policy,
    user: &User,
    name: &str,
) -> ActionResult<Option<(Channel, Option<Subscription>)>> {
    let Some((channel, subscription)) = channels::by_name_with_subscription(conn, name, user.id)?
    else {
        return Ok(None);
    };
    Ok(
        can_access_channel_metadata(user, &channel, is_active(&subscription), &policy.groups)
            .then_some((channel, subscription)),
    )
}

/// The channel a message goes to, by ID or name, with the sender's subscription row, once the
/// sender may see it (as [`access_channel_and_subscription_by_id`]); `None` when it does not
/// exist or they may not see it. The send's locks are held from this read on
/// (`channels::for_send`).
pub(crate) fn access_channel_for_send(
    conn: &mut DbConn,
    policy: &Policy,
    user: &User,
    key: ChannelKey<'_>,
) -> ActionResult<Option<(Channel, Option<Subscription>, SendHold)>> {
    let Some((channel, subscription, hold)) = channels::for_send(conn, key, user.id)? else {
        return Ok(None);
    };
    Ok(
        can_access_channel_metadata(user, &channel, is_active(&subscription), &policy.groups)
            .then_some((channel, subscription, hold)),
    )
}

fn is_active(subscription: &Option<Subscription>) -> bool {
    subscription.as_ref().is_some_and(|s| s.active)
}

/// The active users with these IDs, or `BAD_REQUEST` naming the first that is not one.
pub(crate) fn users_by_ids(
    conn: &mut DbConn,
    ids: &[UserId],
    var_name: &str,
) -> ActionResult<Vec<User>> {
    let unique: Vec<UserId> = {
        let mut seen = HashSet::new();
        ids.iter().copied().filter(|id| seen.insert(*id)).collect()
    };
    let found = users::by_ids(conn, &unique)?;
    for id in &unique {
        if !found.iter().any(|u| u.id == *id && u.is_active) {
            return Err(
                RequestError::invalid_param(var_name, format!("Invalid user ID {id}")).into(),
            );
        }
    }
    Ok(found)
}

/// Whether the reader may read the whole history of a channel.
pub(crate) fn history_readable(
    policy: &Policy,
    reader: &User,
    channel: &Channel,
    subscribed: bool,
) -> bool {
    if reader.role.is_guest() && !subscribed {
        return channel.is_web_public;
    }
    if channel.is_public() {
        return true;
    }
    channel.history_public_to_subscribers
        && can_access_channel_content(reader, channel, subscribed, &policy.groups)
}

/// A message the reader may see, with their flags.
pub(crate) fn accessible_message(
    conn: &mut DbConn,
    policy: &Policy,
    reader: &User,
    id: MessageId,
) -> ActionResult<Option<ReadMessage>> {
    let Some(row) = messages::by_id(conn, id)? else {
        return Ok(None);
    };
    let own = messages::flags_of(conn, reader.id, id)?;
    if own.is_some() {
        return Ok(Some(ReadMessage { row, flags: own }));
    }
    let Some(channel_id) = row.channel_id else {
        return Ok(None);
    };
    let Some((channel, subscription)) =
        channels::by_id_with_subscription(conn, ChannelId(channel_id), reader.id)?
    else {
        return Ok(None);
    };
    let subscribed = is_active(&subscription);
    Ok(history_readable(policy, reader, &channel, subscribed)
        .then_some(ReadMessage { row, flags: None }))
}

/// The error for messages that do not exist or that the reader may not see.
pub(crate) fn invalid_message() -> ActionError {
    RequestError::bad_request("Invalid message(s)").into()
}

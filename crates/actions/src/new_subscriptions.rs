//! The rows of users joining a channel, each subscription with the next colour of its user's
//! palette. Creating a channel, signing up and subscribing all write them; none of those
//! use cases' checks or events are here.

use crate::error::ActionResult;
use parley_domain::channel::SUBSCRIPTION_COLORS;
use parley_domain::user::User;
use parley_domain::{ChannelId, UserId};
use parley_storage::{subscriptions, DbConn};

/// Subscribes users inside an existing transaction; new rows get the next palette color of each
/// user. Returns who was newly subscribed.
pub(crate) fn subscribe_in_transaction(
    conn: &mut DbConn,
    channel: ChannelId,
    users: &[User],
) -> ActionResult<Vec<UserId>> {
    let ids: Vec<UserId> = users.iter().map(|u| u.id).collect();
    let counts = subscriptions::counts_of_users(conn, &ids)?;
    let color_for = |user: UserId| {
        let n = counts.get(&user).copied().unwrap_or(0) as usize;
        SUBSCRIPTION_COLORS[n % SUBSCRIPTION_COLORS.len()].to_owned()
    };
    Ok(subscriptions::subscribe(conn, channel, &ids, &color_for)?)
}

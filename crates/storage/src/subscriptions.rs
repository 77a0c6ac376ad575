//! Subscriptions: which users receive a channel's messages, with their per-channel settings.
//! Unsubscribing keeps the row (inactive), so settings survive a later resubscription.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::subscriptions as subs;
use diesel::prelude::*;
use parley_domain::channel::SubscriptionSettings;
use parley_domain::{ChannelId, UserId};
use std::collections::HashMap;

/// One user's subscription row.
#[derive(Debug, Clone, PartialEq)]
pub struct Subscription {
    /// Subscriber.
    pub user_id: UserId,
    /// Channel.
    pub channel_id: ChannelId,
    /// False after unsubscribing.
    pub active: bool,
    /// Per-channel settings.
    pub settings: SubscriptionSettings,
}

/// A subscription row's columns, as [`columns`] selects them.
pub(crate) type Row = (
    i64,
    i64,
    bool,
    String,
    bool,
    bool,
    Option<bool>,
    Option<bool>,
    Option<bool>,
    Option<bool>,
    Option<bool>,
);

/// The columns of a [`Subscription`].
pub(crate) fn columns() -> (
    subs::user_id,
    subs::channel_id,
    subs::active,
    subs::color,
    subs::pin_to_top,
    subs::is_muted,
    subs::desktop_notifications,
    subs::audible_notifications,
    subs::push_notifications,
    subs::email_notifications,
    subs::wildcard_mentions_notify,
) {
    (
        subs::user_id,
        subs::channel_id,
        subs::active,
        subs::color,
        subs::pin_to_top,
        subs::is_muted,
        subs::desktop_notifications,
        subs::audible_notifications,
        subs::push_notifications,
        subs::email_notifications,
        subs::wildcard_mentions_notify,
    )
}

/// A [`Subscription`] from its columns.
pub(crate) fn from_row(row: Row) -> Subscription {
    let (user, channel, active, color, pin, muted, desktop, audible, push, email, wildcard) = row;
    Subscription {
        user_id: UserId(user),
        channel_id: ChannelId(channel),
        active,
        settings: SubscriptionSettings {
            color,
            pin_to_top: pin,
            is_muted: muted,
            desktop_notifications: desktop,
            audible_notifications: audible,
            push_notifications: push,
            email_notifications: email,
            wildcard_mentions_notify: wildcard,
        },
    }
}

/// Subscribes users (reactivating earlier rows, which keep their settings); `color_for` picks
/// the color of a new row. Returns the users that were not subscribed before.
pub fn subscribe(
    conn: &mut DbConn,
    channel: ChannelId,
    users: &[UserId],
    color_for: &dyn Fn(UserId) -> String,
) -> Result<Vec<UserId>, StorageError> {
    let existing: HashMap<i64, bool> = subs::table
        .filter(subs::channel_id.eq(channel.0))
        .filter(subs::user_id.eq_any(users.iter().map(|u| u.0).collect::<Vec<_>>()))
        .select((subs::user_id, subs::active))
        .load::<(i64, bool)>(conn)?
        .into_iter()
        .collect();
    let mut added = Vec::new();
    let mut reactivate = Vec::new();
    let mut fresh = Vec::new();
    for user in users {
        match existing.get(&user.0) {
            Some(true) => {}
            Some(false) => {
                reactivate.push(user.0);
                added.push(*user);
            }
            None => {
                fresh.push((
                    subs::user_id.eq(user.0),
                    subs::channel_id.eq(channel.0),
                    subs::active.eq(true),
                    subs::color.eq(color_for(*user)),
                ));
                added.push(*user);
            }
        }
    }
    if !reactivate.is_empty() {
        diesel::update(
            subs::table
                .filter(subs::channel_id.eq(channel.0))
                .filter(subs::user_id.eq_any(reactivate)),
        )
        .set(subs::active.eq(true))
        .execute(conn)?;
    }
    for chunk in fresh.chunks(500) {
        crate::on_backend!(conn, |c| diesel::insert_into(subs::table)
            .values(chunk)
            .execute(c))?;
    }
    crate::spans::sync_users(conn, channel, &added)?;
    Ok(added)
}

/// Unsubscribes users; returns those that were subscribed.
pub fn unsubscribe(
    conn: &mut DbConn,
    channel: ChannelId,
    users: &[UserId],
) -> Result<Vec<UserId>, StorageError> {
    let ids: Vec<i64> = users.iter().map(|u| u.0).collect();
    let active: Vec<i64> = subs::table
        .filter(subs::channel_id.eq(channel.0))
        .filter(subs::user_id.eq_any(&ids))
        .filter(subs::active.eq(true))
        .select(subs::user_id)
        .load(conn)?;
    diesel::update(
        subs::table
            .filter(subs::channel_id.eq(channel.0))
            .filter(subs::user_id.eq_any(&active)),
    )
    .set(subs::active.eq(false))
    .execute(conn)?;
    let removed: Vec<UserId> = active.into_iter().map(UserId).collect();
    crate::spans::sync_users(conn, channel, &removed)?;
    Ok(removed)
}

/// Active subscribers of a channel, in ID order.
pub fn subscribers(conn: &mut DbConn, channel: ChannelId) -> Result<Vec<UserId>, StorageError> {
    Ok(subs::table
        .filter(subs::channel_id.eq(channel.0))
        .filter(subs::active.eq(true))
        .order(subs::user_id)
        .select(subs::user_id)
        .load::<i64>(conn)?
        .into_iter()
        .map(UserId)
        .collect())
}

/// Active subscribers of every channel.
pub fn all_subscribers(conn: &mut DbConn) -> Result<HashMap<ChannelId, Vec<UserId>>, StorageError> {
    let mut map: HashMap<ChannelId, Vec<UserId>> = HashMap::new();
    for (channel, user) in subs::table
        .filter(subs::active.eq(true))
        .order((subs::channel_id, subs::user_id))
        .select((subs::channel_id, subs::user_id))
        .load::<(i64, i64)>(conn)?
    {
        map.entry(ChannelId(channel))
            .or_default()
            .push(UserId(user));
    }
    Ok(map)
}

/// The number of active subscribers of every channel that has any: counted by the database, so
/// that a snapshot which shows only counts does not read every subscription of the organization.
pub fn subscriber_counts(conn: &mut DbConn) -> Result<HashMap<ChannelId, i64>, StorageError> {
    Ok(subs::table
        .filter(subs::active.eq(true))
        .group_by(subs::channel_id)
        .select((subs::channel_id, diesel::dsl::count_star()))
        .load::<(i64, i64)>(conn)?
        .into_iter()
        .map(|(channel, n)| (ChannelId(channel), n))
        .collect())
}

/// Every subscription row of a user, active or not.
pub fn of_user(conn: &mut DbConn, user: UserId) -> Result<Vec<Subscription>, StorageError> {
    Ok(subs::table
        .filter(subs::user_id.eq(user.0))
        .order(subs::channel_id)
        .select(columns())
        .load::<Row>(conn)?
        .into_iter()
        .map(from_row)
        .collect())
}

/// One user's row for one channel.
pub fn get(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
) -> Result<Option<Subscription>, StorageError> {
    Ok(subs::table
        .filter(subs::user_id.eq(user.0))
        .filter(subs::channel_id.eq(channel.0))
        .select(columns())
        .get_result::<Row>(conn)
        .optional()?
        .map(from_row))
}

/// Whether the user is actively subscribed.
pub fn is_subscribed(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
) -> Result<bool, StorageError> {
    Ok(get(conn, user, channel)?.is_some_and(|s| s.active))
}

/// Replaces a subscription's settings.
pub fn set_settings(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    settings: &SubscriptionSettings,
) -> Result<(), StorageError> {
    diesel::update(
        subs::table
            .filter(subs::user_id.eq(user.0))
            .filter(subs::channel_id.eq(channel.0)),
    )
    .set((
        subs::color.eq(&settings.color),
        subs::pin_to_top.eq(settings.pin_to_top),
        subs::is_muted.eq(settings.is_muted),
        subs::desktop_notifications.eq(settings.desktop_notifications),
        subs::audible_notifications.eq(settings.audible_notifications),
        subs::push_notifications.eq(settings.push_notifications),
        subs::email_notifications.eq(settings.email_notifications),
        subs::wildcard_mentions_notify.eq(settings.wildcard_mentions_notify),
    ))
    .execute(conn)?;
    Ok(())
}

/// How many channels each of these users has ever been subscribed to (to pick their next
/// color), in one query.
pub fn counts_of_users(
    conn: &mut DbConn,
    users: &[UserId],
) -> Result<HashMap<UserId, i64>, StorageError> {
    let ids: Vec<i64> = users.iter().map(|u| u.0).collect();
    Ok(subs::table
        .filter(subs::user_id.eq_any(ids))
        .group_by(subs::user_id)
        .select((subs::user_id, diesel::dsl::count_star()))
        .load::<(i64, i64)>(conn)?
        .into_iter()
        .map(|(user, n)| (UserId(user), n))
        .collect())
}

/// Active subscribers of a channel whose accounts are active, in ID order: the recipients of a
/// new message.
pub fn active_recipients(
    conn: &mut DbConn,
    channel: ChannelId,
) -> Result<Vec<UserId>, StorageError> {
    use crate::schema::users;
    Ok(subs::table
        .inner_join(users::table)
        .filter(subs::channel_id.eq(channel.0))
        .filter(subs::active.eq(true))
        .filter(users::is_active.eq(true))
        .order(subs::user_id)
        .select(subs::user_id)
        .load::<i64>(conn)?
        .into_iter()
        .map(UserId)
        .collect())
}

/// The rows of these users for one channel.
pub fn of_channel_for(
    conn: &mut DbConn,
    channel: ChannelId,
    users: &[UserId],
) -> Result<Vec<Subscription>, StorageError> {
    let ids: Vec<i64> = users.iter().map(|u| u.0).collect();
    let mut out = Vec::new();
    for chunk in ids.chunks(500) {
        out.extend(
            subs::table
                .filter(subs::channel_id.eq(channel.0))
                .filter(subs::user_id.eq_any(chunk))
                .select(columns())
                .load::<Row>(conn)?
                .into_iter()
                .map(from_row),
        );
    }
    Ok(out)
}

//! The channel part of a snapshot: the caller's subscriptions, the channels they left or never
//! joined, every channel they may see, and the default channels.

use super::input::{put, IncludeSubscribers, Snapshot, SnapshotInput, Wanted};
use crate::error::ActionResult;
use crate::notify::channels::inherited_notifications;
use parley_domain::access::can_access_channel_metadata;
use parley_domain::channel::Channel;
use parley_domain::{ChannelId, UserId};
use parley_storage::subscriptions::Subscription;
use parley_storage::{channels, subscriptions, DbConn};
use parley_wire as wire;
use parley_wire::channel::{ChannelWithSubscribers, Subscribers, Subscription as WireSubscription};
use std::collections::HashMap;

/// Channels with at most this many subscribers always get full lists under `partial`.
const PARTIAL_SUBSCRIBERS_THRESHOLD: usize = 250;

/// Fills `subscriptions`, `unsubscribed`, `never_subscribed`, `streams` and
/// `realm_default_streams`.
pub(super) fn fill(
    input: &SnapshotInput<'_>,
    wanted: &Wanted,
    conn: &mut DbConn,
    out: &mut Snapshot,
) -> ActionResult<()> {
    let wants_subs = wanted.wants("subscription");
    let wants_streams = wanted.wants("stream");
    let wants_defaults = wanted.wants("default_streams");
    if wanted.wants("channel_folders") {
        put(
            out,
            "channel_folders",
            crate::channel_folders::snapshot(conn)?,
        );
    }
    if !(wants_subs || wants_streams || wants_defaults) {
        return Ok(());
    }
    let me = input.user;
    let groups = &input.policy.groups;
    let archived_ok = input.request.client_capabilities.archived_channels;
    let mine: HashMap<ChannelId, Subscription> = subscriptions::of_user(conn, me.id)?
        .into_iter()
        .map(|s| (s.channel_id, s))
        .collect();
    let include = input.request.include_subscribers;
    // The lists only when they are shown; otherwise the database counts them.
    let (all_subscribers, counts) = if include == IncludeSubscribers::No {
        (HashMap::new(), subscriptions::subscriber_counts(conn)?)
    } else {
        let lists = subscriptions::all_subscribers(conn)?;
        let counts = lists.iter().map(|(c, l)| (*c, l.len() as i64)).collect();
        (lists, counts)
    };
    let count_of = |channel: ChannelId| counts.get(&channel).copied().unwrap_or(0);
    let no_one: Vec<UserId> = Vec::new();
    let mut visible: Vec<Channel> = channels::all(conn)?
        .into_iter()
        .filter(|c| archived_ok || !c.is_archived)
        .filter(|c| {
            let subscribed = mine.get(&c.id).is_some_and(|s| s.active);
            can_access_channel_metadata(me, c, subscribed, groups)
        })
        .collect();
    visible.sort_by_key(|c| c.name.to_lowercase());
    let personal = inherited_notifications(&crate::user_settings::effective_settings(conn, me)?);
    let subscribers_of = |subscribers: &[UserId]| {
        let ids = || Some(subscribers.to_vec());
        match include {
            IncludeSubscribers::No => Subscribers::default(),
            IncludeSubscribers::All => Subscribers {
                subscribers: ids(),
                partial_subscribers: None,
            },
            IncludeSubscribers::Partial if subscribers.len() < PARTIAL_SUBSCRIBERS_THRESHOLD => {
                Subscribers {
                    subscribers: ids(),
                    partial_subscribers: None,
                }
            }
            // Without activity tracking, every subscriber counts as recently active.
            IncludeSubscribers::Partial => Subscribers {
                subscribers: None,
                partial_subscribers: ids(),
            },
        }
    };
    if wants_subs {
        let mut subscribed = Vec::new();
        let mut unsubscribed = Vec::new();
        let mut never = Vec::new();
        for channel in &visible {
            let subscribers = all_subscribers.get(&channel.id).unwrap_or(&no_one);
            let count = count_of(channel.id);
            match mine.get(&channel.id) {
                Some(sub) => {
                    let mut object = WireSubscription::new(channel, &sub.settings, count);
                    if !input.request.client_capabilities.notification_settings_null {
                        object = object.with_inherited(personal);
                    }
                    object.subscribers = subscribers_of(subscribers);
                    if sub.active {
                        subscribed.push(object);
                    } else {
                        unsubscribed.push(object);
                    }
                }
                None => never.push(ChannelWithSubscribers {
                    channel: wire::Channel::new(channel, count),
                    subscribers: subscribers_of(subscribers),
                }),
            }
        }
        put(out, "subscriptions", subscribed);
        put(out, "unsubscribed", unsubscribed);
        put(out, "never_subscribed", never);
    }
    if wants_streams {
        let list: Vec<wire::Channel> = visible
            .iter()
            .map(|c| wire::Channel::new(c, count_of(c.id)))
            .collect();
        put(out, "streams", list);
    }
    if wants_defaults {
        // Channel IDs, as the reference sends them since feature level 330.
        let list: Vec<ChannelId> = visible
            .iter()
            .filter(|c| c.is_default && !c.is_archived)
            .map(|c| c.id)
            .collect();
        put(out, "realm_default_streams", list);
    }
    Ok(())
}

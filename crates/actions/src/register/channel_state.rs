//! The channel part of a snapshot: the caller's subscriptions, the channels they left or never
//! joined, every channel they may see, and the default channels.

use super::{IncludeSubscribers, SnapshotInput, Wanted};
use crate::error::ActionResult;
use crate::subscriptions::{subscription_object, with_inherited_notifications};
use parley_domain::access::can_access_channel_metadata;
use parley_domain::channel::Channel;
use parley_domain::{ChannelId, UserId};
use parley_storage::subscriptions::Subscription;
use parley_storage::{channels, subscriptions, DbConn};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Channels with at most this many subscribers always get full lists under `partial`.
const PARTIAL_SUBSCRIBERS_THRESHOLD: usize = 250;

/// Fills `subscriptions`, `unsubscribed`, `never_subscribed`, `streams` and
/// `realm_default_streams`.
pub(super) fn fill(
    input: &SnapshotInput<'_>,
    wanted: &Wanted,
    conn: &mut DbConn,
    out: &mut Map<String, Value>,
) -> ActionResult<()> {
    let wants_subs = wanted.wants("subscription");
    let wants_streams = wanted.wants("stream");
    let wants_defaults = wanted.wants("default_streams");
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
    let all_subscribers = subscriptions::all_subscribers(conn)?;
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
    let include = input.request.include_subscribers;
    let personal = crate::user_settings::effective_settings(conn, me)?;
    let with_subscribers = |fields: &mut Map<String, Value>, subscribers: &[UserId]| {
        let ids = || Value::from(subscribers.iter().map(|u| u.0).collect::<Vec<_>>());
        match include {
            IncludeSubscribers::No => {}
            IncludeSubscribers::All => {
                fields.insert("subscribers".into(), ids());
            }
            IncludeSubscribers::Partial if subscribers.len() < PARTIAL_SUBSCRIBERS_THRESHOLD => {
                fields.insert("subscribers".into(), ids());
            }
            IncludeSubscribers::Partial => {
                // Without activity tracking, every subscriber counts as recently active.
                fields.insert("partial_subscribers".into(), ids());
            }
        }
    };
    if wants_subs {
        let mut subscribed = Vec::new();
        let mut unsubscribed = Vec::new();
        let mut never = Vec::new();
        for channel in &visible {
            let subscribers = all_subscribers.get(&channel.id).unwrap_or(&no_one);
            match mine.get(&channel.id) {
                Some(sub) => {
                    let mut fields =
                        subscription_object(channel, &sub.settings, subscribers, false);
                    if !input.request.client_capabilities.notification_settings_null {
                        fields = with_inherited_notifications(&personal, fields);
                    }
                    with_subscribers(&mut fields, subscribers);
                    if sub.active {
                        subscribed.push(Value::Object(fields));
                    } else {
                        unsubscribed.push(Value::Object(fields));
                    }
                }
                None => {
                    let mut fields = channel.api_fields(subscribers.len() as i64);
                    with_subscribers(&mut fields, subscribers);
                    never.push(Value::Object(fields));
                }
            }
        }
        out.insert("subscriptions".into(), Value::Array(subscribed));
        out.insert("unsubscribed".into(), Value::Array(unsubscribed));
        out.insert("never_subscribed".into(), Value::Array(never));
    }
    if wants_streams {
        let list: Vec<Value> = visible
            .iter()
            .map(|c| {
                let count = all_subscribers.get(&c.id).map_or(0, Vec::len) as i64;
                Value::Object(c.api_fields(count))
            })
            .collect();
        out.insert("streams".into(), Value::Array(list));
    }
    if wants_defaults {
        let list: Vec<Value> = visible
            .iter()
            .filter(|c| c.is_default)
            .map(|c| {
                let count = all_subscribers.get(&c.id).map_or(0, Vec::len) as i64;
                Value::Object(c.api_fields(count))
            })
            .collect();
        out.insert("realm_default_streams".into(), Value::Array(list));
    }
    Ok(())
}

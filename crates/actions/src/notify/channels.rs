//! Events about channels and subscriptions (`stream`, `subscription`, `default_streams`) and who
//! receives them: the users who may see that a channel exists, who also see its subscribers.

use crate::error::ActionResult;
use crate::publish::Events;
use crate::subscriptions::subscription_object;
use parley_domain::access::can_access_channel_metadata;
use parley_domain::channel::Channel;
use parley_domain::groups::GroupGraph;
use parley_domain::user::User;
use parley_domain::{ChannelId, UserId};
use parley_events::{Body, Capability, Event};
use parley_storage::{channels, subscriptions, users, DbConn, StorageError};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// The active users of the organization: everyone who may hold an event queue.
pub fn active_users(conn: &mut DbConn) -> Result<Vec<User>, StorageError> {
    Ok(users::all(conn)?
        .into_iter()
        .filter(|u| u.is_active)
        .collect())
}

/// Who may receive channel events: the active users and the groups that decide what they see,
/// loaded once per action.
#[derive(Clone, Copy)]
pub struct People<'a> {
    /// The active users (see [`active_users`]).
    pub users: &'a [User],
    /// The groups of the action's policy.
    pub groups: &'a GroupGraph,
}

impl People<'_> {
    /// The users who may see that `channel` exists (and so its settings and subscriber list),
    /// given its subscribers: the audience of its `stream` and `peer_*` events, and exactly the
    /// users whose register snapshot lists it.
    pub fn viewers(&self, channel: &Channel, subscribers: &[UserId]) -> BTreeSet<UserId> {
        let subscribed: HashSet<UserId> = subscribers.iter().copied().collect();
        self.users
            .iter()
            .filter(|u| {
                can_access_channel_metadata(u, channel, subscribed.contains(&u.id), self.groups)
            })
            .map(|u| u.id)
            .collect()
    }

    /// Whether `user` is one of the active users.
    fn contains(&self, user: UserId) -> bool {
        self.users.iter().any(|u| u.id == user)
    }
}

/// `stream` `create` with these channel objects.
pub fn stream_create(streams: Vec<Map<String, Value>>) -> Body {
    Body::json(json!({"type": "stream", "op": "create", "streams": streams}))
}

/// `stream` `delete` with these channel objects (and their IDs, as newer clients read them).
pub fn stream_delete(streams: Vec<Map<String, Value>>) -> Body {
    let ids: Vec<Value> = streams
        .iter()
        .filter_map(|s| s.get("stream_id").cloned())
        .collect();
    Body::json(json!({"type": "stream", "op": "delete", "streams": streams, "stream_ids": ids}))
}

/// `stream` `update` of one property; `extra` adds the fields some properties carry
/// (`rendered_description`, `history_public_to_subscribers`, `is_web_public`).
pub fn stream_update(
    channel: &Channel,
    name: &str,
    property: &str,
    value: Value,
    extra: Map<String, Value>,
) -> Body {
    let mut body = Map::new();
    body.insert("type".into(), "stream".into());
    body.insert("op".into(), "update".into());
    body.insert("stream_id".into(), channel.id.0.into());
    body.insert("name".into(), name.into());
    body.insert("property".into(), property.into());
    body.insert("value".into(), value);
    body.extend(extra);
    Body::json(Value::Object(body))
}

/// Archiving: clients that keep archived channels get `is_archived` set, the others forget the
/// channel.
pub fn stream_archived(channel: &Channel, subscriber_count: i64) -> Body {
    let update = stream_update(
        channel,
        &channel.name,
        "is_archived",
        true.into(),
        Map::new(),
    );
    let delete = stream_delete(vec![channel.api_fields(subscriber_count)]);
    Body::by_capability(Capability::ArchivedChannels, update, Some(delete))
}

/// A new subscriber's effective settings and the subscription objects they will be sent.
type PendingAdds = (Map<String, Value>, Vec<Map<String, Value>>);

/// `subscription` `add` with these subscription objects: as stored for clients with
/// `notification_settings_null`, with inherited booleans for the others.
pub fn subscription_add(
    settings: &Map<String, Value>,
    subscriptions: Vec<Map<String, Value>>,
) -> Body {
    let resolved: Vec<Map<String, Value>> = subscriptions
        .iter()
        .map(|s| crate::subscriptions::with_inherited_notifications(settings, s.clone()))
        .collect();
    let body = |list: Vec<Map<String, Value>>| {
        Body::json(json!({"type": "subscription", "op": "add", "subscriptions": list}))
    };
    if resolved == subscriptions {
        return body(subscriptions);
    }
    Body::by_capability(
        Capability::NotificationSettingsNull,
        body(subscriptions),
        Some(body(resolved)),
    )
}

/// `subscription` `remove` of these channels.
pub fn subscription_remove(channels: &[(ChannelId, String)]) -> Body {
    let list: Vec<Value> = channels
        .iter()
        .map(|(id, name)| json!({"name": name, "stream_id": id.0}))
        .collect();
    Body::json(json!({"type": "subscription", "op": "remove", "subscriptions": list}))
}

/// `subscription` `peer_add` / `peer_remove`: these users joined or left these channels.
pub fn peer(op: &str, stream_ids: &[ChannelId], user_ids: &[UserId]) -> Body {
    let mut users: Vec<i64> = user_ids.iter().map(|u| u.0).collect();
    users.sort_unstable();
    let streams: Vec<i64> = stream_ids.iter().map(|c| c.0).collect();
    Body::json(json!({
        "type": "subscription",
        "op": op,
        "stream_ids": streams,
        "user_ids": users,
    }))
}

/// `subscription` `update` of one of the user's own settings.
pub fn subscription_update(channel: ChannelId, property: &str, value: Value) -> Body {
    Body::json(json!({
        "type": "subscription",
        "op": "update",
        "stream_id": channel.0,
        "property": property,
        "value": value,
    }))
}

/// `default_streams` with the current list, for every active non-guest user (guests are not
/// told about default channels, as in the reference).
pub fn default_streams(conn: &mut DbConn, people: People<'_>) -> ActionResult<Event> {
    let counts = subscriptions::all_subscribers(conn)?;
    let mut list: Vec<Channel> = channels::all(conn)?
        .into_iter()
        .filter(|c| c.is_default && !c.is_archived)
        .collect();
    list.sort_by_key(|c| c.name.to_lowercase());
    let objects: Vec<Map<String, Value>> = list
        .iter()
        .map(|c| c.api_fields(counts.get(&c.id).map_or(0, Vec::len) as i64))
        .collect();
    let audience = people
        .users
        .iter()
        .filter(|u| !u.role.is_guest())
        .map(|u| u.id)
        .collect();
    Ok(Event::json(
        audience,
        json!({"type": "default_streams", "default_streams": objects}),
    ))
}

fn push_to(events: &mut Vec<Event>, users: impl IntoIterator<Item = UserId>, body: Body) {
    let users: Vec<UserId> = users.into_iter().collect();
    if !users.is_empty() {
        events.push(Event::to_users(users, body));
    }
}

/// The events of one subscribe action, gathered channel by channel and published in the
/// reference's order: `stream` `create` for those who could not see a channel before, then each
/// new subscriber's `subscription` `add` (one event per user), then `peer_add` for the others.
#[derive(Default)]
pub struct SubscribeEvents {
    creates: Vec<Event>,
    adds: BTreeMap<UserId, PendingAdds>,
    peers: Vec<Event>,
}

impl SubscribeEvents {
    /// Records that `added` joined `channel` (already written). `new_channel`: nobody could see
    /// it before. `tell_added`: send the new subscribers their own events (not for an account
    /// being created, which has no queue yet).
    pub fn record(
        &mut self,
        conn: &mut DbConn,
        people: People<'_>,
        channel: &Channel,
        added: &[UserId],
        new_channel: bool,
        tell_added: bool,
    ) -> ActionResult<()> {
        if added.is_empty() {
            return Ok(());
        }
        let after = subscriptions::subscribers(conn, channel.id)?;
        let added_set: HashSet<UserId> = added.iter().copied().collect();
        let before: Vec<UserId> = after
            .iter()
            .copied()
            .filter(|u| !added_set.contains(u))
            .collect();
        let viewers_after = people.viewers(channel, &after);
        let viewers_before = if new_channel {
            BTreeSet::new()
        } else {
            people.viewers(channel, &before)
        };
        // Those who see the channel for the first time: the others get it as it was before this
        // change (their peer_add follows), the new subscribers as it is now.
        let (gained_added, gained_others): (Vec<UserId>, Vec<UserId>) = viewers_after
            .difference(&viewers_before)
            .copied()
            .partition(|u| added_set.contains(u));
        push_to(
            &mut self.creates,
            gained_others,
            stream_create(vec![channel.api_fields(before.len() as i64)]),
        );
        if tell_added {
            push_to(
                &mut self.creates,
                gained_added,
                stream_create(vec![channel.api_fields(after.len() as i64)]),
            );
            // One query for the new rows and one for the newcomers' settings.
            let newcomers: Vec<&User> = people
                .users
                .iter()
                .filter(|u| added_set.contains(&u.id) && !self.adds.contains_key(&u.id))
                .collect();
            let settings = crate::user_settings::Settings::load(conn, newcomers.iter().copied())?;
            for row in subscriptions::of_channel_for(conn, channel.id, added)? {
                let object = subscription_object(channel, &row.settings, &after, true);
                if let Some(entry) = self.adds.get_mut(&row.user_id) {
                    entry.1.push(object);
                } else if let Some(person) = newcomers.iter().find(|u| u.id == row.user_id) {
                    self.adds
                        .insert(row.user_id, (settings.all(person), vec![object]));
                }
            }
        }
        push_to(
            &mut self.peers,
            viewers_after
                .iter()
                .copied()
                .filter(|u| !added_set.contains(u)),
            peer("peer_add", &[channel.id], added),
        );
        Ok(())
    }

    /// Queues the gathered events in order.
    pub fn finish(self, events: &mut Events) {
        for event in self.creates {
            events.push(event);
        }
        for (user, (settings, subscriptions)) in self.adds {
            events.push(Event::to_users(
                vec![user],
                subscription_add(&settings, subscriptions),
            ));
        }
        for event in self.peers {
            events.push(event);
        }
    }
}

/// The events of one unsubscribe action: each user's `subscription` `remove` (and `stream`
/// `delete` for private channels they may no longer see), then `peer_remove` for the others.
#[derive(Default)]
pub struct UnsubscribeEvents {
    removed: BTreeMap<UserId, Vec<(ChannelId, String)>>,
    lost: BTreeMap<UserId, Vec<Map<String, Value>>>,
    peers: Vec<Event>,
}

impl UnsubscribeEvents {
    /// Records that `removed` left `channel` (already written).
    pub fn record(
        &mut self,
        conn: &mut DbConn,
        people: People<'_>,
        channel: &Channel,
        removed: &[UserId],
    ) -> ActionResult<()> {
        if removed.is_empty() {
            return Ok(());
        }
        let after = subscriptions::subscribers(conn, channel.id)?;
        let viewers_after = people.viewers(channel, &after);
        let removed_set: HashSet<UserId> = removed.iter().copied().collect();
        for user in removed {
            self.removed
                .entry(*user)
                .or_default()
                .push((channel.id, channel.name.clone()));
            if !viewers_after.contains(user) && people.contains(*user) {
                self.lost
                    .entry(*user)
                    .or_default()
                    .push(channel.api_fields(after.len() as i64));
            }
        }
        push_to(
            &mut self.peers,
            viewers_after
                .iter()
                .copied()
                .filter(|u| !removed_set.contains(u)),
            peer("peer_remove", &[channel.id], removed),
        );
        Ok(())
    }

    /// Queues the gathered events in order.
    pub fn finish(mut self, events: &mut Events) {
        for (user, channels) in self.removed {
            events.push(Event::to_users(vec![user], subscription_remove(&channels)));
            if let Some(lost) = self.lost.remove(&user) {
                events.push(Event::to_users(vec![user], stream_delete(lost)));
            }
        }
        for event in self.peers {
            events.push(event);
        }
    }
}

/// One `stream` `update` event of a change.
#[derive(Debug, Clone)]
pub struct StreamUpdate {
    /// The channel's name as the event gives it (the old one for a rename).
    pub name: String,
    /// The changed property.
    pub property: String,
    /// Its new value.
    pub value: Value,
    /// The extra fields some properties carry.
    pub extra: Map<String, Value>,
}

/// The events of a change to a channel's settings, from the channel before and after: `stream`
/// `create` (and `peer_add` of its subscribers) for users who may now see it, `stream` `delete`
/// for those who may no longer, and the `updates` for those who could and still can.
pub fn channel_changed(
    conn: &mut DbConn,
    people: People<'_>,
    old: &Channel,
    new: &Channel,
    updates: Vec<StreamUpdate>,
    events: &mut Events,
) -> ActionResult<()> {
    let subscribers = subscriptions::subscribers(conn, new.id)?;
    let count = subscribers.len() as i64;
    let before = people.viewers(old, &subscribers);
    let after = people.viewers(new, &subscribers);
    let mut out = Vec::new();
    let gained: Vec<UserId> = after.difference(&before).copied().collect();
    push_to(
        &mut out,
        gained.iter().copied(),
        stream_create(vec![new.api_fields(count)]),
    );
    if !subscribers.is_empty() {
        push_to(
            &mut out,
            gained.iter().copied(),
            peer("peer_add", &[new.id], &subscribers),
        );
    }
    let staying: Vec<UserId> = after.intersection(&before).copied().collect();
    for update in updates {
        push_to(
            &mut out,
            staying.iter().copied(),
            stream_update(
                new,
                &update.name,
                &update.property,
                update.value,
                update.extra,
            ),
        );
    }
    push_to(
        &mut out,
        before.difference(&after).copied(),
        stream_delete(vec![new.api_fields(count)]),
    );
    for event in out {
        events.push(event);
    }
    Ok(())
}

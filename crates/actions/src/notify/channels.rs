//! Events about channels and subscriptions (`stream`, `subscription`, `default_streams`) and who
//! receives them: the users who may see that a channel exists, who also see its subscribers.

use super::emit::{body, to_users};
use crate::error::ActionResult;
use crate::publish::Events;
use crate::user_settings::Settings;
use parley_domain::access::can_access_channel_metadata;
use parley_domain::channel::Channel;
use parley_domain::groups::GroupGraph;
use parley_domain::user::User;
use parley_domain::{ChannelId, UserId};
use parley_events::{Body, Capability, Event};
use parley_storage::{channels, subscriptions, users, DbConn, StorageError};
use parley_wire as wire;
use parley_wire::channel::{InheritedNotifications, RemovedSubscription, Subscription};
use parley_wire::event::{
    StreamEvent, StreamId, StreamUpdate as StreamUpdateEvent, SubscriptionEvent,
};
use serde_json::Value;
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

/// A channel object.
fn object(channel: &Channel, subscriber_count: usize) -> wire::Channel {
    wire::Channel::new(channel, subscriber_count as i64)
}

/// `stream` `create` with these channel objects.
pub fn stream_create(streams: Vec<wire::Channel>) -> Body {
    body(wire::Event::Stream(StreamEvent::Create { streams }))
}

/// `stream` `delete` of these channels.
pub fn stream_delete(channels: Vec<wire::Channel>) -> Body {
    let stream_ids: Vec<ChannelId> = channels.iter().map(|s| s.stream_id).collect();
    let streams = stream_ids
        .iter()
        .map(|&stream_id| StreamId { stream_id })
        .collect();
    body(wire::Event::Stream(StreamEvent::Delete {
        streams,
        stream_ids,
    }))
}

/// `stream` `update` of one property of `channel`, named `name` in the event.
pub fn stream_update(channel: &Channel, update: StreamUpdate) -> Body {
    body(wire::Event::Stream(StreamEvent::Update(
        StreamUpdateEvent {
            stream_id: channel.id,
            name: update.name,
            property: update.property,
            value: update.value,
            rendered_description: update.rendered_description,
            history_public_to_subscribers: update.history_public_to_subscribers,
            is_web_public: update.is_web_public,
        },
    )))
}

/// Archiving: clients that keep archived channels get `is_archived` set, the others forget the
/// channel.
pub fn stream_archived(channel: &Channel, subscriber_count: usize) -> Body {
    let update = stream_update(
        channel,
        StreamUpdate::new(&channel.name, "is_archived", true.into()),
    );
    let delete = stream_delete(vec![object(channel, subscriber_count)]);
    Body::by_capability(Capability::ArchivedChannels, update, Some(delete))
}

/// A new subscriber's inherited notification settings and the subscriptions they will be sent.
type PendingAdds = (InheritedNotifications, Vec<Subscription>);

/// `subscription` `add` with these subscription objects: as stored for clients with
/// `notification_settings_null`, with inherited booleans for the others.
pub fn subscription_add(
    inherited: InheritedNotifications,
    subscriptions: Vec<Subscription>,
) -> Body {
    let resolved: Vec<Subscription> = subscriptions
        .iter()
        .map(|s| s.clone().with_inherited(inherited))
        .collect();
    let add = |subscriptions| {
        body(wire::Event::Subscription(SubscriptionEvent::Add {
            subscriptions,
        }))
    };
    if resolved == subscriptions {
        return add(subscriptions);
    }
    Body::by_capability(
        Capability::NotificationSettingsNull,
        add(subscriptions),
        Some(add(resolved)),
    )
}

/// `subscription` `remove` of these channels.
pub fn subscription_remove(channels: &[(ChannelId, String)]) -> Body {
    let subscriptions = channels
        .iter()
        .map(|(id, name)| RemovedSubscription {
            name: name.clone(),
            stream_id: *id,
        })
        .collect();
    body(wire::Event::Subscription(SubscriptionEvent::Remove {
        subscriptions,
    }))
}

/// `subscription` `peer_add` (`added`) / `peer_remove`: these users joined or left these
/// channels.
pub fn peer(added: bool, stream_ids: &[ChannelId], user_ids: &[UserId]) -> Body {
    let mut user_ids = user_ids.to_vec();
    user_ids.sort_unstable();
    let stream_ids = stream_ids.to_vec();
    body(wire::Event::Subscription(if added {
        SubscriptionEvent::PeerAdd {
            stream_ids,
            user_ids,
        }
    } else {
        SubscriptionEvent::PeerRemove {
            stream_ids,
            user_ids,
        }
    }))
}

/// `subscription` `update` of one of the user's own settings.
pub fn subscription_update(channel: ChannelId, property: &str, value: Value) -> Body {
    body(wire::Event::Subscription(SubscriptionEvent::Update {
        stream_id: channel,
        property: property.to_owned(),
        value,
    }))
}

/// `default_streams` with the current list of IDs, for every active non-guest user (guests are
/// not told about default channels, as in the reference).
pub fn default_streams(conn: &mut DbConn, people: People<'_>) -> ActionResult<Event> {
    let mut list: Vec<Channel> = channels::all(conn)?
        .into_iter()
        .filter(|c| c.is_default && !c.is_archived)
        .collect();
    list.sort_by_key(|c| c.name.to_lowercase());
    let audience = people
        .users
        .iter()
        .filter(|u| !u.role.is_guest())
        .map(|u| u.id)
        .collect();
    Ok(to_users(
        audience,
        wire::Event::DefaultStreams {
            default_streams: list.iter().map(|c| c.id).collect(),
        },
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
            stream_create(vec![object(channel, before.len())]),
        );
        if tell_added {
            push_to(
                &mut self.creates,
                gained_added,
                stream_create(vec![object(channel, after.len())]),
            );
            // One query for the new rows and one for the newcomers' settings.
            let newcomers: Vec<&User> = people
                .users
                .iter()
                .filter(|u| added_set.contains(&u.id) && !self.adds.contains_key(&u.id))
                .collect();
            let settings = Settings::load(conn, newcomers.iter().copied())?;
            for row in subscriptions::of_channel_for(conn, channel.id, added)? {
                let mut object = Subscription::new(channel, &row.settings, after.len() as i64);
                object.subscribers.subscribers = Some(after.clone());
                if let Some(entry) = self.adds.get_mut(&row.user_id) {
                    entry.1.push(object);
                } else if let Some(person) = newcomers.iter().find(|u| u.id == row.user_id) {
                    let inherited = inherited_notifications(&settings.all(person));
                    self.adds.insert(row.user_id, (inherited, vec![object]));
                }
            }
        }
        push_to(
            &mut self.peers,
            viewers_after
                .iter()
                .copied()
                .filter(|u| !added_set.contains(u)),
            peer(true, &[channel.id], added),
        );
        Ok(())
    }

    /// Queues the gathered events in order.
    pub fn finish(self, events: &mut Events) {
        for event in self.creates {
            events.push(event);
        }
        for (user, (inherited, subscriptions)) in self.adds {
            events.push(Event::to_users(
                vec![user],
                subscription_add(inherited, subscriptions),
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
    lost: BTreeMap<UserId, Vec<wire::Channel>>,
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
                    .push(object(channel, after.len()));
            }
        }
        push_to(
            &mut self.peers,
            viewers_after
                .iter()
                .copied()
                .filter(|u| !removed_set.contains(u)),
            peer(false, &[channel.id], removed),
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
    /// With a description: the rendered one.
    pub rendered_description: Option<String>,
    /// With a privacy change: the history setting.
    pub history_public_to_subscribers: Option<bool>,
    /// With a privacy change: whether web-public.
    pub is_web_public: Option<bool>,
}

impl StreamUpdate {
    /// A change of `property` to `value`, named `name` in the event, with no extra fields.
    pub fn new(name: &str, property: &str, value: Value) -> Self {
        StreamUpdate {
            name: name.to_owned(),
            property: property.to_owned(),
            value,
            rendered_description: None,
            history_public_to_subscribers: None,
            is_web_public: None,
        }
    }
}

/// The personal settings that a user's null per-channel notification settings inherit, from
/// their effective settings.
pub fn inherited_notifications(
    settings: &serde_json::Map<String, Value>,
) -> InheritedNotifications {
    let get = |name: &str| settings.get(name).and_then(Value::as_bool).unwrap_or(false);
    InheritedNotifications {
        desktop: get("enable_stream_desktop_notifications"),
        audible: get("enable_stream_audible_notifications"),
        push: get("enable_stream_push_notifications"),
        email: get("enable_stream_email_notifications"),
        wildcard_mentions: get("wildcard_mentions_notify"),
    }
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
    let count = subscribers.len();
    let before = people.viewers(old, &subscribers);
    let after = people.viewers(new, &subscribers);
    let mut out = Vec::new();
    let gained: Vec<UserId> = after.difference(&before).copied().collect();
    push_to(
        &mut out,
        gained.iter().copied(),
        stream_create(vec![object(new, count)]),
    );
    if !subscribers.is_empty() {
        push_to(
            &mut out,
            gained.iter().copied(),
            peer(true, &[new.id], &subscribers),
        );
    }
    let staying: Vec<UserId> = after.intersection(&before).copied().collect();
    for update in updates {
        push_to(
            &mut out,
            staying.iter().copied(),
            stream_update(new, update),
        );
    }
    push_to(
        &mut out,
        before.difference(&after).copied(),
        stream_delete(vec![object(new, count)]),
    );
    for event in out {
        events.push(event);
    }
    Ok(())
}

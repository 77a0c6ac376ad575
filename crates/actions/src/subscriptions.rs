//! Subscriptions: joining and leaving channels (oneself or others), listing them, and their
//! per-user settings.

use crate::access::{access_channel_by_id, access_channel_by_name};
use crate::channels::{build_channel, insert_channel, NewChannel};
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::new_subscriptions::subscribe_in_transaction;
use crate::notify::channels::{
    active_users, default_streams, inherited_notifications, subscription_update, People,
    SubscribeEvents, UnsubscribeEvents,
};
use crate::policy::{self, Policy};
use crate::publish::Events;
use parley_domain::access::{
    can_access_channel_content, can_administer_channel, can_subscribe_self,
};
use parley_domain::channel::{Channel, SubscriptionSettings};
use parley_domain::user::User;
use parley_domain::{ChannelId, RequestError, UserId};
use parley_events::Event;
use parley_storage::{channels, subscriptions, users, DbConn};
use parley_wire::Subscription;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// Who a `principals` entry names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// By user ID.
    Id(UserId),
    /// By email address.
    Email(String),
}

fn resolve_principals(
    ctx: &Context,
    conn: &mut DbConn,
    principals: &[Principal],
) -> ActionResult<Vec<User>> {
    let mut out = Vec::new();
    for principal in principals {
        let user = match principal {
            Principal::Id(id) => users::by_id(conn, *id)?,
            Principal::Email(email) => {
                crate::auth::user_by_any_email(conn, email, &ctx.realm.host)?.map(|(u, _)| u)
            }
        };
        match user {
            Some(user) if user.is_active => {
                if !out.iter().any(|u: &User| u.id == user.id) {
                    out.push(user);
                }
            }
            _ => {
                let shown = match principal {
                    Principal::Id(id) => id.to_string(),
                    Principal::Email(email) => email.clone(),
                };
                return Err(RequestError::invalid_param(
                    "principals",
                    format!("No such user: {shown}"),
                )
                .into());
            }
        }
    }
    Ok(out)
}

/// One channel of a subscribe request.
#[derive(Debug, Clone)]
pub struct ChannelRequest {
    /// Name; created when missing.
    pub name: String,
    /// Description used when the channel is created.
    pub description: Option<String>,
}

/// `POST /users/me/subscriptions`.
#[derive(Debug, Clone)]
pub struct SubscribeRequest {
    /// Channels by name.
    pub channels: Vec<ChannelRequest>,
    /// Users to subscribe; the caller when None.
    pub principals: Option<Vec<Principal>>,
    /// Fail on the first channel the caller may not join, rather than listing it.
    pub authorization_errors_fatal: bool,
    /// Settings for channels this request creates.
    pub template: NewChannel,
}

/// The answer of `POST /users/me/subscriptions`.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SubscribeResult {
    /// Newly subscribed channel names, by user ID.
    pub subscribed: BTreeMap<String, Vec<String>>,
    /// Channel names each user was subscribed to already, by user ID.
    pub already_subscribed: BTreeMap<String, Vec<String>>,
    /// Channels the caller may not join (only when errors are not fatal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unauthorized: Option<Vec<String>>,
}

/// Whether `caller` may subscribe other people to `channel` (also used to check the channels of
/// an invitation link).
pub(crate) fn may_add_others(policy: &Policy, caller: &User, channel: &Channel) -> bool {
    if caller.role.is_guest() {
        return false;
    }
    caller.role.is_admin()
        || can_administer_channel(caller, channel, &policy.groups)
        || policy
            .groups
            .setting_contains(&policy.realm.can_add_subscribers_group, caller)
        || policy
            .groups
            .setting_contains(&channel.permissions.can_add_subscribers_group, caller)
}

/// `POST /users/me/subscriptions`: subscribes the caller (or `principals`) to channels, creating
/// the missing ones as the caller, in one transaction.
pub async fn subscribe(
    ctx: &Context,
    caller: User,
    request: SubscribeRequest,
) -> ActionResult<SubscribeResult> {
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| subscribe_in(&ctx2, conn, events, &caller, &request))
        .await
}

/// The writes of [`subscribe`], inside the caller's transaction.
fn subscribe_in(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    caller: &User,
    request: &SubscribeRequest,
) -> ActionResult<SubscribeResult> {
    let ctx2 = ctx;
    let caller = caller.clone();
    {
        if caller.role.is_guest() {
            return Err(RequestError::guests_not_allowed().into());
        }
        let policy = policy::load(conn)?;
        let targets = match &request.principals {
            Some(principals) => resolve_principals(ctx2, conn, principals)?,
            None => vec![caller.clone()],
        };
        let others = targets.iter().any(|u| u.id != caller.id);
        let people_list = active_users(conn)?;
        let people = People {
            users: &people_list,
            groups: &policy.groups,
        };
        let mut notify = SubscribeEvents::default();
        let mut announce = Vec::new();
        let mut new_default = false;
        let mut result = SubscribeResult::default();
        let mut unauthorized = Vec::new();
        for wanted in &request.channels {
            let (channel, created) =
                match access_channel_by_name(conn, &policy, &caller, &wanted.name)? {
                    Some((channel, subscribed)) => {
                        let allowed = if others {
                            may_add_others(&policy, &caller, &channel)
                                && (subscribed
                                    || can_access_channel_content(
                                        &caller,
                                        &channel,
                                        subscribed,
                                        &policy.groups,
                                    ))
                        } else {
                            subscribed || can_subscribe_self(&caller, &channel, &policy.groups)
                        };
                        if !allowed || channel.is_archived {
                            if request.authorization_errors_fatal {
                                return Err(RequestError::bad_request(format!(
                                    "Unable to access channel ({}).",
                                    channel.name
                                ))
                                .into());
                            }
                            unauthorized.push(channel.name.clone());
                            continue;
                        }
                        (channel, false)
                    }
                    None if channels::by_name(conn, &wanted.name)?.is_some() => {
                        // A private channel the caller may not see: refuse without revealing it.
                        if request.authorization_errors_fatal {
                            return Err(RequestError::bad_request(format!(
                                "Unable to access channel ({}).",
                                wanted.name.trim()
                            ))
                            .into());
                        }
                        unauthorized.push(wanted.name.trim().to_owned());
                        continue;
                    }
                    None => {
                        let mut new = request.template.clone();
                        new.name = wanted.name.clone();
                        new.description = wanted.description.clone().unwrap_or_default();
                        let mut channel = build_channel(conn, &policy, Some(&caller), &new)?;
                        channel.id = insert_channel(conn, &channel)?;
                        if new.announce {
                            announce.push((channel.name.clone(), channel.invite_only));
                        }
                        new_default |= channel.is_default;
                        (channel, true)
                    }
                };
            let added = subscribe_in_transaction(conn, channel.id, &targets)?;
            notify.record(conn, people, &channel, &added, created, true)?;
            for user in &targets {
                let bucket = if added.contains(&user.id) {
                    &mut result.subscribed
                } else {
                    &mut result.already_subscribed
                };
                bucket
                    .entry(user.id.to_string())
                    .or_default()
                    .push(channel.name.clone());
            }
        }
        if !request.authorization_errors_fatal {
            result.unauthorized = Some(unauthorized);
        }
        notify.finish(events);
        if new_default {
            events.push(default_streams(conn, people)?);
        }
        // Announced once everyone who may see the new channels knows them.
        for (name, private) in announce {
            crate::notices::announce_channel(ctx2, conn, events, &caller, &name, private)?;
        }
        Ok(result)
    }
}

/// The answer of `DELETE /users/me/subscriptions`.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct UnsubscribeResult {
    /// Channels left.
    pub removed: Vec<String>,
    /// Channels the users were not subscribed to.
    pub not_removed: Vec<String>,
}

/// `DELETE /users/me/subscriptions`: unsubscribes the caller (or `principals`, which needs
/// `can_remove_subscribers_group` or administering the channel).
pub async fn unsubscribe(
    ctx: &Context,
    caller: User,
    names: Vec<String>,
    principals: Option<Vec<Principal>>,
) -> ActionResult<UnsubscribeResult> {
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        unsubscribe_in(&ctx2, conn, events, &caller, &names, principals.as_deref())
    })
    .await
}

/// The writes of [`unsubscribe`], inside the caller's transaction.
fn unsubscribe_in(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    caller: &User,
    names: &[String],
    principals: Option<&[Principal]>,
) -> ActionResult<UnsubscribeResult> {
    let ctx2 = ctx;
    let caller = caller.clone();
    {
        let policy = policy::load(conn)?;
        let targets = match &principals {
            Some(principals) => resolve_principals(ctx2, conn, principals)?,
            None => vec![caller.clone()],
        };
        let others = targets.iter().any(|u| u.id != caller.id);
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for name in names {
            match access_channel_by_name(conn, &policy, &caller, name)? {
                Some((channel, _)) => found.push(channel),
                None => missing.push(name.trim().to_owned()),
            }
        }
        if !missing.is_empty() {
            return Err(RequestError::bad_request(format!(
                "Channel(s) ({}) do not exist",
                missing.join(", ")
            ))
            .into());
        }
        let people_list = active_users(conn)?;
        let people = People {
            users: &people_list,
            groups: &policy.groups,
        };
        let mut notify = UnsubscribeEvents::default();
        let mut result = UnsubscribeResult::default();
        for channel in found {
            if others
                && !caller.role.is_admin()
                && !can_administer_channel(&caller, &channel, &policy.groups)
                && !policy
                    .groups
                    .setting_contains(&channel.permissions.can_remove_subscribers_group, &caller)
            {
                return Err(RequestError::insufficient_permission().into());
            }
            let ids: Vec<UserId> = targets.iter().map(|u| u.id).collect();
            let removed = subscriptions::unsubscribe(conn, channel.id, &ids)?;
            if removed.is_empty() {
                result.not_removed.push(channel.name.clone());
            } else {
                result.removed.push(channel.name.clone());
            }
            notify.record(conn, people, &channel, &removed)?;
        }
        notify.finish(events);
        Ok(result)
    }
}

/// The answer of `PATCH /users/me/subscriptions`: the answers of subscribing and unsubscribing,
/// side by side.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct UpdateSubscriptionsResult {
    /// Newly subscribed channel names, by user ID.
    pub subscribed: BTreeMap<String, Vec<String>>,
    /// Channel names the caller was subscribed to already, by user ID.
    pub already_subscribed: BTreeMap<String, Vec<String>>,
    /// Channels left.
    pub removed: Vec<String>,
    /// Channels the caller was not subscribed to.
    pub not_removed: Vec<String>,
}

/// `PATCH /users/me/subscriptions`: joins the channels of `add` (creating missing ones, as
/// `POST /users/me/subscriptions` does) and leaves those of `delete`, in one transaction, so that
/// a failure of either leaves nothing changed (the reference's `compose_views`).
pub async fn update_subscriptions(
    ctx: &Context,
    caller: User,
    add: Vec<ChannelRequest>,
    delete: Vec<String>,
) -> ActionResult<UpdateSubscriptionsResult> {
    if add.is_empty() && delete.is_empty() {
        return Err(RequestError::bad_request(
            "Nothing to do. Specify at least one of \"add\" or \"delete\".",
        )
        .into());
    }
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        let mut result = UpdateSubscriptionsResult::default();
        if !add.is_empty() {
            let request = SubscribeRequest {
                channels: add,
                principals: None,
                authorization_errors_fatal: true,
                template: NewChannel::default(),
            };
            let added = subscribe_in(&ctx2, conn, events, &caller, &request)?;
            result.subscribed = added.subscribed;
            result.already_subscribed = added.already_subscribed;
        }
        if !delete.is_empty() {
            let removed = unsubscribe_in(&ctx2, conn, events, &caller, &delete, None)?;
            result.removed = removed.removed;
            result.not_removed = removed.not_removed;
        }
        Ok(result)
    })
    .await
}

/// `GET /users/me/subscriptions`: the caller's channels with their settings (and subscribers).
pub async fn list_subscriptions(
    ctx: &Context,
    user: User,
    include_subscribers: bool,
) -> ActionResult<Vec<Subscription>> {
    ctx.run(move |conn| {
        let rows: Vec<_> = subscriptions::of_user(conn, user.id)?
            .into_iter()
            .filter(|s| s.active)
            .collect();
        let ids: Vec<ChannelId> = rows.iter().map(|s| s.channel_id).collect();
        let channels: HashMap<ChannelId, Channel> = channels::by_ids(conn, &ids)?
            .into_iter()
            .map(|c| (c.id, c))
            .collect();
        let all = subscriptions::all_subscribers(conn)?;
        let mut out = Vec::new();
        for row in rows {
            let Some(channel) = channels.get(&row.channel_id) else {
                continue;
            };
            if channel.is_archived {
                continue;
            }
            let subscribers = all.get(&channel.id).cloned().unwrap_or_default();
            let mut object = Subscription::new(channel, &row.settings, subscribers.len() as i64);
            if include_subscribers {
                object.subscribers.subscribers = Some(subscribers);
            }
            out.push((channel.name.to_lowercase(), object));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out.into_iter().map(|(_, fields)| fields).collect())
    })
    .await
}

/// One change of `PATCH /users/me/subscriptions/properties`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct PropertyChange {
    /// Channel.
    pub stream_id: ChannelId,
    /// Setting name.
    pub property: String,
    /// New value.
    pub value: Value,
}

fn apply_property(
    settings: &mut SubscriptionSettings,
    change: &PropertyChange,
) -> Result<(), RequestError> {
    let name = change.property.as_str();
    let bad =
        || RequestError::invalid_param("subscription_data", format!("Invalid value for {name}"));
    let flag = |value: &Value| value.as_bool().ok_or_else(bad);
    let nullable = |value: &Value| match value {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        _ => Err(bad()),
    };
    match name {
        "color" => {
            let color = change.value.as_str().ok_or_else(bad)?;
            let valid = color.len() == 7
                && color.starts_with('#')
                && color[1..].chars().all(|c| c.is_ascii_hexdigit());
            if !valid {
                return Err(RequestError::invalid_param(
                    "subscription_data",
                    format!("color is not a valid hex color code: {color}"),
                ));
            }
            settings.color = color.to_lowercase();
        }
        "is_muted" => settings.is_muted = flag(&change.value)?,
        "in_home_view" => settings.is_muted = !flag(&change.value)?,
        "pin_to_top" => settings.pin_to_top = flag(&change.value)?,
        "desktop_notifications" => settings.desktop_notifications = nullable(&change.value)?,
        "audible_notifications" => settings.audible_notifications = nullable(&change.value)?,
        "push_notifications" => settings.push_notifications = nullable(&change.value)?,
        "email_notifications" => settings.email_notifications = nullable(&change.value)?,
        "wildcard_mentions_notify" => settings.wildcard_mentions_notify = nullable(&change.value)?,
        other => {
            return Err(RequestError::invalid_param(
                "subscription_data",
                format!("Unknown subscription property: {other}"),
            ))
        }
    }
    Ok(())
}

/// `PATCH /users/me/subscriptions/properties`: changes the caller's settings of channels they are
/// subscribed to, all or nothing.
pub async fn update_properties(
    ctx: &Context,
    user: User,
    changes: Vec<PropertyChange>,
) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        let personal =
            inherited_notifications(&crate::user_settings::effective_settings(conn, &user)?);
        for change in &changes {
            let Some(mut row) =
                subscriptions::get(conn, user.id, change.stream_id)?.filter(|s| s.active)
            else {
                return Err(RequestError::bad_request(format!(
                    "Not subscribed to channel ID {}",
                    change.stream_id
                ))
                .into());
            };
            apply_property(&mut row.settings, change)?;
            subscriptions::set_settings(conn, user.id, change.stream_id, &row.settings)?;
            for (property, value) in property_events(&row.settings, &change.property) {
                // A setting reset to inherit is announced with the value it now inherits: the
                // description types `value` without null, and the mobile app decodes it
                // strictly, whatever capabilities the client declared.
                let value = match personal.for_property(property).filter(|_| value.is_null()) {
                    Some(inherited) => inherited.into(),
                    None => value,
                };
                let body = subscription_update(change.stream_id, property, value);
                events.push(Event::to_users(vec![user.id], body));
            }
        }
        Ok::<_, ActionError>(())
    })
    .await
}

/// The `subscription` `update` events of a changed property, with the stored values: muting
/// (by either name) sends the deprecated `in_home_view` first and then `is_muted`, as the
/// reference does.
fn property_events(settings: &SubscriptionSettings, property: &str) -> Vec<(&'static str, Value)> {
    let nullable = |value: Option<bool>| value.map_or(Value::Null, Value::Bool);
    match property {
        "is_muted" | "in_home_view" => vec![
            ("in_home_view", (!settings.is_muted).into()),
            ("is_muted", settings.is_muted.into()),
        ],
        "color" => vec![("color", settings.color.clone().into())],
        "pin_to_top" => vec![("pin_to_top", settings.pin_to_top.into())],
        "desktop_notifications" => vec![(
            "desktop_notifications",
            nullable(settings.desktop_notifications),
        )],
        "audible_notifications" => vec![(
            "audible_notifications",
            nullable(settings.audible_notifications),
        )],
        "push_notifications" => vec![("push_notifications", nullable(settings.push_notifications))],
        "email_notifications" => vec![(
            "email_notifications",
            nullable(settings.email_notifications),
        )],
        "wildcard_mentions_notify" => vec![(
            "wildcard_mentions_notify",
            nullable(settings.wildcard_mentions_notify),
        )],
        _ => Vec::new(),
    }
}

/// `GET /users/{user_id}/subscriptions/{stream_id}`: whether a user is subscribed, for callers
/// who may see the channel.
pub async fn subscription_status(
    ctx: &Context,
    caller: User,
    target: UserId,
    channel: ChannelId,
) -> ActionResult<bool> {
    ctx.run(move |conn| {
        let policy = policy::load(conn)?;
        users::by_id(conn, target)?.ok_or_else(|| RequestError::bad_request("No such user"))?;
        access_channel_by_id(conn, &policy, &caller, channel)?;
        Ok(subscriptions::is_subscribed(conn, target, channel)?)
    })
    .await
}

/// Subscribes a new user to the default channels; the others who see those channels get
/// `peer_add` (the new account has no queue to tell yet).
pub(crate) fn subscribe_to_defaults(
    conn: &mut DbConn,
    user: &User,
    people: People<'_>,
    events: &mut Events,
) -> ActionResult<()> {
    let mut notify = SubscribeEvents::default();
    for channel in channels::all(conn)?
        .into_iter()
        .filter(|c| c.is_default && !c.is_archived)
    {
        let added = subscribe_in_transaction(conn, channel.id, std::slice::from_ref(user))?;
        notify.record(conn, people, &channel, &added, false, false)?;
    }
    notify.finish(events);
    Ok(())
}

//! Channels: creating, finding, listing, updating and archiving them.

use crate::access::{access_channel_by_id, access_channel_by_name};
use crate::context::Context;
use crate::error::ActionResult;
use crate::new_subscriptions::subscribe_in_transaction;
use crate::notify::channels::{
    active_users, channel_changed, default_streams, stream_archived, People, StreamUpdate,
    SubscribeEvents,
};
use crate::policy::{self, Policy};
use crate::time::now;
use parley_domain::access::{can_access_channel_metadata, can_administer_channel};
use parley_domain::channel::{
    check_channel_description, check_channel_name, Channel, ChannelPermissions, Retention,
    TopicsPolicy,
};
use parley_domain::groups::{GroupSetting, SystemGroup};
use parley_domain::user::User;
use parley_domain::{ChannelId, ErrorCode, RequestError, UserId};
use parley_events::Event;
use parley_storage::{channels, subscriptions, users, DbConn, StorageError};
use parley_wire as wire;
use parley_wire::channel::ListedChannel;
use serde_json::Value;
use std::collections::HashSet;

/// What a new channel is created with; `None` fields take their defaults.
#[derive(Debug, Clone, Default)]
pub struct NewChannel {
    /// Name.
    pub name: String,
    /// Markdown description.
    pub description: String,
    /// Private channel.
    pub invite_only: bool,
    /// Web-public channel.
    pub is_web_public: bool,
    /// Add to the default channels of new users.
    pub is_default_stream: bool,
    /// New subscribers see earlier history; defaults to true for public channels.
    pub history_public_to_subscribers: Option<bool>,
    /// Retention policy.
    pub message_retention_days: Option<Retention>,
    /// Empty-topic policy.
    pub topics_policy: Option<TopicsPolicy>,
    /// Channel folder.
    pub folder_id: Option<i64>,
    /// Permissions given explicitly, by API name.
    pub permissions: Vec<(String, GroupSetting)>,
    /// Have the Notification Bot announce the channel in the announcements channel.
    pub announce: bool,
}

fn nobody(policy: &Policy) -> GroupSetting {
    setting_for(policy, SystemGroup::Nobody)
}

fn setting_for(policy: &Policy, group: SystemGroup) -> GroupSetting {
    policy
        .groups
        .system_id(group)
        .map(GroupSetting::Group)
        .unwrap_or(GroupSetting::Anonymous {
            direct_members: Vec::new(),
            direct_subgroups: Vec::new(),
        })
}

/// The permissions of a new channel before explicit values: the reference server's defaults.
fn default_permissions(policy: &Policy, creator: Option<UserId>) -> ChannelPermissions {
    ChannelPermissions {
        can_add_subscribers_group: nobody(policy),
        can_administer_channel_group: match creator {
            Some(id) => GroupSetting::Anonymous {
                direct_members: vec![id],
                direct_subgroups: Vec::new(),
            },
            None => nobody(policy),
        },
        can_delete_any_message_group: nobody(policy),
        can_delete_own_message_group: nobody(policy),
        can_move_messages_out_of_channel_group: nobody(policy),
        can_move_messages_within_channel_group: nobody(policy),
        can_remove_subscribers_group: setting_for(policy, SystemGroup::Administrators),
        can_send_message_group: setting_for(policy, SystemGroup::Everyone),
        can_subscribe_group: nobody(policy),
        can_resolve_topics_group: nobody(policy),
    }
}

/// Checks the creator's permission and the settings, and builds the channel row.
pub(crate) fn build_channel(
    conn: &mut DbConn,
    policy: &Policy,
    creator: Option<&User>,
    new: &NewChannel,
) -> ActionResult<Channel> {
    let name = check_channel_name(&new.name, "name")?;
    let description = check_channel_description(&new.description, "description")?;
    if !new.invite_only && new.history_public_to_subscribers == Some(false) {
        return Err(RequestError::bad_request("Invalid parameters").into());
    }
    if let Some(creator) = creator {
        if creator.role.is_guest() {
            return Err(RequestError::guests_not_allowed().into());
        }
        let (setting, what) = if new.is_web_public {
            (
                &policy.realm.can_create_web_public_channel_group,
                "web-public",
            )
        } else if new.invite_only {
            (&policy.realm.can_create_private_channel_group, "private")
        } else {
            (&policy.realm.can_create_public_channel_group, "public")
        };
        if !policy.groups.setting_contains(setting, creator) {
            tracing::debug!(what, "may not create channels of this kind");
            return Err(RequestError::insufficient_permission().into());
        }
        if new.message_retention_days.is_some() && !creator.role.is_owner() {
            return Err(RequestError::invalid_param(
                "message_retention_days",
                "Must be an organization owner",
            )
            .into());
        }
        if new.is_default_stream && !creator.role.is_admin() {
            return Err(RequestError::insufficient_permission().into());
        }
    }
    if new.is_web_public {
        let realm = parley_storage::realms::get(conn)?;
        if !realm.is_some_and(|r| r.enable_spectator_access) {
            return Err(RequestError::invalid_param(
                "is_web_public",
                "Web-public channels are not enabled.",
            )
            .into());
        }
    }
    if new.is_default_stream && new.invite_only {
        return Err(RequestError::bad_request("A default channel cannot be private.").into());
    }
    if let Some(folder) = new.folder_id {
        crate::channel_folders::check_folder_for_channel(conn, folder)?;
    }
    let mut permissions = default_permissions(policy, creator.map(|c| c.id));
    for (name, setting) in &new.permissions {
        policy.groups.check_setting(setting, name)?;
        check_direct_members(conn, setting, name)?;
        match permissions.get_mut(name) {
            Some(slot) => *slot = setting.clone(),
            None => {
                return Err(RequestError::bad_request(format!("Invalid permission {name}")).into())
            }
        }
    }
    let history_public = if new.invite_only {
        new.history_public_to_subscribers.unwrap_or(false)
    } else {
        true
    };
    Ok(Channel {
        id: ChannelId(0),
        rendered_description: parley_markdown::render(&description),
        name,
        description,
        invite_only: new.invite_only,
        is_web_public: new.is_web_public,
        history_public_to_subscribers: history_public,
        retention: new
            .message_retention_days
            .unwrap_or(Retention::RealmDefault),
        topics_policy: new.topics_policy.unwrap_or(TopicsPolicy::Inherit),
        is_archived: false,
        date_created: now(),
        creator_id: creator.map(|c| c.id),
        first_message_id: None,
        folder_id: new.folder_id,
        is_default: new.is_default_stream,
        permissions,
    })
}

/// Anonymous group settings may name only active users.
pub(crate) fn check_direct_members(
    conn: &mut DbConn,
    setting: &GroupSetting,
    var_name: &str,
) -> ActionResult<()> {
    let ids = setting.direct_members();
    if ids.is_empty() {
        return Ok(());
    }
    let found = users::by_ids(conn, ids)?;
    for id in ids {
        if !found.iter().any(|u| u.id == *id && u.is_active) {
            return Err(
                RequestError::invalid_param(var_name, format!("Invalid user ID: {id}")).into(),
            );
        }
    }
    Ok(())
}

/// Inserts a built channel; a taken name is `BAD_REQUEST`.
pub(crate) fn insert_channel(conn: &mut DbConn, channel: &Channel) -> ActionResult<ChannelId> {
    match channels::insert(conn, channel) {
        Err(StorageError::UniqueViolation(_)) => Err(channel_exists(&channel.name).into()),
        other => Ok(other?),
    }
}

/// `CHANNEL_ALREADY_EXISTS` (409) naming the channel.
fn channel_exists(name: &str) -> RequestError {
    RequestError::new(
        ErrorCode::ChannelAlreadyExists,
        format!("Channel '{name}' already exists"),
    )
    .with("channel_name", name)
}

/// `POST /channels/create`: creates a channel and subscribes `subscribers` (plus nobody else).
pub async fn create_channel(
    ctx: &Context,
    caller: User,
    new: NewChannel,
    subscribers: Vec<UserId>,
) -> ActionResult<ChannelId> {
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        let channel = build_channel(conn, &policy, Some(&caller), &new)?;
        let id = insert_channel(conn, &channel)?;
        let channel = Channel { id, ..channel };
        let targets = crate::access::users_by_ids(conn, &subscribers, "subscribers")?;
        let added = subscribe_in_transaction(conn, id, &targets)?;
        let people_list = active_users(conn)?;
        let people = People {
            users: &people_list,
            groups: &policy.groups,
        };
        let mut notify = SubscribeEvents::default();
        notify.record(conn, people, &channel, &added, true, true)?;
        notify.finish(events);
        if channel.is_default {
            events.push(default_streams(conn, people)?);
        }
        if new.announce {
            crate::notices::announce_channel(
                &ctx2,
                conn,
                events,
                &caller,
                &channel.name,
                channel.invite_only,
            )?;
        }
        Ok(id)
    })
    .await
}

/// `GET /get_stream_id`.
pub async fn get_channel_id(ctx: &Context, user: User, name: String) -> ActionResult<ChannelId> {
    ctx.run(move |conn| {
        let policy = policy::load(conn)?;
        match access_channel_by_name(conn, &policy, &user, &name)? {
            Some((channel, _)) => Ok(channel.id),
            None => Err(RequestError::bad_request(format!("Invalid channel name '{name}'")).into()),
        }
    })
    .await
}

/// Which channels `GET /streams` lists.
#[derive(Debug, Clone, Copy)]
pub struct ChannelFilter {
    /// Public channels.
    pub include_public: bool,
    /// Web-public channels.
    pub include_web_public: bool,
    /// Channels the user is subscribed to.
    pub include_subscribed: bool,
    /// Every channel (administrators only).
    pub include_all: bool,
    /// Default channels.
    pub include_default: bool,
    /// Leave archived channels out.
    pub exclude_archived: bool,
}

/// `GET /streams`: the channels the filter selects among those the user may see.
pub async fn list_channels(
    ctx: &Context,
    user: User,
    filter: ChannelFilter,
) -> ActionResult<Vec<ListedChannel>> {
    ctx.run(move |conn| {
        let policy = policy::load(conn)?;
        let subscribed: HashSet<ChannelId> = subscriptions::of_user(conn, user.id)?
            .into_iter()
            .filter(|s| s.active)
            .map(|s| s.channel_id)
            .collect();
        let counts = subscriptions::subscriber_counts(conn)?;
        let mut out = Vec::new();
        for channel in channels::all(conn)? {
            if filter.exclude_archived && channel.is_archived {
                continue;
            }
            let is_sub = subscribed.contains(&channel.id);
            if !can_access_channel_metadata(&user, &channel, is_sub, &policy.groups) {
                continue;
            }
            // include_all: every channel the caller may see (checked above).
            let wanted = filter.include_all
                || (filter.include_public && channel.is_public() && !user.role.is_guest())
                || (filter.include_web_public && channel.is_web_public)
                || (filter.include_subscribed && is_sub)
                || (filter.include_default && channel.is_default);
            if wanted {
                let count = counts.get(&channel.id).copied().unwrap_or(0);
                let listed = ListedChannel {
                    channel: wire::Channel::new(&channel, count),
                    is_default: filter.include_default.then_some(channel.is_default),
                };
                out.push((channel.name.to_lowercase(), listed));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out.into_iter().map(|(_, fields)| fields).collect())
    })
    .await
}

/// `GET /streams/{stream_id}`.
pub async fn get_channel(ctx: &Context, user: User, id: ChannelId) -> ActionResult<wire::Channel> {
    ctx.run(move |conn| {
        let policy = policy::load(conn)?;
        let (channel, _) = access_channel_by_id(conn, &policy, &user, id)?;
        let count = subscriptions::subscribers(conn, id)?.len() as i64;
        Ok(wire::Channel::new(&channel, count))
    })
    .await
}

/// `GET /streams/{stream_id}/members`: subscribers, for users who may see the channel's content.
pub async fn channel_members(
    ctx: &Context,
    user: User,
    id: ChannelId,
) -> ActionResult<Vec<UserId>> {
    ctx.run(move |conn| {
        let policy = policy::load(conn)?;
        let (channel, subscribed) = access_channel_by_id(conn, &policy, &user, id)?;
        if !subscribed
            && channel.invite_only
            && !can_administer_channel(&user, &channel, &policy.groups)
        {
            return Err(RequestError::bad_request(
                "Unable to retrieve subscribers for private channel",
            )
            .into());
        }
        Ok(subscriptions::subscribers(conn, id)?)
    })
    .await
}

/// Changes to a channel (`PATCH /streams/{stream_id}`); `None` leaves a field alone.
#[derive(Debug, Clone, Default)]
pub struct ChannelUpdate {
    /// New name.
    pub new_name: Option<String>,
    /// New Markdown description.
    pub description: Option<String>,
    /// New privacy.
    pub is_private: Option<bool>,
    /// New web-public state.
    pub is_web_public: Option<bool>,
    /// New history setting.
    pub history_public_to_subscribers: Option<bool>,
    /// New default-channel state.
    pub is_default_stream: Option<bool>,
    /// New retention.
    pub message_retention_days: Option<Retention>,
    /// New empty-topic policy.
    pub topics_policy: Option<TopicsPolicy>,
    /// New folder (`Some(None)`: out of any folder).
    pub folder_id: Option<Option<i64>>,
    /// New permissions by API name, each with the value the client expects to replace.
    pub permissions: Vec<(String, GroupSetting, Option<GroupSetting>)>,
}

/// `PATCH /streams/{stream_id}`: channel administrators change its settings.
pub async fn update_channel(
    ctx: &Context,
    user: User,
    id: ChannelId,
    update: ChannelUpdate,
) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        let (mut channel, _) = access_channel_by_id(conn, &policy, &user, id)?;
        if !can_administer_channel(&user, &channel, &policy.groups) {
            return Err(not_administrator().into());
        }
        let old = channel.clone();
        if let Some(name) = &update.new_name {
            let name = check_channel_name(name, "new_name")?;
            if name == channel.name {
                return Err(RequestError::bad_request("Channel already has that name.").into());
            }
            if let Some(other) = channels::by_name(conn, &name)? {
                if other.id != channel.id {
                    return Err(channel_exists(&name).into());
                }
            }
            channel.name = name;
        }
        if let Some(description) = &update.description {
            channel.description = check_channel_description(description, "description")?;
            channel.rendered_description = parley_markdown::render(&channel.description);
        }
        if let Some(private) = update.is_private {
            if private && channel.is_default {
                return Err(
                    RequestError::bad_request("A default channel cannot be private.").into(),
                );
            }
            channel.invite_only = private;
            if !private {
                channel.history_public_to_subscribers = true;
            }
        }
        if let Some(web_public) = update.is_web_public {
            if web_public {
                let enabled =
                    parley_storage::realms::get(conn)?.is_some_and(|r| r.enable_spectator_access);
                if !enabled
                    || !policy
                        .groups
                        .setting_contains(&policy.realm.can_create_web_public_channel_group, &user)
                {
                    return Err(RequestError::invalid_param(
                        "is_web_public",
                        "Web-public channels are not enabled.",
                    )
                    .into());
                }
            }
            channel.is_web_public = web_public;
        }
        if channel.is_public()
            && (update.is_private.is_some() || update.is_web_public.is_some())
            && crate::moderation::is_moderation_request_channel(conn, channel.id)?
        {
            return Err(
                RequestError::bad_request("Moderation request channel must be private.").into(),
            );
        }
        if let Some(history) = update.history_public_to_subscribers {
            if channel.invite_only {
                channel.history_public_to_subscribers = history;
            }
        }
        if let Some(default) = update.is_default_stream {
            if !user.role.is_admin() {
                return Err(RequestError::bad_request(
                    "You do not have permission to change default channels.",
                )
                .into());
            }
            if default && channel.invite_only {
                return Err(
                    RequestError::bad_request("A default channel cannot be private.").into(),
                );
            }
            channel.is_default = default;
        }
        if let Some(retention) = update.message_retention_days {
            if !user.role.is_owner() {
                return Err(RequestError::invalid_param(
                    "message_retention_days",
                    "Must be an organization owner",
                )
                .into());
            }
            channel.retention = retention;
        }
        if let Some(topics_policy) = update.topics_policy {
            channel.topics_policy = topics_policy;
        }
        if let Some(folder) = update.folder_id {
            if let Some(id) = folder {
                crate::channel_folders::check_folder_for_channel(conn, id)?;
            }
            channel.folder_id = folder;
        }
        for (name, setting, expected) in &update.permissions {
            policy.groups.check_setting(setting, name)?;
            check_direct_members(conn, setting, name)?;
            if let Some(slot) = channel.permissions.get_mut(name) {
                if expected.as_ref().is_some_and(|old| old != slot) {
                    return Err(RequestError::new(
                        ErrorCode::ExpectationMismatch,
                        "'old' value does not match the expected value.",
                    )
                    .with("field_name", "old")
                    .into());
                }
                *slot = setting.clone();
            }
        }
        channels::update(conn, &channel)?;
        let people_list = active_users(conn)?;
        let people = People {
            users: &people_list,
            groups: &policy.groups,
        };
        channel_changed(
            conn,
            people,
            &old,
            &channel,
            update_events(&old, &channel),
            events,
        )?;
        if old.is_default != channel.is_default {
            events.push(default_streams(conn, people)?);
        }
        Ok(())
    })
    .await
}

/// The `stream` `update` events of a change, in the reference's shapes: a rename (first)
/// carries the old name; a description its rendering; a privacy change (of `invite_only`,
/// `history_public_to_subscribers` or `is_web_public`) is one `invite_only` event carrying all
/// three; permissions carry their group-setting values.
fn update_events(old: &Channel, new: &Channel) -> Vec<StreamUpdate> {
    let mut out = Vec::new();
    if old.name != new.name {
        // Under the name clients knew the channel by.
        out.push(StreamUpdate::new(
            &old.name,
            "name",
            new.name.clone().into(),
        ));
    }
    let update = |property: &str, value: Value| StreamUpdate::new(&new.name, property, value);
    if old.description != new.description {
        out.push(StreamUpdate {
            rendered_description: Some(new.rendered_description.clone()),
            ..update("description", new.description.clone().into())
        });
    }
    if old.invite_only != new.invite_only
        || old.history_public_to_subscribers != new.history_public_to_subscribers
        || old.is_web_public != new.is_web_public
    {
        out.push(StreamUpdate {
            history_public_to_subscribers: Some(new.history_public_to_subscribers),
            is_web_public: Some(new.is_web_public),
            ..update("invite_only", new.invite_only.into())
        });
    }
    if old.retention != new.retention {
        out.push(update(
            "message_retention_days",
            new.retention.api_value().into(),
        ));
    }
    if old.topics_policy != new.topics_policy {
        out.push(update("topics_policy", new.topics_policy.name().into()));
    }
    if old.folder_id != new.folder_id {
        out.push(update("folder_id", new.folder_id.into()));
    }
    for ((name, before), after) in ChannelPermissions::NAMES
        .iter()
        .zip(old.permissions.values())
        .zip(new.permissions.values())
    {
        if before != after {
            out.push(update(
                name,
                serde_json::to_value(after).unwrap_or(Value::Null),
            ));
        }
    }
    out
}

fn not_administrator() -> RequestError {
    RequestError::bad_request("You do not have permission to administer this channel.")
}

/// `DELETE /streams/{stream_id}`: archives the channel; its messages stay, nobody can post.
pub async fn archive_channel(ctx: &Context, user: User, id: ChannelId) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        let (mut channel, _) = access_channel_by_id(conn, &policy, &user, id)?;
        if !can_administer_channel(&user, &channel, &policy.groups) {
            return Err(not_administrator().into());
        }
        if channel.is_archived {
            return Err(RequestError::bad_request("Channel is already deactivated").into());
        }
        let was_default = channel.is_default;
        let subscribers = subscriptions::subscribers(conn, id)?;
        let people_list = active_users(conn)?;
        let people = People {
            users: &people_list,
            groups: &policy.groups,
        };
        // Who could see it before: archiving hides it from clients without archived_channels.
        let audience: Vec<UserId> = people.viewers(&channel, &subscribers).into_iter().collect();
        channel.is_archived = true;
        channel.is_default = false;
        channels::update(conn, &channel)?;
        if was_default {
            events.push(default_streams(conn, people)?);
        }
        if !audience.is_empty() {
            events.push(Event::to_users(
                audience,
                stream_archived(&channel, subscribers.len()),
            ));
        }
        Ok(())
    })
    .await
}

/// `POST` / `DELETE /default_streams`: administrators add a public channel to, or remove a
/// channel from, the channels new users join.
pub async fn set_default_channel(
    ctx: &Context,
    user: User,
    id: ChannelId,
    default: bool,
) -> ActionResult<()> {
    if !user.role.is_admin() {
        return Err(RequestError::admin_required().into());
    }
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        let (mut channel, _) = access_channel_by_id(conn, &policy, &user, id)?;
        if default && channel.invite_only {
            return Err(
                RequestError::bad_request("Private channels cannot be made default.").into(),
            );
        }
        if channel.is_default == default {
            return Ok(());
        }
        channel.is_default = default;
        channels::update(conn, &channel)?;
        let people_list = active_users(conn)?;
        let people = People {
            users: &people_list,
            groups: &policy.groups,
        };
        events.push(default_streams(conn, people)?);
        Ok(())
    })
    .await
}

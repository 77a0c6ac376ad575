//! Channels and default channels.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::channels;
use diesel::prelude::*;
use parley_domain::channel::{
    channel_name_key, Channel, ChannelPermissions, Retention, TopicsPolicy,
};
use parley_domain::groups::GroupSetting;
use parley_domain::{ChannelId, UserId};

#[derive(Queryable, Selectable)]
#[diesel(table_name = channels)]
struct ChannelRow {
    id: i64,
    name: String,
    description: String,
    rendered_description: String,
    invite_only: bool,
    is_web_public: bool,
    history_public_to_subscribers: bool,
    message_retention_days: Option<i64>,
    topics_policy: String,
    is_archived: bool,
    date_created: i64,
    creator_id: Option<i64>,
    first_message_id: Option<i64>,
    folder_id: Option<i64>,
    is_default: bool,
    can_add_subscribers_group: String,
    can_administer_channel_group: String,
    can_delete_any_message_group: String,
    can_delete_own_message_group: String,
    can_move_messages_out_of_channel_group: String,
    can_move_messages_within_channel_group: String,
    can_remove_subscribers_group: String,
    can_send_message_group: String,
    can_subscribe_group: String,
    can_resolve_topics_group: String,
}

/// A stored setting that no longer parses grants nothing, rather than failing every read.
fn setting(text: &str) -> GroupSetting {
    GroupSetting::from_json(text).unwrap_or(GroupSetting::Anonymous {
        direct_members: Vec::new(),
        direct_subgroups: Vec::new(),
    })
}

impl From<ChannelRow> for Channel {
    fn from(row: ChannelRow) -> Channel {
        Channel {
            id: ChannelId(row.id),
            name: row.name,
            description: row.description,
            rendered_description: row.rendered_description,
            invite_only: row.invite_only,
            is_web_public: row.is_web_public,
            history_public_to_subscribers: row.history_public_to_subscribers,
            retention: Retention::from_column(row.message_retention_days),
            topics_policy: TopicsPolicy::from_name(&row.topics_policy)
                .unwrap_or(TopicsPolicy::Inherit),
            is_archived: row.is_archived,
            date_created: row.date_created,
            creator_id: row.creator_id.map(UserId),
            first_message_id: row.first_message_id,
            folder_id: row.folder_id,
            is_default: row.is_default,
            permissions: ChannelPermissions {
                can_add_subscribers_group: setting(&row.can_add_subscribers_group),
                can_administer_channel_group: setting(&row.can_administer_channel_group),
                can_delete_any_message_group: setting(&row.can_delete_any_message_group),
                can_delete_own_message_group: setting(&row.can_delete_own_message_group),
                can_move_messages_out_of_channel_group: setting(
                    &row.can_move_messages_out_of_channel_group,
                ),
                can_move_messages_within_channel_group: setting(
                    &row.can_move_messages_within_channel_group,
                ),
                can_remove_subscribers_group: setting(&row.can_remove_subscribers_group),
                can_send_message_group: setting(&row.can_send_message_group),
                can_subscribe_group: setting(&row.can_subscribe_group),
                can_resolve_topics_group: setting(&row.can_resolve_topics_group),
            },
        }
    }
}

/// Inserts a channel (its `id` is ignored); a taken name is a unique violation.
pub fn insert(conn: &mut DbConn, channel: &Channel) -> Result<ChannelId, StorageError> {
    let p = &channel.permissions;
    let id = diesel::insert_into(channels::table)
        .values((
            channels::name.eq(&channel.name),
            channels::name_key.eq(channel_name_key(&channel.name)),
            channels::description.eq(&channel.description),
            channels::rendered_description.eq(&channel.rendered_description),
            channels::invite_only.eq(channel.invite_only),
            channels::is_web_public.eq(channel.is_web_public),
            channels::history_public_to_subscribers.eq(channel.history_public_to_subscribers),
            channels::message_retention_days.eq(channel.retention.to_column()),
            channels::topics_policy.eq(channel.topics_policy.name()),
            channels::is_archived.eq(channel.is_archived),
            channels::date_created.eq(channel.date_created),
            channels::creator_id.eq(channel.creator_id.map(|id| id.0)),
            channels::folder_id.eq(channel.folder_id),
            channels::is_default.eq(channel.is_default),
            (
                channels::can_add_subscribers_group.eq(p.can_add_subscribers_group.to_json()),
                channels::can_administer_channel_group.eq(p.can_administer_channel_group.to_json()),
                channels::can_delete_any_message_group.eq(p.can_delete_any_message_group.to_json()),
                channels::can_delete_own_message_group.eq(p.can_delete_own_message_group.to_json()),
                channels::can_move_messages_out_of_channel_group
                    .eq(p.can_move_messages_out_of_channel_group.to_json()),
                channels::can_move_messages_within_channel_group
                    .eq(p.can_move_messages_within_channel_group.to_json()),
                channels::can_remove_subscribers_group.eq(p.can_remove_subscribers_group.to_json()),
                channels::can_send_message_group.eq(p.can_send_message_group.to_json()),
                channels::can_subscribe_group.eq(p.can_subscribe_group.to_json()),
                channels::can_resolve_topics_group.eq(p.can_resolve_topics_group.to_json()),
            ),
        ))
        .returning(channels::id)
        .get_result::<i64>(conn)?;
    Ok(ChannelId(id))
}

/// Writes every field of an existing channel.
pub fn update(conn: &mut DbConn, channel: &Channel) -> Result<(), StorageError> {
    let p = &channel.permissions;
    diesel::update(channels::table.find(channel.id.0))
        .set((
            channels::name.eq(&channel.name),
            channels::name_key.eq(channel_name_key(&channel.name)),
            channels::description.eq(&channel.description),
            channels::rendered_description.eq(&channel.rendered_description),
            channels::invite_only.eq(channel.invite_only),
            channels::is_web_public.eq(channel.is_web_public),
            channels::history_public_to_subscribers.eq(channel.history_public_to_subscribers),
            channels::message_retention_days.eq(channel.retention.to_column()),
            channels::topics_policy.eq(channel.topics_policy.name()),
            channels::is_archived.eq(channel.is_archived),
            channels::first_message_id.eq(channel.first_message_id),
            channels::folder_id.eq(channel.folder_id),
            channels::is_default.eq(channel.is_default),
            (
                channels::can_add_subscribers_group.eq(p.can_add_subscribers_group.to_json()),
                channels::can_administer_channel_group.eq(p.can_administer_channel_group.to_json()),
                channels::can_delete_any_message_group.eq(p.can_delete_any_message_group.to_json()),
                channels::can_delete_own_message_group.eq(p.can_delete_own_message_group.to_json()),
                channels::can_move_messages_out_of_channel_group
                    .eq(p.can_move_messages_out_of_channel_group.to_json()),
                channels::can_move_messages_within_channel_group
                    .eq(p.can_move_messages_within_channel_group.to_json()),
                channels::can_remove_subscribers_group.eq(p.can_remove_subscribers_group.to_json()),
                channels::can_send_message_group.eq(p.can_send_message_group.to_json()),
                channels::can_subscribe_group.eq(p.can_subscribe_group.to_json()),
                channels::can_resolve_topics_group.eq(p.can_resolve_topics_group.to_json()),
            ),
        ))
        .execute(conn)?;
    Ok(())
}

/// The channel with this ID.
pub fn by_id(conn: &mut DbConn, id: ChannelId) -> Result<Option<Channel>, StorageError> {
    Ok(channels::table
        .find(id.0)
        .select(ChannelRow::as_select())
        .first(conn)
        .optional()?
        .map(Channel::from))
}

/// The channel with this name, ignoring case.
pub fn by_name(conn: &mut DbConn, name: &str) -> Result<Option<Channel>, StorageError> {
    Ok(channels::table
        .filter(channels::name_key.eq(channel_name_key(name)))
        .select(ChannelRow::as_select())
        .first(conn)
        .optional()?
        .map(Channel::from))
}

/// Every channel, archived ones included, in ID order.
pub fn all(conn: &mut DbConn) -> Result<Vec<Channel>, StorageError> {
    Ok(channels::table
        .order(channels::id)
        .select(ChannelRow::as_select())
        .load(conn)?
        .into_iter()
        .map(Channel::from)
        .collect())
}

/// The channels with these IDs that exist.
pub fn by_ids(conn: &mut DbConn, ids: &[ChannelId]) -> Result<Vec<Channel>, StorageError> {
    let raw: Vec<i64> = ids.iter().map(|id| id.0).collect();
    Ok(channels::table
        .filter(channels::id.eq_any(raw))
        .order(channels::id)
        .select(ChannelRow::as_select())
        .load(conn)?
        .into_iter()
        .map(Channel::from)
        .collect())
}

/// Records a channel's first message, once.
pub fn set_first_message(
    conn: &mut DbConn,
    channel: ChannelId,
    message: i64,
) -> Result<(), StorageError> {
    diesel::update(
        channels::table
            .find(channel.0)
            .filter(channels::first_message_id.is_null()),
    )
    .set(channels::first_message_id.eq(message))
    .execute(conn)?;
    Ok(())
}

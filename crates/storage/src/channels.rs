//! Channels and default channels.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::channels;
use crate::schema::subscriptions as subs;
use crate::spans::advisory::pg_advisory_xact_lock_shared;
use crate::spans::{SendHold, CHANNEL_LOCKS, SPANS_LOCK};
use crate::subscriptions::{self, Subscription};
use diesel::prelude::*;
use parley_domain::channel::{
    channel_name_key, Channel, ChannelPermissions, Retention, TopicsPolicy,
};
use parley_domain::groups::GroupSetting;
use parley_domain::{ChannelId, UserId};

/// A stored channel: its ID and the columns it is written with.
#[derive(Queryable, Selectable)]
#[diesel(table_name = channels)]
struct ChannelRow {
    id: i64,
    #[diesel(embed)]
    values: ChannelValues,
}

/// A stored setting that no longer parses grants nothing, rather than failing every read.
fn setting(text: &str) -> GroupSetting {
    GroupSetting::from_json(text).unwrap_or(GroupSetting::Anonymous {
        direct_members: Vec::new(),
        direct_subgroups: Vec::new(),
    })
}

impl From<ChannelRow> for Channel {
    fn from(ChannelRow { id, values: row }: ChannelRow) -> Channel {
        Channel {
            id: ChannelId(id),
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

/// Every column of a channel row but its ID: read, inserted and updated the same way.
#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = channels, treat_none_as_null = true)]
struct ChannelValues {
    name: String,
    name_key: String,
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

impl From<&Channel> for ChannelValues {
    fn from(channel: &Channel) -> Self {
        let p = &channel.permissions;
        ChannelValues {
            name: channel.name.clone(),
            name_key: channel_name_key(&channel.name),
            description: channel.description.clone(),
            rendered_description: channel.rendered_description.clone(),
            invite_only: channel.invite_only,
            is_web_public: channel.is_web_public,
            history_public_to_subscribers: channel.history_public_to_subscribers,
            message_retention_days: channel.retention.to_column(),
            topics_policy: channel.topics_policy.name().to_owned(),
            is_archived: channel.is_archived,
            date_created: channel.date_created,
            creator_id: channel.creator_id.map(|id| id.0),
            first_message_id: channel.first_message_id,
            folder_id: channel.folder_id,
            is_default: channel.is_default,
            can_add_subscribers_group: p.can_add_subscribers_group.to_json(),
            can_administer_channel_group: p.can_administer_channel_group.to_json(),
            can_delete_any_message_group: p.can_delete_any_message_group.to_json(),
            can_delete_own_message_group: p.can_delete_own_message_group.to_json(),
            can_move_messages_out_of_channel_group: p
                .can_move_messages_out_of_channel_group
                .to_json(),
            can_move_messages_within_channel_group: p
                .can_move_messages_within_channel_group
                .to_json(),
            can_remove_subscribers_group: p.can_remove_subscribers_group.to_json(),
            can_send_message_group: p.can_send_message_group.to_json(),
            can_subscribe_group: p.can_subscribe_group.to_json(),
            can_resolve_topics_group: p.can_resolve_topics_group.to_json(),
        }
    }
}

/// Inserts a channel (its `id` is ignored); a taken name is a unique violation.
pub fn insert(conn: &mut DbConn, channel: &Channel) -> Result<ChannelId, StorageError> {
    let id = diesel::insert_into(channels::table)
        .values(ChannelValues::from(channel))
        .returning(channels::id)
        .get_result::<i64>(conn)?;
    Ok(ChannelId(id))
}

/// Writes every field of an existing channel.
pub fn update(conn: &mut DbConn, channel: &Channel) -> Result<(), StorageError> {
    diesel::update(channels::table.find(channel.id.0))
        .set(ChannelValues::from(channel))
        .execute(conn)?;
    Ok(())
}

/// The channel with this ID.
pub fn by_id(conn: &mut DbConn, id: ChannelId) -> Result<Option<Channel>, StorageError> {
    Ok(channels::table
        .find(id.0)
        .select(ChannelRow::as_select())
        .get_result(conn)
        .optional()?
        .map(Channel::from))
}

/// The channel a filter selects, left-joined with one user's subscription row for it.
macro_rules! with_subscription {
    (@join $filter:expr, $user:expr) => {
        channels::table
            .left_join(
                subs::table.on(subs::channel_id
                    .eq(channels::id)
                    .and(subs::user_id.eq($user.0))),
            )
            .filter($filter)
    };
    ($conn:expr, $filter:expr, $user:expr) => {
        with_subscription!(@join $filter, $user)
            .select((ChannelRow::as_select(), subscriptions::columns().nullable()))
            .get_result::<(ChannelRow, Option<subscriptions::Row>)>($conn)
            .optional()?
            .map(|(channel, subscription)| {
                (
                    Channel::from(channel),
                    subscription.map(subscriptions::from_row),
                )
            })
    };
    // `$locks`: two locks the statement takes once it found the channel ([`for_send`]).
    ($conn:expr, $filter:expr, $user:expr, locks: $locks:expr) => {
        with_subscription!(@join $filter, $user)
            .select((
                ChannelRow::as_select(),
                subscriptions::columns().nullable(),
                $locks,
            ))
            .get_result::<(ChannelRow, Option<subscriptions::Row>, (bool, bool))>($conn)
            .optional()?
            .map(|(channel, subscription, _)| {
                (
                    Channel::from(channel),
                    subscription.map(subscriptions::from_row),
                )
            })
    };
}

/// The channel with this ID and `user`'s subscription row for it (active or not), in one
/// statement: every permission check of a channel needs both.
pub fn by_id_with_subscription(
    conn: &mut DbConn,
    id: ChannelId,
    user: UserId,
) -> Result<Option<(Channel, Option<Subscription>)>, StorageError> {
    Ok(with_subscription!(conn, channels::id.eq(id.0), user))
}

/// [`by_id_with_subscription`] by name, ignoring case.
pub fn by_name_with_subscription(
    conn: &mut DbConn,
    name: &str,
    user: UserId,
) -> Result<Option<(Channel, Option<Subscription>)>, StorageError> {
    Ok(with_subscription!(
        conn,
        channels::name_key.eq(channel_name_key(name)),
        user
    ))
}

/// How a send names its channel.
#[derive(Debug, Clone, Copy)]
pub enum ChannelKey<'a> {
    /// By ID.
    Id(ChannelId),
    /// By name, ignoring case.
    Name(&'a str),
}

/// The channel a message is sent to, with the sender's subscription row, as
/// [`by_id_with_subscription`] reads it, and the send's locks held (`spans::hold_for_send`,
/// both shared). On PostgreSQL the statement that finds the channel takes them,
/// once it has found it: one round trip less per send, and the same order as a statement of
/// their own after this one (the channel is read as of before the locks were granted, the
/// recipients after them). On SQLite writes take turns: nothing to take.
pub fn for_send(
    conn: &mut DbConn,
    key: ChannelKey<'_>,
    user: UserId,
) -> Result<Option<(Channel, Option<Subscription>, SendHold)>, StorageError> {
    // `void` is not decoded: each lock is selected as whether it returned something.
    let spans_lock = || pg_advisory_xact_lock_shared(SPANS_LOCK).is_not_null();
    let shared = || pg_advisory_xact_lock_shared(channels::id + CHANNEL_LOCKS).is_not_null();
    let found = match (conn, key) {
        (conn @ DbConn::Sqlite(_), ChannelKey::Id(id)) => by_id_with_subscription(conn, id, user)?,
        (conn @ DbConn::Sqlite(_), ChannelKey::Name(name)) => {
            by_name_with_subscription(conn, name, user)?
        }
        (DbConn::Pg(pg), ChannelKey::Id(id)) => {
            let filter = channels::id.eq(id.0);
            with_subscription!(pg, filter, user, locks: (spans_lock(), shared()))
        }
        (DbConn::Pg(pg), ChannelKey::Name(name)) => {
            let filter = channels::name_key.eq(channel_name_key(name));
            with_subscription!(pg, filter, user, locks: (spans_lock(), shared()))
        }
    };
    Ok(found.map(|(channel, subscription)| {
        let hold = SendHold::taken(channel.id);
        (channel, subscription, hold)
    }))
}

/// The channel with this name, ignoring case.
pub fn by_name(conn: &mut DbConn, name: &str) -> Result<Option<Channel>, StorageError> {
    Ok(channels::table
        .filter(channels::name_key.eq(channel_name_key(name)))
        .select(ChannelRow::as_select())
        .get_result(conn)
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

/// The names of these channels, for the messages that show them (a page names up to a hundred
/// channels: their full rows, each with its permission settings to parse, cost several times
/// more and say nothing more there).
pub fn names_of(
    conn: &mut DbConn,
    ids: &[ChannelId],
) -> Result<Vec<(ChannelId, String)>, StorageError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let raw: Vec<i64> = ids.iter().map(|id| id.0).collect();
    Ok(channels::table
        .filter(channels::id.eq_any(raw))
        .select((channels::id, channels::name))
        .load::<(i64, String)>(conn)?
        .into_iter()
        .map(|(id, name)| (ChannelId(id), name))
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

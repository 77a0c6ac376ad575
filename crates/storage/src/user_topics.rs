//! People's visibility policies for topics.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::user_topics;
use crate::sql::{Bind, SqlBuilder};
use diesel::prelude::*;
use parley_domain::{ChannelId, UserId};

/// One person's policy for one topic.
#[derive(Debug, Clone, PartialEq, Queryable)]
pub struct UserTopic {
    /// Whose.
    pub user_id: i64,
    /// The channel.
    pub channel_id: i64,
    /// The topic, lower-cased.
    pub topic_key: String,
    /// The topic as last named.
    pub topic: String,
    /// The policy's API value (never 0: inherit is no row).
    pub visibility_policy: i64,
    /// When it was set, Unix seconds.
    pub last_updated: i64,
}

type Columns = (
    user_topics::user_id,
    user_topics::channel_id,
    user_topics::topic_key,
    user_topics::topic,
    user_topics::visibility_policy,
    user_topics::last_updated,
);

const COLUMNS: Columns = (
    user_topics::user_id,
    user_topics::channel_id,
    user_topics::topic_key,
    user_topics::topic,
    user_topics::visibility_policy,
    user_topics::last_updated,
);

/// The policies of these users for one topic.
pub fn for_topic(
    conn: &mut DbConn,
    users: &[UserId],
    channel: ChannelId,
    topic: &str,
) -> Result<Vec<UserTopic>, StorageError> {
    let ids: Vec<i64> = users.iter().map(|u| u.0).collect();
    Ok(user_topics::table
        .filter(user_topics::channel_id.eq(channel.0))
        .filter(user_topics::topic_key.eq(topic.to_lowercase()))
        .filter(user_topics::user_id.eq_any(ids))
        .select(COLUMNS)
        .load(conn)?)
}

/// Every policy a user set, oldest change first.
pub fn of_user(conn: &mut DbConn, user: UserId) -> Result<Vec<UserTopic>, StorageError> {
    Ok(user_topics::table
        .filter(user_topics::user_id.eq(user.0))
        .order((user_topics::last_updated, user_topics::channel_id))
        .select(COLUMNS)
        .load(conn)?)
}

/// Sets a policy; 0 (inherit) removes it. An upsert, so two transactions setting the same
/// topic's policy at once (two first messages in a new topic) both succeed instead of one
/// failing on the primary key.
pub fn set(
    conn: &mut DbConn,
    user: UserId,
    channel: ChannelId,
    topic: &str,
    policy: i64,
    now: i64,
) -> Result<(), StorageError> {
    let key = topic.to_lowercase();
    if policy == 0 {
        diesel::delete(
            user_topics::table
                .filter(user_topics::user_id.eq(user.0))
                .filter(user_topics::channel_id.eq(channel.0))
                .filter(user_topics::topic_key.eq(&key)),
        )
        .execute(conn)?;
        return Ok(());
    }
    let mut sql = SqlBuilder::new();
    sql.push("INSERT INTO user_topics (user_id, channel_id, topic_key, topic, visibility_policy, last_updated) VALUES (")
        .bind(Bind::Int(user.0))
        .push(", ")
        .bind(Bind::Int(channel.0))
        .push(", ")
        .bind(Bind::Text(key))
        .push(", ")
        .bind(Bind::Text(topic.to_owned()))
        .push(", ")
        .bind(Bind::Int(policy))
        .push(", ")
        .bind(Bind::Int(now))
        .push(
            ") ON CONFLICT (user_id, channel_id, topic_key) DO UPDATE SET topic = excluded.topic, \
             visibility_policy = excluded.visibility_policy, last_updated = excluded.last_updated",
        );
    sql.execute(conn)?;
    Ok(())
}

/// What a reader has muted, read in one statement: the channels they muted (subscribed) and
/// their policy for each topic that has one. Pages that skip muted messages (the home view,
/// `anchor=first_unread`) read both, `is:followed` the policies; two statements cost a round
/// trip more.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Muting {
    /// The channels the reader is subscribed to and muted.
    pub muted_channels: Vec<ChannelId>,
    /// `(channel, topic key, policy)` for each topic the reader set a policy for.
    pub topics: Vec<(ChannelId, String, i64)>,
}

/// The reader's [`Muting`].
pub fn muting_of(conn: &mut DbConn, user: UserId) -> Result<Muting, StorageError> {
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        channel_id: i64,
        #[diesel(sql_type = diesel::sql_types::Text)]
        topic_key: String,
        /// 0 (no policy has it) for a muted channel.
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        visibility_policy: i64,
    }
    let mut sql = SqlBuilder::new();
    sql.push(
        "SELECT channel_id, '' AS topic_key, CAST(0 AS BIGINT) AS visibility_policy \
         FROM subscriptions WHERE user_id = ",
    )
    .bind(Bind::Int(user.0))
    .push(
        " AND active AND is_muted UNION ALL \
         SELECT channel_id, topic_key, visibility_policy FROM user_topics WHERE user_id = ",
    )
    .bind(Bind::Int(user.0));
    let mut muting = Muting::default();
    for row in sql.prepared().load::<Row>(conn)? {
        match row.visibility_policy {
            0 => muting.muted_channels.push(ChannelId(row.channel_id)),
            policy => muting
                .topics
                .push((ChannelId(row.channel_id), row.topic_key, policy)),
        }
    }
    Ok(muting)
}

//! Emoji reactions to messages.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::reactions;
use diesel::prelude::*;
use parley_domain::{MessageId, UserId};

/// One user's reaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reaction {
    /// The message.
    pub message_id: MessageId,
    /// Who reacted.
    pub user_id: UserId,
    /// Emoji name.
    pub emoji_name: String,
    /// Emoji code within its namespace.
    pub emoji_code: String,
    /// `unicode_emoji`, `realm_emoji` or `zulip_extra_emoji`.
    pub reaction_type: String,
}

/// The reactions to these messages, in the order they were made.
pub fn of_messages(conn: &mut DbConn, ids: &[MessageId]) -> Result<Vec<Reaction>, StorageError> {
    let raw: Vec<i64> = ids.iter().map(|m| m.0).collect();
    Ok(reactions::table
        .filter(reactions::message_id.eq_any(raw))
        .order(reactions::id)
        .select((
            reactions::message_id,
            reactions::user_id,
            reactions::emoji_name,
            reactions::emoji_code,
            reactions::reaction_type,
        ))
        .load::<(i64, i64, String, String, String)>(conn)?
        .into_iter()
        .map(|(m, u, name, code, kind)| Reaction {
            message_id: MessageId(m),
            user_id: UserId(u),
            emoji_name: name,
            emoji_code: code,
            reaction_type: kind,
        })
        .collect())
}

/// Adds a reaction; an identical one is a unique violation.
pub fn add(conn: &mut DbConn, reaction: &Reaction) -> Result<(), StorageError> {
    diesel::insert_into(reactions::table)
        .values((
            reactions::message_id.eq(reaction.message_id.0),
            reactions::user_id.eq(reaction.user_id.0),
            reactions::emoji_name.eq(&reaction.emoji_name),
            reactions::emoji_code.eq(&reaction.emoji_code),
            reactions::reaction_type.eq(&reaction.reaction_type),
        ))
        .execute(conn)?;
    Ok(())
}

/// Removes a user's reaction with this code and type; returns whether one existed.
pub fn remove(
    conn: &mut DbConn,
    message: MessageId,
    user: UserId,
    emoji_code: &str,
    reaction_type: &str,
) -> Result<bool, StorageError> {
    let n = diesel::delete(
        reactions::table
            .filter(reactions::message_id.eq(message.0))
            .filter(reactions::user_id.eq(user.0))
            .filter(reactions::emoji_code.eq(emoji_code))
            .filter(reactions::reaction_type.eq(reaction_type)),
    )
    .execute(conn)?;
    Ok(n > 0)
}

/// Users who reacted to any message of a channel topic.
pub fn reactors_in_topic(
    conn: &mut DbConn,
    channel: i64,
    topic_key: &str,
) -> Result<Vec<UserId>, StorageError> {
    use crate::schema::messages;
    Ok(reactions::table
        .inner_join(messages::table)
        .filter(messages::channel_id.eq(channel))
        .filter(messages::topic_key.eq(topic_key))
        .select(reactions::user_id)
        .distinct()
        .load::<i64>(conn)?
        .into_iter()
        .map(UserId)
        .collect())
}

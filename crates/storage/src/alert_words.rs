//! People's alert words: words or phrases that flag a message for them when it contains one.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::alert_words;
use diesel::prelude::*;
use parley_domain::message::flags;
use parley_domain::{ChannelId, MessageId, UserId};

/// Recipients per query when loading many people's words (below every backend's bind limit).
const USERS_PER_QUERY: usize = 5000;

/// A person's words, as typed, in the order they were added.
pub fn of_user(conn: &mut DbConn, user: UserId) -> Result<Vec<String>, StorageError> {
    Ok(alert_words::table
        .filter(alert_words::user_id.eq(user.0))
        .order(alert_words::id)
        .select(alert_words::word)
        .load(conn)?)
}

/// The words of these people, as `(person, word)` pairs: one query for up to 5,000 people.
pub fn of_users(
    conn: &mut DbConn,
    users: &[UserId],
) -> Result<Vec<(UserId, String)>, StorageError> {
    let mut out = Vec::new();
    for chunk in users.chunks(USERS_PER_QUERY) {
        let ids: Vec<i64> = chunk.iter().map(|u| u.0).collect();
        let rows: Vec<(i64, String)> = alert_words::table
            .filter(alert_words::user_id.eq_any(ids))
            .select((alert_words::user_id, alert_words::word))
            .load(conn)?;
        out.extend(rows.into_iter().map(|(user, word)| (UserId(user), word)));
    }
    Ok(out)
}

/// The words of the users with an open span of the channel (the recipients of a message sent
/// there now), in one statement whose cost follows the words, not the channel's size.
pub fn of_channel_recipients(
    conn: &mut DbConn,
    channel: ChannelId,
) -> Result<Vec<(UserId, String)>, StorageError> {
    use crate::schema::subscription_spans as spans;
    let rows: Vec<(i64, String)> = alert_words::table
        .inner_join(spans::table.on(spans::user_id.eq(alert_words::user_id)))
        .filter(spans::channel_id.eq(channel.0))
        .filter(spans::end_message_id.is_null())
        .select((alert_words::user_id, alert_words::word))
        .load(conn)?;
    Ok(rows
        .into_iter()
        .map(|(user, word)| (UserId(user), word))
        .collect())
}

/// Adds words that the person does not have yet (compared case-insensitively); the caller
/// passes them cleaned and without duplicates among themselves.
pub fn add(conn: &mut DbConn, user: UserId, words: &[String]) -> Result<(), StorageError> {
    let have: Vec<String> = alert_words::table
        .filter(alert_words::user_id.eq(user.0))
        .select(alert_words::word_key)
        .load(conn)?;
    for word in words {
        let key = word.to_lowercase();
        if have.contains(&key) {
            continue;
        }
        diesel::insert_into(alert_words::table)
            .values((
                alert_words::user_id.eq(user.0),
                alert_words::word.eq(word),
                alert_words::word_key.eq(&key),
            ))
            .execute(conn)?;
    }
    Ok(())
}

/// Removes these words (case-insensitively); words the person does not have are ignored.
pub fn remove(conn: &mut DbConn, user: UserId, words: &[String]) -> Result<(), StorageError> {
    let keys: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    diesel::delete(
        alert_words::table
            .filter(alert_words::user_id.eq(user.0))
            .filter(alert_words::word_key.eq_any(keys)),
    )
    .execute(conn)?;
    Ok(())
}

/// Sets or clears the `has_alert_word` flag of a message's recipients to match `alerted`.
pub fn set_alerted(
    conn: &mut DbConn,
    message: MessageId,
    alerted: &[UserId],
) -> Result<(), StorageError> {
    for (user, bits) in crate::reader_flags::holders(conn, message)? {
        let wanted = if alerted.contains(&user) {
            bits | flags::HAS_ALERT_WORD
        } else {
            bits & !flags::HAS_ALERT_WORD
        };
        if wanted != bits {
            crate::reader_flags::set(conn, user, message, Some(wanted))?;
        }
    }
    Ok(())
}

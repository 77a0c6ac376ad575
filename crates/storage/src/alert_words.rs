//! People's alert words: words or phrases that flag a message for them when it contains one.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::alert_words;
use diesel::prelude::*;
use parley_domain::message::flags;
use parley_domain::{MessageId, UserId};

/// A person's words, as typed, in the order they were added.
pub fn of_user(conn: &mut DbConn, user: UserId) -> Result<Vec<String>, StorageError> {
    Ok(alert_words::table
        .filter(alert_words::user_id.eq(user.0))
        .order(alert_words::id)
        .select(alert_words::word)
        .load(conn)?)
}

/// Every alert word of the organization as `(person, word)`: read whole by the organization
/// cache, so that a send flags its recipients without a statement.
pub fn all(conn: &mut DbConn) -> Result<Vec<(UserId, String)>, StorageError> {
    Ok(alert_words::table
        .order(alert_words::id)
        .select((alert_words::user_id, alert_words::word))
        .load::<(i64, String)>(conn)?
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

//! Messages to be sent later: scheduled messages and reminders, until the scheduler sends them.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::scheduled_messages as sm;
use diesel::prelude::*;
use parley_domain::UserId;

/// A scheduled message or reminder as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = sm)]
pub struct ScheduledMessage {
    /// Its ID (not the ID the message gets when sent).
    pub id: i64,
    /// Whose: the sender, or for a reminder the person reminded.
    pub sender_id: i64,
    /// `stream` or `private`.
    pub kind: String,
    /// The channel of a channel message.
    pub channel_id: Option<i64>,
    /// The recipients of a direct message, a JSON list of user IDs.
    pub recipient_ids: String,
    /// The topic of a channel message.
    pub topic: String,
    /// Markdown.
    pub content: String,
    /// HTML, as rendered when scheduled or last edited.
    pub rendered_content: String,
    /// When to send it, Unix seconds.
    pub scheduled_at: i64,
    /// `read_by_sender` of the send.
    pub read_by_sender: Option<bool>,
    /// Whether it was sent.
    pub delivered: bool,
    /// The message it became.
    pub delivered_message_id: Option<i64>,
    /// Whether sending it failed.
    pub failed: bool,
    /// Why, when it failed.
    pub failure_message: Option<String>,
    /// For a reminder, the message it reminds of.
    pub reminder_target_message_id: Option<i64>,
    /// When it was created, Unix seconds.
    pub date_created: i64,
}

/// What a new scheduled message or reminder is made of.
#[derive(Debug, Clone)]
pub struct NewScheduled {
    /// Whose.
    pub sender_id: UserId,
    /// `stream` or `private`.
    pub kind: String,
    /// The channel of a channel message.
    pub channel_id: Option<i64>,
    /// The recipients of a direct message, a JSON list.
    pub recipient_ids: String,
    /// The topic.
    pub topic: String,
    /// Markdown.
    pub content: String,
    /// HTML.
    pub rendered_content: String,
    /// When to send it.
    pub scheduled_at: i64,
    /// `read_by_sender` of the send.
    pub read_by_sender: Option<bool>,
    /// For a reminder, the message it reminds of.
    pub reminder_target_message_id: Option<i64>,
}

/// Stores a new scheduled message or reminder; returns it.
pub fn insert(
    conn: &mut DbConn,
    new: &NewScheduled,
    now: i64,
) -> Result<ScheduledMessage, StorageError> {
    Ok(diesel::insert_into(sm::table)
        .values((
            sm::sender_id.eq(new.sender_id.0),
            sm::kind.eq(&new.kind),
            sm::channel_id.eq(new.channel_id),
            sm::recipient_ids.eq(&new.recipient_ids),
            sm::topic.eq(&new.topic),
            sm::content.eq(&new.content),
            sm::rendered_content.eq(&new.rendered_content),
            sm::scheduled_at.eq(new.scheduled_at),
            sm::read_by_sender.eq(new.read_by_sender),
            sm::reminder_target_message_id.eq(new.reminder_target_message_id),
            sm::date_created.eq(now),
        ))
        .returning(sm::id)
        .get_result::<i64>(conn)
        .and_then(|id| {
            sm::table
                .find(id)
                .select(ScheduledMessage::as_select())
                .first(conn)
        })?)
}

/// Replaces what a scheduled message sends and when; a failed one is tried again.
pub fn update(conn: &mut DbConn, id: i64, new: &NewScheduled) -> Result<(), StorageError> {
    diesel::update(sm::table.find(id))
        .set((
            sm::kind.eq(&new.kind),
            sm::channel_id.eq(new.channel_id),
            sm::recipient_ids.eq(&new.recipient_ids),
            sm::topic.eq(&new.topic),
            sm::content.eq(&new.content),
            sm::rendered_content.eq(&new.rendered_content),
            sm::scheduled_at.eq(new.scheduled_at),
            sm::failed.eq(false),
            sm::failure_message.eq(None::<String>),
        ))
        .execute(conn)?;
    Ok(())
}

/// One undelivered scheduled message (`reminders` false) or reminder (true) of `user`.
pub fn get(
    conn: &mut DbConn,
    user: UserId,
    id: i64,
    reminders: bool,
) -> Result<Option<ScheduledMessage>, StorageError> {
    let query = sm::table
        .filter(sm::id.eq(id))
        .filter(sm::sender_id.eq(user.0))
        .filter(sm::delivered.eq(false))
        .select(ScheduledMessage::as_select());
    let found = match reminders {
        true => query
            .filter(sm::reminder_target_message_id.is_not_null())
            .first(conn),
        false => query
            .filter(sm::reminder_target_message_id.is_null())
            .first(conn),
    };
    Ok(found.optional()?)
}

/// The undelivered scheduled messages (`reminders` false) or reminders (true) of `user`, by
/// delivery time.
pub fn of_user(
    conn: &mut DbConn,
    user: UserId,
    reminders: bool,
) -> Result<Vec<ScheduledMessage>, StorageError> {
    let query = sm::table
        .filter(sm::sender_id.eq(user.0))
        .filter(sm::delivered.eq(false))
        .order((sm::scheduled_at, sm::id))
        .select(ScheduledMessage::as_select());
    Ok(match reminders {
        true => query
            .filter(sm::reminder_target_message_id.is_not_null())
            .load(conn)?,
        false => query
            .filter(sm::reminder_target_message_id.is_null())
            .load(conn)?,
    })
}

/// Deletes an undelivered one; whether it existed.
pub fn delete(conn: &mut DbConn, id: i64) -> Result<bool, StorageError> {
    let deleted = diesel::delete(
        sm::table
            .filter(sm::id.eq(id))
            .filter(sm::delivered.eq(false)),
    )
    .execute(conn)?;
    Ok(deleted > 0)
}

/// The earliest one due at `now` that has neither been sent nor failed. On PostgreSQL it is
/// locked until the caller's transaction ends, and one another transaction has locked is
/// skipped, so that several server processes each send a different one, and each exactly
/// once (SQLite is served by one process).
pub fn next_due(conn: &mut DbConn, now: i64) -> Result<Option<ScheduledMessage>, StorageError> {
    macro_rules! due {
        () => {
            sm::table
                .filter(sm::delivered.eq(false))
                .filter(sm::failed.eq(false))
                .filter(sm::scheduled_at.le(now))
                .order((sm::scheduled_at, sm::id))
                .select(ScheduledMessage::as_select())
        };
    }
    Ok(match conn {
        DbConn::Pg(conn) => due!().for_update().skip_locked().first(conn).optional()?,
        DbConn::Sqlite(conn) => due!().first(conn).optional()?,
    })
}

/// Records that it was sent as `message_id`.
pub fn mark_delivered(conn: &mut DbConn, id: i64, message_id: i64) -> Result<(), StorageError> {
    diesel::update(sm::table.find(id))
        .set((
            sm::delivered.eq(true),
            sm::delivered_message_id.eq(message_id),
        ))
        .execute(conn)?;
    Ok(())
}

/// Records that sending it failed, and why.
pub fn mark_failed(conn: &mut DbConn, id: i64, why: &str) -> Result<(), StorageError> {
    diesel::update(sm::table.find(id))
        .set((sm::failed.eq(true), sm::failure_message.eq(why)))
        .execute(conn)?;
    Ok(())
}

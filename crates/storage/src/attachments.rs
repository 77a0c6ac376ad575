//! Uploaded files (attachments) and the messages that link them; also the one avatar column
//! change an upload makes. The bytes themselves live in the actions layer's file store.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{attachment_messages, attachments, image_attachments, messages, users};
use diesel::prelude::*;
use parley_domain::{MessageId, UserId};

/// An attachment as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct Attachment {
    /// Its ID.
    pub id: i64,
    /// Its path in the file store (also its URL after `/user_uploads/`).
    pub path_id: String,
    /// The file name as uploaded (sanitized).
    pub name: String,
    /// Bytes.
    pub size: i64,
    /// The MIME type it is served with.
    pub content_type: String,
    /// Who uploaded it.
    pub owner_id: i64,
    /// When, Unix seconds.
    pub create_time: i64,
}

/// What a new attachment row holds.
#[derive(Debug, Clone)]
pub struct NewAttachment<'a> {
    /// Path in the file store.
    pub path_id: &'a str,
    /// File name.
    pub name: &'a str,
    /// Bytes.
    pub size: i64,
    /// MIME type.
    pub content_type: &'a str,
    /// Uploader.
    pub owner: UserId,
    /// Unix seconds.
    pub create_time: i64,
}

type Columns = (
    attachments::id,
    attachments::path_id,
    attachments::name,
    attachments::size,
    attachments::content_type,
    attachments::owner_id,
    attachments::create_time,
);

const COLUMNS: Columns = (
    attachments::id,
    attachments::path_id,
    attachments::name,
    attachments::size,
    attachments::content_type,
    attachments::owner_id,
    attachments::create_time,
);

/// Stores a new attachment; returns it with its ID.
pub fn insert(conn: &mut DbConn, new: &NewAttachment<'_>) -> Result<Attachment, StorageError> {
    Ok(diesel::insert_into(attachments::table)
        .values((
            attachments::path_id.eq(new.path_id),
            attachments::name.eq(new.name),
            attachments::size.eq(new.size),
            attachments::content_type.eq(new.content_type),
            attachments::owner_id.eq(new.owner.0),
            attachments::create_time.eq(new.create_time),
        ))
        .returning(COLUMNS)
        .get_result(conn)?)
}

/// One attachment by ID.
pub fn by_id(conn: &mut DbConn, id: i64) -> Result<Option<Attachment>, StorageError> {
    Ok(attachments::table
        .filter(attachments::id.eq(id))
        .select(COLUMNS)
        .first(conn)
        .optional()?)
}

/// One attachment by its path in the store.
pub fn by_path(conn: &mut DbConn, path_id: &str) -> Result<Option<Attachment>, StorageError> {
    Ok(attachments::table
        .filter(attachments::path_id.eq(path_id))
        .select(COLUMNS)
        .first(conn)
        .optional()?)
}

/// The attachments with these paths (unknown paths are skipped).
pub fn by_paths(conn: &mut DbConn, paths: &[String]) -> Result<Vec<Attachment>, StorageError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    Ok(attachments::table
        .filter(attachments::path_id.eq_any(paths))
        .order(attachments::id)
        .select(COLUMNS)
        .load(conn)?)
}

/// Every attachment of `owner`, oldest first.
pub fn of_owner(conn: &mut DbConn, owner: UserId) -> Result<Vec<Attachment>, StorageError> {
    Ok(attachments::table
        .filter(attachments::owner_id.eq(owner.0))
        .order(attachments::id)
        .select(COLUMNS)
        .load(conn)?)
}

/// The attachments a message links.
pub fn of_message(conn: &mut DbConn, message: MessageId) -> Result<Vec<Attachment>, StorageError> {
    Ok(attachments::table
        .inner_join(
            attachment_messages::table.on(attachment_messages::attachment_id.eq(attachments::id)),
        )
        .filter(attachment_messages::message_id.eq(message.0))
        .order(attachments::id)
        .select(COLUMNS)
        .load(conn)?)
}

/// The messages linking each of these attachments: `(attachment_id, message_id, date_sent)`,
/// by attachment then message.
pub fn messages_of(conn: &mut DbConn, ids: &[i64]) -> Result<Vec<(i64, i64, i64)>, StorageError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(attachment_messages::table
        .inner_join(messages::table.on(messages::id.eq(attachment_messages::message_id)))
        .filter(attachment_messages::attachment_id.eq_any(ids))
        .order((attachment_messages::attachment_id, messages::id))
        .select((
            attachment_messages::attachment_id,
            messages::id,
            messages::date_sent,
        ))
        .load(conn)?)
}

/// The IDs of the messages linking one attachment, ascending.
pub fn message_ids(conn: &mut DbConn, attachment: i64) -> Result<Vec<i64>, StorageError> {
    Ok(attachment_messages::table
        .filter(attachment_messages::attachment_id.eq(attachment))
        .order(attachment_messages::message_id)
        .select(attachment_messages::message_id)
        .load(conn)?)
}

/// Records that `message` links `attachment`; false when it already did.
pub fn link(conn: &mut DbConn, attachment: i64, message: MessageId) -> Result<bool, StorageError> {
    let exists = attachment_messages::table
        .filter(attachment_messages::attachment_id.eq(attachment))
        .filter(attachment_messages::message_id.eq(message.0))
        .count()
        .get_result::<i64>(conn)?
        > 0;
    if exists {
        return Ok(false);
    }
    diesel::insert_into(attachment_messages::table)
        .values((
            attachment_messages::attachment_id.eq(attachment),
            attachment_messages::message_id.eq(message.0),
        ))
        .execute(conn)?;
    Ok(true)
}

/// Forgets that `message` links `attachment`.
pub fn unlink(conn: &mut DbConn, attachment: i64, message: MessageId) -> Result<(), StorageError> {
    diesel::delete(
        attachment_messages::table
            .filter(attachment_messages::attachment_id.eq(attachment))
            .filter(attachment_messages::message_id.eq(message.0)),
    )
    .execute(conn)?;
    Ok(())
}

/// Deletes an attachment row (its links and image row go with it); false when there was none.
pub fn delete(conn: &mut DbConn, id: i64) -> Result<bool, StorageError> {
    diesel::delete(attachment_messages::table.filter(attachment_messages::attachment_id.eq(id)))
        .execute(conn)?;
    diesel::delete(image_attachments::table.filter(image_attachments::attachment_id.eq(id)))
        .execute(conn)?;
    Ok(diesel::delete(attachments::table.filter(attachments::id.eq(id))).execute(conn)? > 0)
}

/// Up to `limit` attachments uploaded before `cutoff` (Unix seconds) that no message links,
/// oldest first: uploads nobody claimed, which may be deleted.
pub fn unclaimed_before(
    conn: &mut DbConn,
    cutoff: i64,
    limit: i64,
) -> Result<Vec<Attachment>, StorageError> {
    let linked = attachment_messages::table
        .filter(attachment_messages::attachment_id.eq(attachments::id))
        .select(attachment_messages::message_id);
    Ok(attachments::table
        .filter(attachments::create_time.lt(cutoff))
        .filter(diesel::dsl::not(diesel::dsl::exists(linked)))
        .order(attachments::id)
        .limit(limit)
        .select(COLUMNS)
        .load(conn)?)
}

/// The total size of every stored attachment, in bytes (the organization's used upload space).
pub fn space_used(conn: &mut DbConn) -> Result<i64, StorageError> {
    // SUM over BIGINT is NUMERIC on PostgreSQL; adding up in Rust stays portable.
    let sizes: Vec<i64> = attachments::table.select(attachments::size).load(conn)?;
    Ok(sizes.iter().sum())
}

/// Sets a user's avatar source (`G` or `U`) and bumps the avatar version; returns the new
/// version.
pub fn set_avatar(conn: &mut DbConn, user: UserId, source: &str) -> Result<i64, StorageError> {
    Ok(diesel::update(users::table.filter(users::id.eq(user.0)))
        .set((
            users::avatar_source.eq(source),
            users::avatar_version.eq(users::avatar_version + 1),
        ))
        .returning(users::avatar_version)
        .get_result(conn)?)
}

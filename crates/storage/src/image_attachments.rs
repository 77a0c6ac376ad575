//! Uploaded images that were thumbnailed: their displayed size, frame count and the list of
//! thumbnails stored for them (JSON, written and read by the actions layer).

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{attachments, image_attachments};
use diesel::prelude::*;

/// An image attachment as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Insertable)]
#[diesel(table_name = image_attachments)]
pub struct ImageAttachment {
    /// The attachment this image is.
    pub attachment_id: i64,
    /// Width as displayed (after the EXIF orientation), pixels.
    pub original_width_px: i32,
    /// Height as displayed, pixels.
    pub original_height_px: i32,
    /// How many frames: more than one is an animation.
    pub frames: i32,
    /// The stored thumbnails, a JSON list.
    pub thumbnails: String,
}

/// Records an image attachment.
pub fn insert(conn: &mut DbConn, image: &ImageAttachment) -> Result<(), StorageError> {
    diesel::insert_into(image_attachments::table)
        .values(image)
        .execute(conn)?;
    Ok(())
}

/// The image attachment stored at `path_id` and its content type, if that upload is an image
/// that was thumbnailed.
pub fn by_path(
    conn: &mut DbConn,
    path_id: &str,
) -> Result<Option<(ImageAttachment, String)>, StorageError> {
    Ok(image_attachments::table
        .inner_join(attachments::table.on(attachments::id.eq(image_attachments::attachment_id)))
        .filter(attachments::path_id.eq(path_id))
        .select((
            (
                image_attachments::attachment_id,
                image_attachments::original_width_px,
                image_attachments::original_height_px,
                image_attachments::frames,
                image_attachments::thumbnails,
            ),
            attachments::content_type,
        ))
        .first(conn)
        .optional()?)
}

/// The image attachment of one attachment, if it is one.
pub fn of_attachment(
    conn: &mut DbConn,
    attachment_id: i64,
) -> Result<Option<ImageAttachment>, StorageError> {
    Ok(image_attachments::table
        .filter(image_attachments::attachment_id.eq(attachment_id))
        .first(conn)
        .optional()?)
}

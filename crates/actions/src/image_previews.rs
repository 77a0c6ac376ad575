//! What a rendered message shows of an uploaded image: the thumbnails stored for it, and the
//! preview the Markdown renderer embeds (its size, type and thumbnail URL). Rendering needs it
//! and so do the upload endpoints, which sit above rendering; it reads storage alone.

use crate::error::ActionResult;
use parley_domain::thumbnail::{self, default_format, needs_transcoding, StoredThumbnail};
use parley_storage::image_attachments::{self, ImageAttachment};
use parley_storage::DbConn;

/// The thumbnails stored for an image row.
pub(crate) fn stored_thumbnails(image: &ImageAttachment) -> Vec<StoredThumbnail> {
    serde_json::from_str(&image.thumbnails).unwrap_or_default()
}

/// What rendering needs to know of an uploaded image (for `DbLookup`): `None` when the upload
/// at `path_id` is not a thumbnailed image.
pub(crate) fn preview_for_rendering(
    conn: &mut DbConn,
    path_id: &str,
) -> ActionResult<Option<parley_markdown::UploadedImage>> {
    let Some((image, content_type)) = image_attachments::by_path(conn, path_id)? else {
        return Ok(None);
    };
    let frames = image.frames.max(1) as u32;
    let format = default_format(frames);
    let stored = stored_thumbnails(&image);
    // Types browsers cannot show get their largest thumbnail named, for full-size viewing.
    let transcoded = needs_transcoding(&content_type)
        .then(|| {
            stored
                .iter()
                .max_by_key(|t| u64::from(t.width) * u64::from(t.height))
                .map(|t| t.name.clone())
        })
        .flatten();
    // Without the thumbnail messages link, the image gets no preview.
    if !stored.iter().any(|t| t.name == format.to_string()) {
        return Ok(None);
    }
    Ok(Some(parley_markdown::UploadedImage {
        width: image.original_width_px.max(0) as u32,
        height: image.original_height_px.max(0) as u32,
        content_type,
        thumbnail_url: thumbnail::url(path_id, &format),
        animated: format.animated,
        transcoded_image: transcoded,
    }))
}

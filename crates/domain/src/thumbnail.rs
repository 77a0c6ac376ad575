//! Thumbnails of uploaded images, as the reference makes them: which formats exist (the
//! `server_thumbnail_formats` of `POST /register`), how a format is named in a URL
//! (`840x560.webp`, `840x560-anim.webp`), which uploads are thumbnailed, and where a thumbnail
//! lives and is served.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A thumbnail format: a file extension, the box the image is shrunk to fit, and whether it
/// keeps the animation of an animated source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ThumbnailFormat {
    /// The file extension, which is also the image format (`webp`).
    pub extension: &'static str,
    /// Largest width, pixels.
    pub max_width: u32,
    /// Largest height, pixels.
    pub max_height: u32,
    /// Animated (made only for animated sources).
    pub animated: bool,
}

impl fmt::Display for ThumbnailFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let anim = if self.animated { "-anim" } else { "" };
        write!(
            f,
            "{}x{}{anim}.{}",
            self.max_width, self.max_height, self.extension
        )
    }
}

/// The formats every thumbnailed upload gets, in the reference's order; the first animated
/// and the first still one are the ones rendered messages link. They are large enough that
/// clients which do not pick their own size still get a sharp image.
pub const OUTPUT_FORMATS: [ThumbnailFormat; 2] = [
    ThumbnailFormat {
        extension: "webp",
        max_width: 840,
        max_height: 560,
        animated: true,
    },
    ThumbnailFormat {
        extension: "webp",
        max_width: 840,
        max_height: 560,
        animated: false,
    },
];

/// The extra, large format made for images browsers cannot show themselves (TIFF), so that
/// clients can show a full-resolution version; portrait images get it turned upright.
pub const TRANSCODED_FORMAT: ThumbnailFormat = ThumbnailFormat {
    extension: "webp",
    max_width: 4032,
    max_height: 3024,
    animated: false,
};

/// Image types Parley decodes and thumbnails (the client's declared type decides, as in the
/// reference; the bytes must then really be such an image).
pub const ACCEPTED_TYPES: &[&str] = &[
    "image/gif",
    "image/jpeg",
    "image/png",
    "image/tiff",
    "image/webp",
];

/// Image types browsers show inline, which need no transcoded copy.
const INLINE_IMAGE_TYPES: &[&str] = &[
    "image/apng",
    "image/avif",
    "image/gif",
    "image/jpeg",
    "image/png",
    "image/webp",
];

/// Images larger than this many pixels are not decoded (a "decompression bomb" guard; the
/// reference's limit).
pub const MAX_PIXELS: u64 = 90_000_000;

/// Animated images are thumbnailed only while this many pixels cover their first three frames.
pub const MAX_ANIMATED_PIXELS: u64 = MAX_PIXELS / 3;

/// Whether an upload of this declared type is thumbnailed.
pub fn is_accepted_type(content_type: &str) -> bool {
    ACCEPTED_TYPES.contains(&content_type)
}

/// Whether browsers cannot show this image type themselves, so that its thumbnails include
/// a large transcoded copy.
pub fn needs_transcoding(content_type: &str) -> bool {
    !INLINE_IMAGE_TYPES.contains(&content_type)
}

/// Parses a format's name (`840x560-anim.webp`) as it appears in a thumbnail URL.
pub fn parse_format(name: &str) -> Option<ThumbnailFormat> {
    let (size, extension) = name.rsplit_once('.')?;
    let (size, animated) = match size.strip_suffix("-anim") {
        Some(size) => (size, true),
        None => (size, false),
    };
    let (width, height) = size.split_once('x')?;
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let extension = known_extension(extension)?;
    Some(ThumbnailFormat {
        extension,
        max_width: number(width)?,
        max_height: number(height)?,
        animated,
    })
}

fn known_extension(extension: &str) -> Option<&'static str> {
    std::iter::once(TRANSCODED_FORMAT.extension)
        .chain(OUTPUT_FORMATS.iter().map(|f| f.extension))
        .find(|e| *e == extension)
}

/// The formats made for an image of this type, displayed size and frame count: the output
/// formats (the animated ones only for animations), plus the transcoded one for types
/// browsers cannot show.
pub fn formats_for(
    content_type: &str,
    width: u32,
    height: u32,
    frames: u32,
) -> Vec<ThumbnailFormat> {
    let mut formats: Vec<ThumbnailFormat> = OUTPUT_FORMATS
        .iter()
        .filter(|f| frames > 1 || !f.animated)
        .copied()
        .collect();
    if needs_transcoding(content_type) {
        let mut transcoded = TRANSCODED_FORMAT;
        if width < height {
            std::mem::swap(&mut transcoded.max_width, &mut transcoded.max_height);
        }
        formats.push(transcoded);
    }
    formats
}

/// The format rendered messages link: the first output format that matches whether the
/// image is animated.
pub fn default_format(frames: u32) -> ThumbnailFormat {
    OUTPUT_FORMATS
        .iter()
        .find(|f| f.animated == (frames > 1))
        .copied()
        .unwrap_or(OUTPUT_FORMATS[0])
}

/// A thumbnail as stored: its format, its real pixel size and bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredThumbnail {
    /// The format's name, e.g. `840x560.webp`.
    pub name: String,
    /// Width, pixels.
    pub width: u32,
    /// Height, pixels.
    pub height: u32,
    /// Size of the file, bytes.
    pub byte_size: u64,
    /// MIME type of the file.
    pub content_type: String,
}

/// Where a thumbnail of the upload at `path_id` lives in the file store.
pub fn store_path(path_id: &str, format: &ThumbnailFormat) -> String {
    format!("thumbnail/{path_id}/{format}")
}

/// The URL a thumbnail is served at (the original is at `/user_uploads/<path_id>`).
pub fn url(path_id: &str, format: &ThumbnailFormat) -> String {
    format!("/user_uploads/{}", store_path(path_id, format))
}

/// The size an image of `width`×`height` is shrunk to so that it fits `max_width`×`max_height`
/// with its proportions kept; images that already fit keep their size (never enlarged).
pub fn fit_within(width: u32, height: u32, max_width: u32, max_height: u32) -> (u32, u32) {
    if width <= max_width && height <= max_height {
        return (width.max(1), height.max(1));
    }
    let scale = f64::min(
        f64::from(max_width) / f64::from(width),
        f64::from(max_height) / f64::from(height),
    );
    let w = (f64::from(width) * scale).round().max(1.0) as u32;
    let h = (f64::from(height) * scale).round().max(1.0) as u32;
    (w.min(max_width), h.min(max_height))
}

/// `server_thumbnail_formats` of `POST /register`: the formats clients may ask for.
pub fn server_thumbnail_formats() -> serde_json::Value {
    OUTPUT_FORMATS
        .iter()
        .map(|f| {
            serde_json::json!({
                "name": f.to_string(),
                "max_width": f.max_width,
                "max_height": f.max_height,
                "format": f.extension,
                "animated": f.animated,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(OUTPUT_FORMATS[0].to_string(), "840x560-anim.webp");
        assert_eq!(OUTPUT_FORMATS[1].to_string(), "840x560.webp");
        for f in OUTPUT_FORMATS.iter().chain([&TRANSCODED_FORMAT]) {
            assert_eq!(parse_format(&f.to_string()), Some(*f));
        }
        assert_eq!(parse_format("300x200.jpg"), None);
        assert_eq!(parse_format("x200.webp"), None);
        assert_eq!(parse_format("+3x200.webp"), None);
        assert_eq!(parse_format("840x560"), None);
    }

    #[test]
    fn formats_follow_the_source() {
        assert_eq!(
            formats_for("image/png", 100, 50, 1),
            vec![OUTPUT_FORMATS[1]]
        );
        assert_eq!(
            formats_for("image/gif", 100, 50, 4),
            OUTPUT_FORMATS.to_vec()
        );
        let tiff = formats_for("image/tiff", 100, 500, 1);
        assert_eq!(tiff.len(), 2);
        assert_eq!((tiff[1].max_width, tiff[1].max_height), (3024, 4032));
        assert_eq!(default_format(1), OUTPUT_FORMATS[1]);
        assert_eq!(default_format(3), OUTPUT_FORMATS[0]);
    }

    #[test]
    fn fits_without_enlarging() {
        assert_eq!(fit_within(100, 50, 840, 560), (100, 50));
        assert_eq!(fit_within(1680, 560, 840, 560), (840, 280));
        assert_eq!(fit_within(1000, 2000, 840, 560), (280, 560));
        assert_eq!(fit_within(100_000, 1, 840, 560), (840, 1));
    }

    #[test]
    fn paths_and_register() {
        assert_eq!(
            url("2/ab/xyz/a.png", &OUTPUT_FORMATS[1]),
            "/user_uploads/thumbnail/2/ab/xyz/a.png/840x560.webp"
        );
        let formats = server_thumbnail_formats();
        assert_eq!(formats[0]["name"], "840x560-anim.webp");
        assert_eq!(formats[1]["animated"], false);
    }
}

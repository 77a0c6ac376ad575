//! Image processing for uploads and custom emoji, with the `image` crate (decoding, resizing)
//! and libwebp (lossy and animated WebP): thumbnails of uploaded images in the formats of
//! [`parley_domain::thumbnail`], and the still first frame of an animated emoji.
//!
//! Everything here is CPU-bound and synchronous: callers run it on the blocking pool, one
//! image at a time ([`ONE_AT_A_TIME`]), which bounds the memory decoding takes to about one
//! decoded image (at most [`MAX_PIXELS`] pixels) whatever the number of concurrent uploads.

use image::codecs::gif::GifDecoder;
use image::codecs::png::PngDecoder;
use image::codecs::webp::WebPDecoder;
use image::imageops::FilterType;
use image::{
    AnimationDecoder, DynamicImage, Frame, ImageDecoder, ImageFormat, ImageReader, Limits,
    RgbaImage,
};
use parley_domain::thumbnail::{
    fit_within, formats_for, StoredThumbnail, ThumbnailFormat, MAX_ANIMATED_PIXELS, MAX_PIXELS,
};
use std::io::Cursor;
use tokio::sync::Semaphore;

/// Images are decoded one at a time, process-wide.
pub(crate) static ONE_AT_A_TIME: Semaphore = Semaphore::const_new(1);

/// WebP quality of thumbnails (libwebp's and the reference's default).
const WEBP_QUALITY: f32 = 75.0;

/// At most this many frames of an animation are kept in its animated thumbnail.
const MAX_THUMBNAIL_FRAMES: usize = 200;

/// The side of a custom emoji's still image, pixels (the reference's emoji size).
pub const EMOJI_SIZE: u32 = 64;

/// Why an image could not be processed: the bytes are not an image we decode, or too big.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadImage(pub String);

impl From<image::ImageError> for BadImage {
    fn from(e: image::ImageError) -> Self {
        BadImage(format!("cannot decode image: {e}"))
    }
}

/// An uploaded image's thumbnails: the image's displayed size, its frame count, and each
/// thumbnail with its bytes.
#[derive(Debug)]
pub struct Thumbnails {
    /// Width as displayed (after the EXIF orientation).
    pub width: u32,
    /// Height as displayed.
    pub height: u32,
    /// Frames; more than one is an animation.
    pub frames: u32,
    /// The thumbnails made.
    pub files: Vec<(ThumbnailFormat, StoredThumbnail, Vec<u8>)>,
}

fn limits() -> Limits {
    let mut limits = Limits::default();
    // Eight bytes a pixel covers 16-bit RGBA; the decoders' own buffers come on top.
    limits.max_alloc = Some(MAX_PIXELS * 8 + 64 * 1024 * 1024);
    limits
}

/// The decodable format of these bytes (from their signature, never the declared type).
fn format_of(bytes: &[u8]) -> Result<ImageFormat, BadImage> {
    let format = image::guess_format(bytes)?;
    match format {
        ImageFormat::Png
        | ImageFormat::Jpeg
        | ImageFormat::Gif
        | ImageFormat::WebP
        | ImageFormat::Tiff => Ok(format),
        other => Err(BadImage(format!("{other:?} images are not thumbnailed"))),
    }
}

/// Whether the image is an animation (GIF with several frames, animated WebP, APNG); GIFs are
/// told by decoding, so this returns their frames when it had to decode them.
fn animation(bytes: &[u8], format: ImageFormat) -> Result<Option<Vec<Frame>>, BadImage> {
    match format {
        ImageFormat::Gif => {
            let frames = collect_frames(GifDecoder::new(Cursor::new(bytes))?.into_frames())?;
            Ok((frames.len() > 1).then_some(frames))
        }
        ImageFormat::WebP => {
            let decoder = WebPDecoder::new(Cursor::new(bytes))?;
            if decoder.has_animation() {
                Ok(Some(collect_frames(decoder.into_frames())?))
            } else {
                Ok(None)
            }
        }
        ImageFormat::Png => {
            let decoder = PngDecoder::new(Cursor::new(bytes))?;
            if decoder.is_apng()? {
                Ok(Some(collect_frames(decoder.apng()?.into_frames())?))
            } else {
                Ok(None)
            }
        }
        _ => Ok(None),
    }
}

/// Decodes an animation's frames, up to [`MAX_THUMBNAIL_FRAMES`] (later ones are dropped, as
/// the reference truncates thumbnailed animations).
fn collect_frames(frames: image::Frames<'_>) -> Result<Vec<Frame>, BadImage> {
    let mut out = Vec::new();
    for frame in frames.take(MAX_THUMBNAIL_FRAMES) {
        out.push(frame?);
    }
    if out.is_empty() {
        return Err(BadImage("the animation has no frames".to_owned()));
    }
    Ok(out)
}

/// Decodes a still image, turned upright as its EXIF orientation says.
fn decode_still(bytes: &[u8], format: ImageFormat) -> Result<DynamicImage, BadImage> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits());
    let mut decoder = reader.into_decoder()?;
    let orientation = decoder.orientation()?;
    let mut image = DynamicImage::from_decoder(decoder)?;
    image.apply_orientation(orientation);
    Ok(image)
}

fn check_size(bytes: &[u8], format: ImageFormat) -> Result<(u32, u32), BadImage> {
    let (w, h) = ImageReader::with_format(Cursor::new(bytes), format).into_dimensions()?;
    if u64::from(w) * u64::from(h) > MAX_PIXELS {
        return Err(BadImage("Image size exceeds limit.".to_owned()));
    }
    Ok((w, h))
}

fn encode_still(image: &DynamicImage) -> Result<Vec<u8>, BadImage> {
    let encoded = if image.color().has_alpha() {
        let rgba = image.to_rgba8();
        webp::Encoder::from_rgba(&rgba, rgba.width(), rgba.height())
            .encode_simple(false, WEBP_QUALITY)
            .map(|m| m.to_vec())
    } else {
        let rgb = image.to_rgb8();
        webp::Encoder::from_rgb(&rgb, rgb.width(), rgb.height())
            .encode_simple(false, WEBP_QUALITY)
            .map(|m| m.to_vec())
    };
    encoded.map_err(|e| BadImage(format!("cannot encode WebP: {e:?}")))
}

/// Resizes with a good filter (Catmull-Rom), or keeps the image when it already fits.
fn shrink(image: &DynamicImage, format: &ThumbnailFormat) -> DynamicImage {
    let (w, h) = fit_within(
        image.width(),
        image.height(),
        format.max_width,
        format.max_height,
    );
    if (w, h) == (image.width(), image.height()) {
        image.clone()
    } else {
        image.resize_exact(w, h, FilterType::CatmullRom)
    }
}

fn stored(format: &ThumbnailFormat, width: u32, height: u32, bytes: &[u8]) -> StoredThumbnail {
    StoredThumbnail {
        name: format.to_string(),
        width,
        height,
        byte_size: bytes.len() as u64,
        content_type: format!("image/{}", format.extension),
    }
}

fn encode_animation(
    frames: &[Frame],
    format: &ThumbnailFormat,
) -> Result<(u32, u32, Vec<u8>), BadImage> {
    let first = frames[0].buffer();
    let (w, h) = fit_within(
        first.width(),
        first.height(),
        format.max_width,
        format.max_height,
    );
    let resized: Vec<(RgbaImage, i32)> = {
        let mut at_ms = 0i32;
        frames
            .iter()
            .map(|frame| {
                let buffer = frame.buffer();
                let image = if (buffer.width(), buffer.height()) == (w, h) {
                    buffer.clone()
                } else {
                    image::imageops::resize(buffer, w, h, FilterType::CatmullRom)
                };
                let timestamp = at_ms;
                let (num, den) = frame.delay().numer_denom_ms();
                at_ms = at_ms.saturating_add((num / den.max(1)).max(10) as i32);
                (image, timestamp)
            })
            .collect()
    };
    let mut config = webp::WebPConfig::new()
        .map_err(|_| BadImage("cannot configure the WebP encoder".to_owned()))?;
    config.quality = WEBP_QUALITY;
    let mut encoder = webp::AnimEncoder::new(w, h, &config);
    encoder.set_loop_count(0);
    for (image, timestamp) in &resized {
        encoder.add_frame(webp::AnimFrame::from_rgba(image, w, h, *timestamp));
    }
    let bytes = encoder
        .try_encode()
        .map_err(|e| BadImage(format!("cannot encode animated WebP: {e:?}")))?;
    Ok((w, h, bytes.to_vec()))
}

/// Makes the thumbnails of an uploaded image whose declared type is `content_type` (one of
/// [`parley_domain::thumbnail::ACCEPTED_TYPES`]); fails when the bytes are not such an image
/// or it is too large to decode safely.
pub fn make_thumbnails(bytes: &[u8], content_type: &str) -> Result<Thumbnails, BadImage> {
    let format = format_of(bytes)?;
    let (width, height) = check_size(bytes, format)?;
    if let Some(frames) = animation(bytes, format)? {
        let count = frames.len() as u32;
        if u64::from(width) * u64::from(height) * u64::from(count.min(3)) > MAX_ANIMATED_PIXELS {
            return Err(BadImage("Image size exceeds limit.".to_owned()));
        }
        let mut files = Vec::new();
        for f in formats_for(content_type, width, height, count) {
            let (w, h, out) = if f.animated {
                encode_animation(&frames, &f)?
            } else {
                let first = DynamicImage::ImageRgba8(frames[0].buffer().clone());
                let small = shrink(&first, &f);
                (small.width(), small.height(), encode_still(&small)?)
            };
            files.push((f, stored(&f, w, h, &out), out));
        }
        return Ok(Thumbnails {
            width,
            height,
            frames: count,
            files,
        });
    }
    let image = decode_still(bytes, format)?;
    let (width, height) = (image.width(), image.height());
    let mut files = Vec::new();
    for f in formats_for(content_type, width, height, 1) {
        let small = shrink(&image, &f);
        let out = encode_still(&small)?;
        files.push((f, stored(&f, small.width(), small.height(), &out), out));
    }
    Ok(Thumbnails {
        width,
        height,
        frames: 1,
        files,
    })
}

/// The still image of a custom emoji: its first frame, scaled to cover
/// [`EMOJI_SIZE`]×[`EMOJI_SIZE`] and cropped to the centre, as PNG.
pub fn emoji_still(bytes: &[u8]) -> Result<Vec<u8>, BadImage> {
    let format = format_of(bytes)?;
    check_size(bytes, format)?;
    let first = match animation(bytes, format)? {
        Some(frames) => frames
            .into_iter()
            .next()
            .map(|f| DynamicImage::ImageRgba8(f.into_buffer()))
            .ok_or_else(|| BadImage("the animation has no frames".to_owned()))?,
        None => decode_still(bytes, format)?,
    };
    let still = first.resize_to_fill(EMOJI_SIZE, EMOJI_SIZE, FilterType::CatmullRom);
    let mut out = Vec::new();
    still
        .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
        .map_err(|e| BadImage(format!("cannot encode PNG: {e}")))?;
    Ok(out)
}

/// Whether these bytes are an image Parley can decode at all (for custom emoji, which must be
/// images), and if so whether it is animated.
pub fn probe_animated(bytes: &[u8]) -> Result<bool, BadImage> {
    let format = format_of(bytes)?;
    check_size(bytes, format)?;
    Ok(animation(bytes, format)?.is_some())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use image::codecs::gif::GifEncoder;
    use image::{Delay, Rgba};

    /// A PNG of this size, a gradient.
    pub(crate) fn png(width: u32, height: u32) -> Vec<u8> {
        let image = RgbaImage::from_fn(width, height, |x, y| {
            Rgba([(x % 256) as u8, (y % 256) as u8, 128, 255])
        });
        let mut out = Vec::new();
        DynamicImage::ImageRgba8(image)
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap();
        out
    }

    /// An animated GIF of `frames` frames of this size.
    pub(crate) fn gif(width: u32, height: u32, frames: usize) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut encoder = GifEncoder::new(&mut out);
            let frames = (0..frames).map(|i| {
                let image = RgbaImage::from_pixel(width, height, Rgba([(i * 60) as u8, 0, 0, 255]));
                Frame::from_parts(image, 0, 0, Delay::from_numer_denom_ms(100, 1))
            });
            encoder.encode_frames(frames).unwrap();
        }
        out
    }

    #[test]
    fn thumbnails_a_still_image() {
        let t = make_thumbnails(&png(1680, 600), "image/png").unwrap();
        assert_eq!((t.width, t.height, t.frames), (1680, 600, 1));
        assert_eq!(t.files.len(), 1);
        let (format, stored, bytes) = &t.files[0];
        assert_eq!(format.to_string(), "840x560.webp");
        assert_eq!((stored.width, stored.height), (840, 300));
        assert_eq!(stored.byte_size, bytes.len() as u64);
        let back = image::load_from_memory(bytes).unwrap();
        assert_eq!((back.width(), back.height()), (840, 300));
    }

    #[test]
    fn thumbnails_an_animation() {
        let t = make_thumbnails(&gif(100, 80, 3), "image/gif").unwrap();
        assert_eq!(t.frames, 3);
        let names: Vec<String> = t.files.iter().map(|f| f.1.name.clone()).collect();
        assert_eq!(names, ["840x560-anim.webp", "840x560.webp"]);
        let decoder = WebPDecoder::new(Cursor::new(&t.files[0].2)).unwrap();
        assert!(decoder.has_animation());
    }

    #[test]
    fn refuses_what_is_not_an_image() {
        assert!(make_thumbnails(b"hello", "image/png").is_err());
        assert!(make_thumbnails(b"\x89PNG\r\n\x1a\nnot-really", "image/png").is_err());
    }

    #[test]
    fn emoji_stills_are_small_pngs() {
        let still = emoji_still(&gif(128, 64, 2)).unwrap();
        let image = image::load_from_memory_with_format(&still, ImageFormat::Png).unwrap();
        assert_eq!((image.width(), image.height()), (EMOJI_SIZE, EMOJI_SIZE));
        assert!(probe_animated(&gif(10, 10, 2)).unwrap());
        assert!(!probe_animated(&png(10, 10)).unwrap());
    }
}

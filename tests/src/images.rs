//! Real images for tests of uploads and custom emoji: Parley decodes what it thumbnails.

use image::codecs::gif::GifEncoder;
use image::{Delay, DynamicImage, Frame, ImageFormat, Rgba, RgbaImage};
use std::io::Cursor;

/// A PNG of this size (a gradient, so that it compresses like a picture).
pub fn png(width: u32, height: u32) -> Vec<u8> {
    let image = RgbaImage::from_fn(width, height, |x, y| {
        Rgba([(x % 251) as u8, (y % 241) as u8, ((x + y) % 239) as u8, 255])
    });
    let mut out = Vec::new();
    DynamicImage::ImageRgba8(image)
        .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
        .expect("encode PNG");
    out
}

/// An animated GIF of three frames of this size.
pub fn gif(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = GifEncoder::new(&mut out);
        let frames = (0..3u8).map(|i| {
            let image = RgbaImage::from_pixel(width, height, Rgba([i * 80, 40, 200, 255]));
            Frame::from_parts(image, 0, 0, Delay::from_numer_denom_ms(100, 1))
        });
        encoder.encode_frames(frames).expect("encode GIF");
    }
    out
}

//! Memory and time of uploads through the real HTTP server, served by this process and sent by
//! `curl` from another process (so no client buffer is counted): the peak resident memory that
//! uploading a 25 MiB file adds (it is streamed to the store), and that uploading and
//! thumbnailing a 12-megapixel JPEG photo adds.
//!
//! `cargo bench -p parley-tests --bench uploads` (needs `curl`).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use parley_actions::file_store::LocalFileStore;
use parley_storage::testing::Backend;
use parley_tests::bench::rss_mib;
use parley_tests::TestApp;
use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The peak resident set size since the last [`reset_peak`], in MiB.
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Makes the kernel forget the peak so far (Linux `clear_refs`).
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset the peak RSS");
}

fn write_big_file(path: &Path, bytes: usize) {
    let mut data = Vec::with_capacity(bytes);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    while data.len() < bytes {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        data.extend_from_slice(&seed.to_le_bytes());
    }
    data.truncate(bytes);
    std::fs::write(path, data).unwrap();
}

fn write_photo(path: &Path, width: u32, height: u32) {
    let image = RgbImage::from_fn(width, height, |x, y| {
        Rgb([
            (x * 255 / width) as u8,
            (y * 255 / height) as u8,
            ((x ^ y) % 256) as u8,
        ])
    });
    let mut out = Vec::new();
    DynamicImage::ImageRgb8(image)
        .write_to(&mut Cursor::new(&mut out), ImageFormat::Jpeg)
        .unwrap();
    std::fs::write(path, out).unwrap();
}

#[actix_web::main]
async fn main() {
    let dir = std::env::temp_dir().join(format!("parley-upload-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = Arc::new(LocalFileStore::new(dir.join("uploads")));
    let app = TestApp::start(Backend::Sqlite)
        .await
        .reconfigured(|ctx| ctx.with_files(store))
        .await;
    let ctx = app.ctx.clone();
    let server = actix_web::HttpServer::new(move || parley_api::app(ctx.clone()))
        .workers(1)
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.addrs()[0];
    let running = server.run();
    let handle = running.handle();
    actix_web::rt::spawn(running);

    let big = dir.join("big.bin");
    write_big_file(&big, 25 * 1024 * 1024 - 4096);
    let photo = dir.join("photo.jpg");
    write_photo(&photo, 4000, 3000);
    let url = format!("http://{addr}/api/v1/user_uploads");
    let user = format!("{}:{}", app.owner.email, app.owner.api_key);
    let upload = move |path: &Path, kind: &str| {
        let output = std::process::Command::new("curl")
            .args(["-s", "-u", &user, "-F"])
            .arg(format!("file=@{};type={kind}", path.display()))
            .arg(&url)
            .output()
            .expect("run curl");
        let body = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(body.contains("\"success\""), "upload failed: {body}");
    };
    // Warm up: first requests load code, the database and the image codecs.
    upload(&photo, "image/jpeg");
    upload(&big, "application/octet-stream");

    for (label, path, kind) in [
        ("25 MiB file", &big, "application/octet-stream"),
        ("12-megapixel JPEG, thumbnailed", &photo, "image/jpeg"),
    ] {
        let size = std::fs::metadata(path).unwrap().len() as f64 / 1024.0 / 1024.0;
        let mut added = Vec::new();
        let mut times = Vec::new();
        for _ in 0..3 {
            let before = rss_mib();
            reset_peak();
            let start = Instant::now();
            let path = path.clone();
            let kind = kind.to_owned();
            let upload = upload.clone();
            tokio::task::spawn_blocking(move || upload(&path, &kind))
                .await
                .unwrap();
            times.push(start.elapsed().as_secs_f64() * 1e3);
            added.push(peak_mib() - before);
        }
        let max_added = added.iter().cloned().fold(0.0, f64::max);
        let mean_ms = times.iter().sum::<f64>() / times.len() as f64;
        println!(
            "{label} ({size:.1} MiB): peak RSS +{max_added:.1} MiB over the server's resident set, {mean_ms:.0} ms per upload (mean of 3)"
        );
    }
    handle.stop(true).await;
    let _ = std::fs::remove_dir_all(&dir);
}

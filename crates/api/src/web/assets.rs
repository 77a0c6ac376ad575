//! The web client's files: `web/dist/` embedded in the binary at compile time (no Node is needed
//! to build or run the server), each served under two names:
//!
//! - `/static/<stem>.<hash>.<ext>`, `hash` the first 10 hex digits of the content's SHA-256:
//!   `Cache-Control: public, max-age=31536000, immutable`, since the name changes with the content;
//! - `/static/<name>`, as the bundle refers to its own assets: `Cache-Control: no-cache`, so
//!   browsers revalidate (`ETag`, `304 Not Modified`).
//!
//! Text files are compressed once, on first use (the server forces it at start-up), with gzip and
//! brotli; each response picks by `Accept-Encoding` (brotli first) and says `Vary:
//! Accept-Encoding`.

use actix_web::http::header::{self, HeaderValue};
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use include_dir::{include_dir, Dir, DirEntry};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write;
use std::sync::LazyLock;

static DIST: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../web/dist");

/// Hex digits of the content hash in hashed names.
const HASH_LENGTH: usize = 10;

/// A compressed copy is kept only when it saves at least this fraction of the size.
const WORTH_COMPRESSING: f64 = 0.9;

/// One embedded file and its compressed copies.
#[derive(Debug)]
pub struct Asset {
    /// Its path under `web/dist/`, e.g. `app.js`.
    pub name: String,
    /// The same with the content hash, e.g. `app.0123456789.js`.
    pub hashed_name: String,
    content_type: &'static str,
    etag: HeaderValue,
    identity: Bytes,
    gzip: Option<Bytes>,
    brotli: Option<Bytes>,
}

/// Every embedded file, by both of its names.
#[derive(Debug)]
pub struct Assets {
    files: Vec<Asset>,
    by_name: HashMap<String, (usize, bool)>,
}

/// The embedded files, hashed and compressed on first use.
pub fn assets() -> &'static Assets {
    static ASSETS: LazyLock<Assets> = LazyLock::new(|| Assets::from_dir(&DIST));
    &ASSETS
}

/// `name` with `hash` before its extension: `app.js` → `app.<hash>.js`, `LICENSE` →
/// `LICENSE.<hash>`.
fn hashed_name(name: &str, hash: &str) -> String {
    let (dir, file) = match name.rsplit_once('/') {
        Some((dir, file)) => (format!("{dir}/"), file),
        None => (String::new(), name),
    };
    match file.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("{dir}{stem}.{hash}.{ext}"),
        _ => format!("{dir}{file}.{hash}"),
    }
}

/// The media type of a file by its extension, and whether compressing it pays.
fn content_type(name: &str) -> (&'static str, bool) {
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
    match ext.to_ascii_lowercase().as_str() {
        "js" | "mjs" => ("text/javascript; charset=utf-8", true),
        "css" => ("text/css; charset=utf-8", true),
        "json" | "map" => ("application/json", true),
        "svg" => ("image/svg+xml", true),
        "txt" => ("text/plain; charset=utf-8", true),
        "html" => ("text/html; charset=utf-8", true),
        "ico" => ("image/x-icon", true),
        "png" => ("image/png", false),
        "jpg" | "jpeg" => ("image/jpeg", false),
        "gif" => ("image/gif", false),
        "webp" => ("image/webp", false),
        "woff2" => ("font/woff2", false),
        "woff" => ("font/woff", false),
        _ => ("application/octet-stream", false),
    }
}

fn gzip(data: &[u8]) -> Option<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).ok()?;
    encoder.finish().ok()
}

fn brotli(data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    {
        // Quality 11 (the densest), 4 MiB window: done once per process.
        let mut writer = brotli::CompressorWriter::new(&mut out, 64 * 1024, 11, 22);
        writer.write_all(data).ok()?;
        writer.flush().ok()?;
    }
    Some(out)
}

/// `compressed` when it is worth sending instead of `original`.
fn worth(original: &[u8], compressed: Option<Vec<u8>>) -> Option<Bytes> {
    compressed
        .filter(|c| (c.len() as f64) < original.len() as f64 * WORTH_COMPRESSING)
        .map(Bytes::from)
}

fn walk<'a>(dir: &'a Dir<'a>, out: &mut Vec<&'a include_dir::File<'a>>) {
    for entry in dir.entries() {
        match entry {
            DirEntry::Dir(sub) => walk(sub, out),
            DirEntry::File(file) => out.push(file),
        }
    }
}

impl Assets {
    /// Hashes and compresses every file of `dir`.
    fn from_dir(dir: &'static Dir<'static>) -> Assets {
        let mut found = Vec::new();
        walk(dir, &mut found);
        let mut files = Vec::new();
        let mut by_name = HashMap::new();
        for file in found {
            let Some(name) = file.path().to_str().map(|p| p.replace('\\', "/")) else {
                continue;
            };
            if name.starts_with('.') || name.contains("/.") {
                continue;
            }
            let data = file.contents();
            let hash = hex::encode(Sha256::digest(data));
            let hashed = hashed_name(&name, &hash[..HASH_LENGTH]);
            let (content_type, compressible) = content_type(&name);
            let (gzip, brotli) = if compressible {
                (worth(data, gzip(data)), worth(data, brotli(data)))
            } else {
                (None, None)
            };
            let etag = HeaderValue::from_str(&format!("\"{}\"", &hash[..32]))
                .unwrap_or_else(|_| HeaderValue::from_static("\"\""));
            by_name.insert(name.clone(), (files.len(), false));
            by_name.insert(hashed.clone(), (files.len(), true));
            files.push(Asset {
                name,
                hashed_name: hashed,
                content_type,
                etag,
                identity: Bytes::from_static(data),
                gzip,
                brotli,
            });
        }
        Assets { files, by_name }
    }

    /// The URL path of `name` (e.g. `app.js`) under its hashed name, for pages to link.
    pub fn url(&self, name: &str) -> Option<String> {
        let (index, _) = self.by_name.get(name)?;
        Some(format!("/static/{}", self.files[*index].hashed_name))
    }

    /// The file served at `/static/<served>`, and whether that is its hashed name.
    pub fn find(&self, served: &str) -> Option<(&Asset, bool)> {
        let (index, hashed) = self.by_name.get(served)?;
        Some((&self.files[*index], *hashed))
    }

    /// Every embedded file.
    pub fn files(&self) -> &[Asset] {
        &self.files
    }
}

/// Whether an `Accept-Encoding` value accepts `coding` (listed without `q=0`).
fn accepts(accept_encoding: &str, coding: &str) -> bool {
    accept_encoding.split(',').any(|item| {
        let mut parts = item.split(';');
        let name = parts.next().unwrap_or_default().trim();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        name.eq_ignore_ascii_case(coding) && !refused
    })
}

/// GET /static/{path} — a file of the web client, by its plain or its hashed name.
pub async fn serve(req: HttpRequest, path: web::Path<String>) -> HttpResponse {
    let Some((asset, hashed)) = assets().find(&path) else {
        return crate::fallback::not_found().await;
    };
    let cache = if hashed {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut response = HttpResponse::Ok();
    response
        .insert_header((header::CACHE_CONTROL, cache))
        .insert_header((header::ETAG, asset.etag.clone()))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"));
    if asset.gzip.is_some() || asset.brotli.is_some() {
        response.insert_header((header::VARY, "Accept-Encoding"));
    }
    let matches_etag = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| {
            tags.split(',')
                .map(|t| t.trim().trim_start_matches("W/"))
                .any(|t| t == "*" || t.as_bytes() == asset.etag.as_bytes())
        });
    if matches_etag {
        return response
            .status(actix_web::http::StatusCode::NOT_MODIFIED)
            .finish();
    }
    let accept = req
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let (body, encoding) = match (&asset.brotli, &asset.gzip) {
        (Some(br), _) if accepts(accept, "br") => (br.clone(), Some("br")),
        (_, Some(gz)) if accepts(accept, "gzip") => (gz.clone(), Some("gzip")),
        _ => (asset.identity.clone(), None),
    };
    if let Some(encoding) = encoding {
        response.insert_header((header::CONTENT_ENCODING, encoding));
    }
    response.content_type(asset.content_type).body(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn hashed_names_keep_the_extension() {
        assert_eq!(hashed_name("app.js", "0123456789"), "app.0123456789.js");
        assert_eq!(hashed_name("a.min.css", "ab"), "a.min.ab.css");
        assert_eq!(hashed_name("fonts/x.woff2", "ab"), "fonts/x.ab.woff2");
        assert_eq!(hashed_name("LICENSE", "ab"), "LICENSE.ab");
        assert_eq!(hashed_name(".hidden", "ab"), ".hidden.ab");
    }

    #[test]
    fn accept_encoding_is_read_with_q_values() {
        assert!(accepts("gzip, deflate, br", "br"));
        assert!(accepts("GZIP", "gzip"));
        assert!(!accepts("gzip;q=0, br", "gzip"));
        assert!(accepts("gzip;q=0.5", "gzip"));
        assert!(!accepts("identity", "gzip"));
        assert!(!accepts("", "br"));
    }

    #[test]
    fn every_dist_file_is_served_under_both_names_and_compresses_losslessly() {
        let assets = assets();
        for name in ["app.js", "app.css"] {
            let url = assets.url(name).unwrap();
            let hashed = url.strip_prefix("/static/").unwrap();
            let (asset, is_hashed) = assets.find(hashed).unwrap();
            assert!(is_hashed);
            assert_eq!(asset.name, name);
            let (plain, is_hashed) = assets.find(name).unwrap();
            assert!(!is_hashed);
            assert_eq!(plain.hashed_name, hashed);
            let hash = hex::encode(Sha256::digest(&asset.identity));
            assert_eq!(hashed.split('.').nth(1).unwrap(), &hash[..HASH_LENGTH]);
            if let Some(gz) = &asset.gzip {
                let mut out = Vec::new();
                flate2::read::GzDecoder::new(&gz[..])
                    .read_to_end(&mut out)
                    .unwrap();
                assert_eq!(out, asset.identity);
            }
            if let Some(br) = &asset.brotli {
                let mut out = Vec::new();
                brotli::Decompressor::new(&br[..], 4096)
                    .read_to_end(&mut out)
                    .unwrap();
                assert_eq!(out, asset.identity);
            }
        }
    }
}

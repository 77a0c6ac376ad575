//! Rules of uploaded files: safe file names, where a file lives (`path_id`), which links in a
//! message point at uploads, what type a file is served as and whether browsers show it inline.

use crate::error::RequestError;

/// The largest file `POST /user_uploads` accepts, in MiB (`max_file_upload_size_mib`).
pub const MAX_FILE_UPLOAD_SIZE_MIB: u64 = 25;

/// The largest custom emoji image, in MiB.
pub const MAX_EMOJI_FILE_SIZE_MIB: u64 = 5;

/// The largest avatar image, in MiB (`max_avatar_file_size_mib`).
pub const MAX_AVATAR_FILE_SIZE_MIB: u64 = 5;

/// The error for a file over `limit_mib`, as the reference words it.
pub fn too_large(limit_mib: u64) -> RequestError {
    RequestError::bad_request(format!(
        "Uploaded file is larger than the allowed limit of {limit_mib} MiB"
    ))
}

/// A file name safe in a URL path segment and a `Content-Disposition` header: letters and
/// digits (any script), `.`, `-` and `_` are kept, whitespace becomes `-`, everything else is
/// dropped; no leading dots; never empty.
pub fn sanitize_filename(raw: &str) -> String {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let mut out = String::new();
    for c in base.trim().chars() {
        if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') {
            out.push(c);
        } else if c.is_whitespace() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_start_matches('.').to_owned();
    if trimmed.is_empty() {
        "uploaded-file".to_owned()
    } else {
        trimmed.chars().take(200).collect()
    }
}

/// The `path_id` of a new upload: `<realm_id>/<2 hex>/<24 random>/<sanitized name>`, the
/// layout of the reference server. `hex` and `random` come from the caller's random source.
pub fn path_id(realm_id: i64, hex: &str, random: &str, filename: &str) -> String {
    format!("{realm_id}/{hex}/{random}/{}", sanitize_filename(filename))
}

/// Whether a `path_id` from a URL is well formed: `<digits>/` then segments without `..`,
/// backslashes or empty parts.
pub fn is_valid_path_id(path_id: &str) -> bool {
    let mut parts = path_id.split('/');
    let realm_ok = parts
        .next()
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()));
    let rest: Vec<&str> = parts.collect();
    realm_ok
        && !rest.is_empty()
        && rest
            .iter()
            .all(|p| !p.is_empty() && *p != "." && *p != ".." && !p.contains('\\'))
}

/// The upload paths a message's Markdown links: `/user_uploads/<path_id>` either relative or
/// after the organization's URL, each once, in order of appearance.
pub fn linked_path_ids(content: &str, realm_url: &str) -> Vec<String> {
    const MARK: &str = "/user_uploads/";
    let mut found: Vec<String> = Vec::new();
    let mut from = 0;
    while let Some(at) = content[from..].find(MARK) {
        let start = from + at;
        from = start + MARK.len();
        let before = &content[..start];
        let standalone = before
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '(' | '[' | '<' | '"' | '\''));
        if !standalone && !before.ends_with(realm_url.trim_end_matches('/')) {
            continue;
        }
        let rest = &content[from..];
        let end = rest
            .find(|c: char| {
                c.is_whitespace() || matches!(c, ')' | ']' | '>' | '"' | '\'' | '?' | '#')
            })
            .unwrap_or(rest.len());
        let path = rest[..end].trim_end_matches(['.', ',', ';', ':', '!']);
        let path = percent_decode(path);
        if is_valid_path_id(&path) && !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// Decodes `%XX` escapes (invalid ones are kept as written), as links to uploads may carry
/// them.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The MIME type of a file: the one the client declared when it is specific, otherwise a guess
/// from the name's extension, otherwise `application/octet-stream`.
pub fn content_type(declared: Option<&str>, filename: &str) -> String {
    if let Some(declared) = declared {
        let declared = declared.trim().to_ascii_lowercase();
        if !declared.is_empty()
            && declared != "application/octet-stream"
            && declared.contains('/')
            && declared.is_ascii()
            && !declared.contains(['\r', '\n'])
        {
            return declared;
        }
    }
    let ext = filename
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "bmp" => "image/bmp",
        "svg" => "image/svg+xml",
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "mp3" => "audio/mpeg",
        "ogg" => "audio/ogg",
        "wav" => "audio/wav",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        _ => "application/octet-stream",
    }
    .to_owned()
}

/// Whether a file of this type may be shown in the browser (`inline`) rather than downloaded:
/// images that cannot carry scripts, audio, video, PDF and plain text.
pub fn serve_inline(content_type: &str) -> bool {
    let base = content_type.split(';').next().unwrap_or("").trim();
    matches!(
        base,
        "image/png"
            | "image/jpeg"
            | "image/gif"
            | "image/webp"
            | "image/bmp"
            | "image/avif"
            | "audio/mpeg"
            | "audio/ogg"
            | "audio/wav"
            | "audio/webm"
            | "video/mp4"
            | "video/webm"
            | "video/ogg"
            | "application/pdf"
            | "text/plain"
    )
}

/// The image type of these bytes, from their signature: PNG, JPEG, GIF or WebP (the formats
/// accepted for emoji and avatars).
pub fn sniff_image(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// The usual extension of an image type from [`sniff_image`].
pub fn image_extension(content_type: &str) -> &'static str {
    match content_type {
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => "png",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_names() {
        assert_eq!(sanitize_filename("my file (1).txt"), "my-file-1.txt");
        assert_eq!(sanitize_filename("../../etc/passwd"), "passwd");
        assert_eq!(sanitize_filename("..."), "uploaded-file");
        assert_eq!(sanitize_filename("résumé.pdf"), "résumé.pdf");
        assert_eq!(sanitize_filename(""), "uploaded-file");
    }

    #[test]
    fn finds_linked_uploads() {
        let content = "see [a.txt](/user_uploads/2/ab/xyz/a.txt) and \
                       http://parley.test/user_uploads/2/cd/uvw/b.png, \
                       http://evil.test/user_uploads/2/ef/rst/c.png and again /user_uploads/2/ab/xyz/a.txt";
        assert_eq!(
            linked_path_ids(content, "http://parley.test"),
            vec!["2/ab/xyz/a.txt".to_owned(), "2/cd/uvw/b.png".to_owned()]
        );
        assert!(linked_path_ids("/user_uploads/../x", "http://p").is_empty());
        assert_eq!(
            linked_path_ids("/user_uploads/1/a/b/x%20y.txt", "http://p"),
            vec!["1/a/b/x y.txt".to_owned()]
        );
    }

    #[test]
    fn validates_paths() {
        assert!(is_valid_path_id("2/ab/cdef/x.png"));
        assert!(!is_valid_path_id("x/ab/cdef/x.png"));
        assert!(!is_valid_path_id("2/../x"));
        assert!(!is_valid_path_id("2//x"));
        assert!(!is_valid_path_id("2"));
    }

    #[test]
    fn types_and_disposition() {
        assert_eq!(content_type(None, "a.PNG"), "image/png");
        assert_eq!(
            content_type(Some("application/octet-stream"), "a.txt"),
            "text/plain"
        );
        assert_eq!(content_type(Some("text/csv"), "a"), "text/csv");
        assert!(serve_inline("image/png"));
        assert!(!serve_inline("image/svg+xml"));
        assert!(!serve_inline("text/html"));
        assert_eq!(sniff_image(b"GIF89a...."), Some("image/gif"));
        assert_eq!(sniff_image(b"hello"), None);
    }
}

//! Inline previews of links, as the reference writes them below the paragraph that links:
//! images (`message_inline_image`; uploaded images with their thumbnail and original size),
//! MP4 and WebM videos (`message_inline_video`) and YouTube videos (`youtube-video`).
//! External media goes through the organization's camo image proxy when one is configured.

use hmac::{Hmac, Mac};
use sha1::Sha1;

use crate::{escape, sanitize, Lookup};

/// At most this many distinct links (outside quotes) may a message have and still get
/// previews; a message with more gets none, as in the reference.
pub(crate) const LIMIT_PER_MESSAGE: usize = 24;

/// The camo image proxy of the organization: external images and videos are loaded through
/// it, so that reading a message does not tell other sites who reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Camo {
    base: String,
    key: String,
}

impl Camo {
    /// A proxy at `base_url` (e.g. `https://camo.example.com/external_content/`) that checks
    /// URLs with the shared `key`.
    pub fn new(base_url: &str, key: &str) -> Self {
        let mut base = base_url.to_owned();
        if !base.ends_with('/') {
            base.push('/');
        }
        Camo {
            base,
            key: key.to_owned(),
        }
    }

    /// The proxy URL for `url`: `<base><hex HMAC-SHA1 of the URL>/<hex of the URL>`, the
    /// scheme camo servers verify.
    pub fn url(&self, url: &str) -> String {
        let digest = match Hmac::<Sha1>::new_from_slice(self.key.as_bytes()) {
            Ok(mut mac) => {
                mac.update(url.as_bytes());
                hex::encode(mac.finalize().into_bytes())
            }
            // HMAC takes keys of any length; this cannot happen.
            Err(_) => String::new(),
        };
        format!("{}{digest}/{}", self.base, hex::encode(url.as_bytes()))
    }
}

/// An uploaded image that has thumbnails, as rendering shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadedImage {
    /// Width as displayed, pixels.
    pub width: u32,
    /// Height as displayed, pixels.
    pub height: u32,
    /// The MIME type of the original.
    pub content_type: String,
    /// The thumbnail messages show, `/user_uploads/thumbnail/.../840x560.webp`.
    pub thumbnail_url: String,
    /// The image (and that thumbnail) is animated.
    pub animated: bool,
    /// For types browsers cannot show: the name of the large transcoded thumbnail.
    pub transcoded_image: Option<String>,
}

/// What kind of preview a link gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An image; uploaded images carry what their thumbnails tell.
    Image(Option<UploadedImage>),
    /// A video file the browser plays.
    Video,
    /// A YouTube video, by its ID.
    YouTube(String),
}

impl Kind {
    /// Whether a paragraph holding nothing but the link is replaced by the preview (images
    /// and videos), rather than kept above it (YouTube).
    pub(crate) fn replaces_bare_link(&self) -> bool {
        !matches!(self, Kind::YouTube(_))
    }

    /// Whether the preview makes the message one `has:image` finds.
    pub(crate) fn is_image(&self) -> bool {
        !matches!(self, Kind::Video)
    }
}

fn path_of(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    &url[..end]
}

fn host_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Whether a URL points at an image, judged by its path's extension (the reference's list).
pub(crate) fn has_image_extension(url: &str) -> bool {
    let path = path_of(url).to_ascii_lowercase();
    [".bmp", ".gif", ".jpe", ".jpeg", ".jpg", ".png", ".webp"]
        .iter()
        .any(|ext| path.ends_with(ext))
}

/// Whether a URL is a video browsers play (MP4, WebM), judged as the reference does: by the
/// extension at the very end of the URL (a query string hides it).
fn is_video(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    name.ends_with(".mp4") || name.ends_with(".webm")
}

/// The YouTube video ID of a watch, embed, shorts or youtu.be link.
fn youtube_id(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return None;
    }
    let host = host_of(url)?.to_ascii_lowercase();
    let host = host.rsplit_once('@').map_or(host.as_str(), |(_, h)| h);
    let host = host.split(':').next().unwrap_or(host);
    let after_host = &rest[rest.find(['/', '?', '#']).unwrap_or(rest.len())..];
    let path = path_of(after_host);
    let query = after_host
        .split_once('?')
        .map(|(_, q)| q.split('#').next().unwrap_or(q))
        .unwrap_or("");
    let param = |name: &str| {
        query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_owned())
    };
    let id = match host {
        "m.youtube.com"
        | "www.youtube.com"
        | "www.youtube-nocookie.com"
        | "youtube.com"
        | "youtube-nocookie.com" => {
            if matches!(path, "/watch" | "/watch_popup") {
                param("v")
            } else if path == "/watch_videos" {
                param("video_ids").map(|ids| ids.split(',').next().unwrap_or("").to_owned())
            } else {
                ["/embed/", "/shorts/", "/v/"]
                    .iter()
                    .find_map(|prefix| path.strip_prefix(prefix))
                    .map(|rest| rest.split('/').next().unwrap_or("").to_owned())
            }
        }
        "youtu.be" => path.strip_prefix('/').map(str::to_owned),
        _ => None,
    }?;
    (!id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
    .then_some(id)
}

/// Whether a URL is on this server: relative, or absolute on the organization's host. Such
/// media is never proxied (uploads need the reader's credentials).
fn is_local(url: &str, lookup: &dyn Lookup) -> bool {
    match host_of(url) {
        None => true,
        Some(host) => lookup
            .realm_url()
            .and_then(host_of)
            .is_some_and(|realm| realm.eq_ignore_ascii_case(host)),
    }
}

/// The preview a link to `url` gets, if any.
pub(crate) fn kind_of(url: &str, lookup: &dyn Lookup) -> Option<Kind> {
    if is_video(url) {
        return Some(Kind::Video);
    }
    if let Some(path_id) = url.strip_prefix("/user_uploads/") {
        if lookup.knows_uploads() {
            return lookup
                .uploaded_image(path_id)
                .map(|image| Kind::Image(Some(image)));
        }
    }
    if has_image_extension(url) && host_of(url) != Some("pasteboard.co") {
        return Some(Kind::Image(None));
    }
    if host_of(url).is_none() || is_local(url, lookup) {
        return None;
    }
    youtube_id(url).map(Kind::YouTube)
}

fn is_absolute(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// The `<img>` of an image preview.
fn image_tag(url: &str, upload: Option<&UploadedImage>) -> String {
    if let Some(image) = upload {
        // Attributes in the reference's (alphabetical) order.
        let mut tag = String::from("<img");
        if image.animated {
            tag.push_str(" data-animated=\"true\"");
        }
        tag.push_str(&format!(
            " data-original-content-type=\"{}\" data-original-dimensions=\"{}x{}\"",
            escape::attr(&image.content_type),
            image.width,
            image.height
        ));
        if let Some(transcoded) = &image.transcoded_image {
            tag.push_str(&format!(
                " data-transcoded-image=\"{}\"",
                escape::attr(transcoded)
            ));
        }
        tag.push_str(&format!(" src=\"{}\">", escape::attr(&image.thumbnail_url)));
        return tag;
    }
    if is_absolute(url) {
        let enc = escape::quote(url, b"");
        format!(
            "<img data-src-fullsize=\"/thumbnail?url={enc}&amp;size=full\" src=\"/thumbnail?url={enc}&amp;size=thumbnail\">"
        )
    } else {
        format!("<img src=\"{}\">", escape::attr(url))
    }
}

/// The HTML of one preview of a link to `url` (shown with `title` when the link had text).
pub(crate) fn html(url: &str, title: Option<&str>, kind: &Kind, lookup: &dyn Lookup) -> String {
    let href = escape::attr(url);
    let title = title
        .map(|t| format!(" title=\"{}\"", escape::attr(t)))
        .unwrap_or_default();
    let link_attributes = sanitize::link_attributes(url);
    match kind {
        Kind::Image(upload) => format!(
            "<div class=\"message_inline_image\"><a href=\"{href}\"{title}{link_attributes}>{}</a></div>",
            image_tag(url, upload.as_ref())
        ),
        Kind::Video => {
            let video = if is_local(url, lookup) {
                format!("<video preload=\"metadata\" src=\"{href}\"></video>")
            } else {
                let src = lookup.camo().map_or_else(|| url.to_owned(), |c| c.url(url));
                format!(
                    "<video data-video-original-url=\"{href}\" preload=\"metadata\" src=\"{}\"></video>",
                    escape::attr(&src)
                )
            };
            format!(
                "<div class=\"message_inline_image message_inline_video\"><a href=\"{href}\"{title}{link_attributes}>{video}</a></div>"
            )
        }
        Kind::YouTube(id) => {
            let image = format!("https://i.ytimg.com/vi/{id}/default.jpg");
            let src = lookup.camo().map_or(image.clone(), |c| c.url(&image));
            format!(
                "<div class=\"youtube-video message_inline_image\"><a data-id=\"{}\" href=\"{href}\"{link_attributes}><img src=\"{}\"></a></div>",
                escape::attr(id),
                escape::attr(&src)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoLookup;

    #[test]
    fn camo_urls_are_what_camo_checks() {
        // The reference's test settings: key "dummy".
        let camo = Camo::new(
            "https://external-content.zulipcdn.net/external_content",
            "dummy",
        );
        assert_eq!(
            camo.url("https://example.com/a.mp4"),
            format!(
                "https://external-content.zulipcdn.net/external_content/{}/{}",
                {
                    let mut mac = Hmac::<Sha1>::new_from_slice(b"dummy").unwrap();
                    mac.update(b"https://example.com/a.mp4");
                    hex::encode(mac.finalize().into_bytes())
                },
                "68747470733a2f2f6578616d706c652e636f6d2f612e6d7034"
            )
        );
    }

    #[test]
    fn kinds() {
        let kind = |u: &str| kind_of(u, &NoLookup);
        assert_eq!(kind("https://x.org/a.MP4"), Some(Kind::Video));
        assert_eq!(kind("https://x.org/a.mp4?t=1"), None);
        assert_eq!(kind("https://x.org/a.png?t=1"), Some(Kind::Image(None)));
        assert_eq!(kind("https://pasteboard.co/a.png"), None);
        assert_eq!(
            kind("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=1"),
            Some(Kind::YouTube("dQw4w9WgXcQ".into()))
        );
        assert_eq!(
            kind("https://youtu.be/dQw4w9WgXcQ"),
            Some(Kind::YouTube("dQw4w9WgXcQ".into()))
        );
        assert_eq!(
            kind("https://youtube.com/shorts/abc_-1/x"),
            Some(Kind::YouTube("abc_-1".into()))
        );
        assert_eq!(kind("https://www.youtube.com/watch?v=a<b"), None);
        assert_eq!(kind("https://example.com/watch?v=abc"), None);
        assert_eq!(kind("/user_uploads/1/ab/x/a.png"), Some(Kind::Image(None)));
    }

    #[test]
    fn uploaded_images_show_their_thumbnail() {
        let image = UploadedImage {
            width: 1920,
            height: 1080,
            content_type: "image/gif".into(),
            thumbnail_url: "/user_uploads/thumbnail/1/ab/x/a.gif/840x560-anim.webp".into(),
            animated: true,
            transcoded_image: None,
        };
        assert_eq!(
            image_tag("/user_uploads/1/ab/x/a.gif", Some(&image)),
            "<img data-animated=\"true\" data-original-content-type=\"image/gif\" data-original-dimensions=\"1920x1080\" src=\"/user_uploads/thumbnail/1/ab/x/a.gif/840x560-anim.webp\">"
        );
    }
}

//! The chat Markdown flavour, rendered to sanitized HTML the way Zulip's own Markdown processor
//! renders it, because real clients parse the HTML classes it produces.
//!
//! Messages go through [`render_message`] (or [`render_message_with`] for per-user options),
//! which looks organization data up through a [`Lookup`]: users and groups for mentions,
//! channels for channel links, custom emoji and linkifiers. Channel descriptions, the
//! organization description and Markdown profile fields go through [`render`], which knows no
//! organization data.
//!
//! The pipeline, in order:
//! 1. [`fence`]: Zulip's fenced block preprocessor (code, quote, spoiler and math blocks);
//! 2. [`blocks`]: line fix-ups for Zulip's list nesting, hanging lists and lazy quotes;
//! 3. [`extract`]: the inline syntax that wins over emphasis (code spans, mentions, channel
//!    links, timestamps, inline math, raw HTML tags) is replaced by placeholders;
//! 4. comrak parses the CommonMark structure and [`render`](mod@render) writes Zulip's HTML,
//!    running autolinks, linkifiers and emoji over the text;
//! 5. [`sanitize`] checks the result with ammonia.

use std::collections::BTreeSet;

mod autolink;
mod blocks;
mod channels;
mod code;
mod emoji;
mod escape;
mod extract;
mod fence;
pub mod highlight;
pub mod html_diff;
mod link_schemes;
mod linkifiers;
mod math;
mod mentions;
mod previews;
mod render;
mod sanitize;
mod stash;
mod tex;
mod timestamp;

pub use linkifiers::topic_links;
pub use math::warm_up as warm_up_math;
pub use previews::{Camo, UploadedImage};

/// Organization data the renderer looks up (users, groups, channels, emoji, linkifiers). Every
/// method defaults to knowing nothing, so a lookup implements only what it has.
pub trait Lookup {
    /// Active users whose full name is `full_name` (names are not unique).
    fn users_by_name(&self, _full_name: &str) -> Vec<MentionUser> {
        Vec::new()
    }
    /// The user with this id, if any.
    fn user_by_id(&self, _id: i64) -> Option<MentionUser> {
        None
    }
    /// The user group with this name, if any.
    fn group_by_name(&self, _name: &str) -> Option<MentionGroup> {
        None
    }
    /// The channel with this name, if any.
    fn channel_by_name(&self, _name: &str) -> Option<MentionChannel> {
        None
    }
    /// The organization's custom emoji with this name, if any.
    fn realm_emoji(&self, _name: &str) -> Option<RealmEmoji> {
        None
    }
    /// The organization's linkifiers, in priority order.
    fn linkifiers(&self) -> &[Linkifier] {
        &[]
    }
    /// The organization's base URL without a trailing slash (e.g. `https://chat.example.com`);
    /// links into it are rewritten to relative ones, as Zulip does.
    fn realm_url(&self) -> Option<&str> {
        None
    }
    /// Whether [`Lookup::uploaded_image`] knows the organization's uploads. When it does not,
    /// links to uploads get previews by their file extension, as other links do.
    fn knows_uploads(&self) -> bool {
        false
    }
    /// The uploaded image at `path_id` (the part after `/user_uploads/`), when it is an image
    /// with thumbnails; only such uploads get image previews.
    fn uploaded_image(&self, _path_id: &str) -> Option<UploadedImage> {
        None
    }
    /// The organization's camo image proxy, if it has one.
    fn camo(&self) -> Option<&Camo> {
        None
    }
}

/// A [`Lookup`] that knows nothing: no users, groups, channels, custom emoji or linkifiers.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoLookup;

impl Lookup for NoLookup {}

/// A user that can be mentioned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MentionUser {
    /// The user's id.
    pub id: i64,
    /// The user's full name, as shown in the mention.
    pub full_name: String,
}

/// A user group that can be mentioned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MentionGroup {
    /// The group's id.
    pub id: i64,
    /// The group's name.
    pub name: String,
}

/// A channel that can be linked to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MentionChannel {
    /// The channel's id.
    pub id: i64,
    /// The channel's name.
    pub name: String,
}

/// A custom emoji of the organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealmEmoji {
    /// The emoji's id (its `emoji_code`).
    pub id: String,
    /// The emoji's name, without colons.
    pub name: String,
    /// Where the emoji's image is served from.
    pub url: String,
}

/// A linkifier: text matching `pattern` (a regular expression with named groups) becomes a
/// link to `url_template` (an RFC 6570 template using those group names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Linkifier {
    /// The linkifier's id.
    pub id: i64,
    /// The regular expression, e.g. `#(?P<id>[0-9]+)`.
    pub pattern: String,
    /// The URL template, e.g. `https://github.com/zulip/zulip/issues/{id}`.
    pub url_template: String,
}

/// Per-message rendering options that are not organization data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Turn emoticons such as `:)` into emoji (the sender's `translate_emoticons` setting).
    pub translate_emoticons: bool,
}

/// A rendered message and what its rendering found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendered {
    /// The sanitized HTML.
    pub html: String,
    /// Users mentioned without `_` (silent mentions are not listed).
    pub mentioned_user_ids: BTreeSet<i64>,
    /// User groups mentioned without `_`.
    pub mentioned_group_ids: BTreeSet<i64>,
    /// `@**all**`, `@**everyone**`, `@**channel**` or `@**stream**` was used (not silently).
    pub stream_wildcard: bool,
    /// `@**topic**` was used (not silently).
    pub topic_wildcard: bool,
    /// The message links somewhere (a Markdown link, a bare URL or a linkifier).
    pub has_link: bool,
    /// The message shows an inline image preview.
    pub has_image: bool,
    /// The message links to an uploaded file (`/user_uploads/`).
    pub has_attachment: bool,
}

/// A link found in a topic name by [`topic_links`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicLink {
    /// The text of the topic that is linked.
    pub text: String,
    /// Where it links to.
    pub url: String,
}

/// Renders a message with the organization data in `lookup` and default options.
pub fn render_message(source: &str, lookup: &dyn Lookup) -> Rendered {
    render_message_with(source, lookup, RenderOptions::default())
}

/// Renders a message with the organization data in `lookup` and the given options.
pub fn render_message_with(source: &str, lookup: &dyn Lookup, options: RenderOptions) -> Rendered {
    let (mut rendered, trusted) = render::render_document(source, lookup, options);
    rendered.html = stash::splice_trusted(&sanitize::checked(&rendered.html), &trusted);
    rendered
}

/// Renders `source` to HTML that is safe to insert into a page, with no organization data:
/// the same as `render_message(source, &NoLookup).html`.
pub fn render(source: &str) -> String {
    render_message(source, &NoLookup).html
}

/// Removes everything but the tags, attributes and classes chat HTML may carry. Every link
/// gets `rel="noopener noreferrer"`; a `target` is kept only if it is `_blank` (none is added:
/// [`render_message`] adds it to links that leave the app).
pub fn sanitize(html: &str) -> String {
    sanitize::clean(html)
}

/// The code of the Unicode emoji called `name` (as reactions and `:name:` use it), if any.
pub fn emoji_code_for_name(name: &str) -> Option<String> {
    emoji::code_for_name(name)
}

/// Every Unicode emoji code with its names, canonical name first (the data the mobile app
/// fetches from `server_emoji_data_url`).
pub fn emoji_code_to_names() -> std::collections::BTreeMap<String, Vec<String>> {
    emoji::code_to_names()
}

/// Whether `code` is a Unicode emoji code.
pub fn is_emoji_code(code: &str) -> bool {
    emoji::is_known_code(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_paragraphs_and_emphasis() {
        assert_eq!(
            render("hello **world**"),
            "<p>hello <strong>world</strong></p>"
        );
    }

    #[test]
    fn line_breaks_are_kept() {
        assert_eq!(render("a\nb"), "<p>a<br>\nb</p>");
    }

    #[test]
    fn scripts_are_removed() {
        let html = render("<script>alert(1)</script> hi <img src=x onerror=alert(1)>");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
    }

    #[test]
    fn sanitize_strips_event_handlers() {
        let html = sanitize("<a href=\"https://x.org\" onclick=\"evil()\">x</a><script>1</script>");
        assert_eq!(
            html,
            "<a href=\"https://x.org\" rel=\"noopener noreferrer\">x</a>"
        );
    }

    /// A lookup that knows one channel, `Denmark` (id 1).
    struct OneChannel;

    impl Lookup for OneChannel {
        fn users_by_name(&self, _: &str) -> Vec<MentionUser> {
            Vec::new()
        }
        fn user_by_id(&self, _: i64) -> Option<MentionUser> {
            None
        }
        fn group_by_name(&self, _: &str) -> Option<MentionGroup> {
            None
        }
        fn channel_by_name(&self, name: &str) -> Option<MentionChannel> {
            (name == "Denmark").then(|| MentionChannel {
                id: 1,
                name: name.to_owned(),
            })
        }
        fn realm_emoji(&self, _: &str) -> Option<RealmEmoji> {
            None
        }
        fn linkifiers(&self) -> &[Linkifier] {
            &[]
        }
    }

    const EXTERNAL: &str = "target=\"_blank\" rel=\"noopener noreferrer\"";

    #[test]
    fn markdown_links_open_in_a_new_tab() {
        assert_eq!(
            render("[x](https://example.com)"),
            format!("<p><a href=\"https://example.com\" {EXTERNAL}>x</a></p>")
        );
    }

    #[test]
    fn autolinks_open_in_a_new_tab() {
        assert_eq!(
            render("see https://example.com/a?b=1&c=2 now"),
            format!(
                "<p>see <a href=\"https://example.com/a?b=1&amp;c=2\" {EXTERNAL}>https://example.com/a?b=1&amp;c=2</a> now</p>"
            )
        );
        assert!(render("<https://example.com>").contains(EXTERNAL));
        assert!(render("[f](/user_uploads/1/ab/f.pdf)").contains(EXTERNAL));
    }

    #[test]
    fn image_previews_and_linkifiers_open_in_a_new_tab() {
        let html = render("see https://x.org/a.png");
        assert_eq!(html.matches(EXTERNAL).count(), 2, "{html}");
        let linkifiers = [Linkifier {
            id: 1,
            pattern: "#(?P<id>[0-9]+)".to_owned(),
            url_template: "https://trac.example.com/ticket/{id}".to_owned(),
        }];
        struct Linkifiers<'a>(&'a [Linkifier]);
        impl Lookup for Linkifiers<'_> {
            fn linkifiers(&self) -> &[Linkifier] {
                self.0
            }
        }
        assert_eq!(
            render_message("fixes #123", &Linkifiers(&linkifiers)).html,
            format!(
                "<p>fixes <a href=\"https://trac.example.com/ticket/123\" {EXTERNAL}>#123</a></p>"
            )
        );
    }

    #[test]
    fn narrow_links_stay_in_the_app() {
        for source in [
            "#**Denmark**",
            "#**Denmark>some topic**",
            "#**Denmark>some topic@42**",
            "[here](#narrow/stream/1-Denmark)",
        ] {
            let html = render_message(source, &OneChannel).html;
            assert!(html.contains("<a "), "{source} -> {html}");
            assert!(!html.contains("target="), "{source} -> {html}");
        }
        assert_eq!(
            render_message("#**Denmark>t**", &OneChannel).html,
            "<p><a class=\"stream-topic\" data-stream-id=\"1\" href=\"/#narrow/channel/1-Denmark/topic/t\" rel=\"noopener noreferrer\">#Denmark &gt; t</a></p>"
        );
    }

    #[test]
    fn unsafe_links_and_handlers_are_still_removed() {
        let html = render(
            "[x](javascript:alert(1)) <a href=\"javascript:alert(1)\" onclick=\"x()\">y</a>",
        );
        assert!(!html.contains("href=\"javascript"), "{html}");
        assert!(!html.contains("<a"), "{html}");
        let html =
            sanitize("<a href=\"javascript:alert(1)\" onclick=\"x()\" target=\"_blank\">y</a>");
        assert_eq!(
            html,
            "<a target=\"_blank\" rel=\"noopener noreferrer\">y</a>"
        );
        assert_eq!(sanitize("<p onclick=\"x()\">a</p>"), "<p>a</p>");
    }

    #[test]
    fn the_sanitizer_keeps_rendered_links_byte_for_byte() {
        for source in [
            "[x](https://example.com/?a=1&b=\"2\")",
            "<https://example.com>",
            "https://x.org/a.png",
            "#**Denmark>it's \"quoted\"**",
        ] {
            let raw = render::render_document(source, &OneChannel, RenderOptions::default())
                .0
                .html;
            assert_eq!(render_message(source, &OneChannel).html, raw, "{source}");
        }
    }

    #[test]
    fn random_input_never_panics() {
        const PIECES: &[&str] = &[
            "*", "**", "_", "`", "```", "~~", "~~~", "$$", "<", ">", "> ", "<time:", "@**", "@_*",
            "#**", "|", "-", "1. ", "* ", "  ", "\n", "\n\n", "[", "](", ")", "(", "http://",
            "a.com", "x@y.org", ":smile:", ":", "😀", "\u{200d}", "\u{fe0f}", "é", "\\", "&", "\"",
            "'", "quote", "spoiler", "math", "<b>", "</div>", "#", "!", "0", "\t",
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..3000 {
            let mut text = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(PIECES[(seed % PIECES.len() as u64) as usize]);
            }
            let html = render_message_with(
                &text,
                &NoLookup,
                RenderOptions {
                    translate_emoticons: true,
                },
            )
            .html;
            assert!(!html.contains("<script"), "{text:?} -> {html}");
            let _ = topic_links(&text, &[]);
        }
    }

    /// A lookup that knows one uploaded image, `1/ab/x/cat.png`.
    struct Uploads;

    impl Lookup for Uploads {
        fn knows_uploads(&self) -> bool {
            true
        }
        fn uploaded_image(&self, path_id: &str) -> Option<UploadedImage> {
            (path_id == "1/ab/x/cat.png").then(|| UploadedImage {
                width: 1024,
                height: 768,
                content_type: "image/png".to_owned(),
                thumbnail_url: "/user_uploads/thumbnail/1/ab/x/cat.png/840x560.webp".to_owned(),
                animated: false,
                transcoded_image: None,
            })
        }
        fn realm_url(&self) -> Option<&str> {
            Some("https://chat.example.com")
        }
    }

    #[test]
    fn uploaded_images_preview_their_thumbnail() {
        let r = render_message("[cat.png](/user_uploads/1/ab/x/cat.png)", &Uploads);
        assert_eq!(
            r.html,
            format!(
                "<p><a href=\"/user_uploads/1/ab/x/cat.png\" {EXTERNAL}>cat.png</a></p>\n\
                 <div class=\"message_inline_image\"><a href=\"/user_uploads/1/ab/x/cat.png\" title=\"cat.png\" {EXTERNAL}>\
                 <img data-original-content-type=\"image/png\" data-original-dimensions=\"1024x768\" \
                 src=\"/user_uploads/thumbnail/1/ab/x/cat.png/840x560.webp\"></a></div>"
            )
        );
        assert!(r.has_image && r.has_attachment);
        // Uploads that are not thumbnailed images get no preview, whatever their name.
        let r = render_message("[dog.png](/user_uploads/1/ab/y/dog.png)", &Uploads);
        assert!(!r.html.contains("message_inline_image") && !r.has_image);
        // Without upload data, the extension decides.
        assert!(render("[dog.png](/user_uploads/1/ab/y/dog.png)")
            .contains("<img src=\"/user_uploads/1/ab/y/dog.png\">"));
    }

    #[test]
    fn videos_play_inline() {
        let r = render_message("https://v.example.org/clip.webm", &Uploads);
        assert_eq!(
            r.html,
            format!(
                "<div class=\"message_inline_image message_inline_video\"><a href=\"https://v.example.org/clip.webm\" {EXTERNAL}>\
                 <video data-video-original-url=\"https://v.example.org/clip.webm\" preload=\"metadata\" src=\"https://v.example.org/clip.webm\"></video></a></div>"
            )
        );
        assert!(!r.has_image);
        let local = render_message("[talk](/user_uploads/1/ab/z/talk.mp4)", &Uploads).html;
        assert!(
            local.contains(
                "<video preload=\"metadata\" src=\"/user_uploads/1/ab/z/talk.mp4\"></video>"
            ),
            "{local}"
        );
    }

    #[test]
    fn youtube_links_keep_the_link_and_add_a_preview() {
        let r = render_message("https://www.youtube.com/watch?v=dQw4w9WgXcQ", &NoLookup);
        assert!(
            r.html
                .starts_with("<p><a href=\"https://www.youtube.com/watch?v=dQw4w9WgXcQ\""),
            "{}",
            r.html
        );
        assert!(r.html.contains(
            "<div class=\"youtube-video message_inline_image\"><a data-id=\"dQw4w9WgXcQ\" href=\"https://www.youtube.com/watch?v=dQw4w9WgXcQ\""
        ));
        assert!(r
            .html
            .contains("<img src=\"https://i.ytimg.com/vi/dQw4w9WgXcQ/default.jpg\">"));
        assert!(r.has_image);
    }

    #[test]
    fn too_many_links_get_no_previews() {
        let mut text = String::from("https://x.org/a.png\n");
        for i in 0..24 {
            text.push_str(&format!("https://x.org/{i}\n"));
        }
        assert!(!render(&text).contains("message_inline_image"));
        let fewer: String = text.lines().take(24).collect::<Vec<_>>().join("\n");
        assert!(render(&fewer).contains("message_inline_image"));
    }

    #[test]
    fn math_is_typeset_and_survives_sanitizing() {
        let r = render_message("$$x^2$$ and\n```math\ny\n```", &NoLookup);
        assert!(r.html.starts_with("<p><span class=\"katex\"><span class=\"katex-mathml\"><math xmlns=\"http://www.w3.org/1998/Math/MathML\">"), "{}", r.html);
        assert!(r.html.contains("<span class=\"katex-display\">"));
        assert!(!r.html.contains('\u{E007}'));
    }

    #[test]
    fn private_use_characters_cannot_forge_placeholders() {
        let html = render("a \u{E000}\u{E010}\u{E001} b");
        assert!(!html.contains('\u{E000}'), "{html}");
    }
}

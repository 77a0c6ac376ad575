//! The last line of defence: ammonia with exactly the tags, attributes and classes the
//! renderer writes. The renderer escapes all user text itself, so ammonia normally changes
//! nothing; [`checked`] then keeps the renderer's byte-exact output (ammonia's serializer
//! spells some entities differently) and otherwise returns ammonia's cleaned HTML.
//!
//! Links: ammonia's `link_rel` gives every `<a>` `rel="noopener noreferrer"`, and `target`
//! may only be `_blank`. Whether a link gets `target="_blank"` depends on its `href`, which
//! ammonia's hooks cannot see together, so the renderer writes both attributes itself through
//! [`link_attributes`], in the order ammonia serializes them, so that [`checked`] keeps its
//! output byte for byte.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use ammonia::{Builder, UrlRelative};

/// The `rel` of every link: external pages get no `window.opener` and no `Referer`.
pub(crate) const LINK_REL: &str = "noopener noreferrer";

/// Whether a link navigates inside the app: a fragment (`#narrow/...`) or the app's root with
/// a fragment (`/#narrow/...`, as channel and topic links are written). The reference web
/// client handles these with its hash router, so they must not open a new tab.
fn opens_in_app(href: &str) -> bool {
    href.starts_with('#') || href.starts_with("/#")
}

/// The attributes that end the start tag of a link to `href` (unescaped): ` rel="..."`, preceded
/// by ` target="_blank"` unless the link [opens in the app](opens_in_app). `rel` comes last
/// because ammonia's `link_rel` re-adds it after all other attributes.
pub(crate) fn link_attributes(href: &str) -> &'static str {
    if opens_in_app(href) {
        " rel=\"noopener noreferrer\""
    } else {
        " target=\"_blank\" rel=\"noopener noreferrer\""
    }
}

/// Classes the renderer writes, besides `emoji-…`.
const CLASSES: &[&str] = &[
    "codehilite",
    "emoji",
    "message_inline_image",
    "message_inline_video",
    "message-link",
    "spoiler-block",
    "spoiler-content",
    "spoiler-header",
    "stream",
    "stream-topic",
    "tex-error",
    "timestamp-error",
    "topic-mention",
    "user-group-mention",
    "user-mention",
    "silent",
    "youtube-video",
];

fn allowed_class_list(value: &str) -> bool {
    value.split_ascii_whitespace().all(|class| {
        CLASSES.contains(&class)
            || class.strip_prefix("emoji-").is_some_and(|code| {
                !code.is_empty() && code.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
            })
    })
}

fn builder() -> &'static Builder<'static> {
    static BUILDER: OnceLock<Builder<'static>> = OnceLock::new();
    BUILDER.get_or_init(|| {
        let tags: HashSet<&str> = [
            "p",
            "br",
            "strong",
            "em",
            "del",
            "a",
            "code",
            "pre",
            "span",
            "div",
            "blockquote",
            "ul",
            "ol",
            "li",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "hr",
            "img",
            "time",
            "video",
        ]
        .into_iter()
        .collect();
        let mut attributes: HashMap<&str, HashSet<&str>> = HashMap::new();
        let mut allow = |tag: &'static str, attrs: &[&'static str]| {
            attributes.insert(tag, attrs.iter().copied().collect());
        };
        allow(
            "a",
            &[
                "href",
                "title",
                "class",
                "data-stream-id",
                "data-id",
                "target",
            ],
        );
        allow(
            "span",
            &[
                "class",
                "data-user-id",
                "data-user-group-id",
                "aria-label",
                "aria-hidden",
                "role",
                "title",
            ],
        );
        allow("div", &["class", "data-code-language", "aria-hidden"]);
        allow(
            "img",
            &[
                "alt",
                "class",
                "src",
                "title",
                "data-src-fullsize",
                "data-animated",
                "data-original-content-type",
                "data-original-dimensions",
                "data-transcoded-image",
            ],
        );
        allow("video", &["src", "preload", "data-video-original-url"]);
        allow("time", &["datetime"]);
        allow("ol", &["start"]);
        allow("th", &["style"]);
        allow("td", &["style"]);
        let mut b = Builder::empty();
        b.tags(tags)
            .tag_attributes(attributes)
            .url_schemes(
                ["http", "https", "ftp", "mailto", "tel", "sms"]
                    .into_iter()
                    .collect(),
            )
            .url_relative(UrlRelative::PassThrough)
            .link_rel(Some(LINK_REL))
            .attribute_filter(|element, attribute, value| match (element, attribute) {
                ("a", "target") => (value == "_blank").then_some(Cow::Borrowed(value)),
                (_, "class") => allowed_class_list(value).then_some(Cow::Borrowed(value)),
                (_, "style") => matches!(
                    value,
                    "text-align: left;" | "text-align: center;" | "text-align: right;"
                )
                .then_some(Cow::Borrowed(value)),
                _ => Some(Cow::Borrowed(value)),
            });
        b
    })
}

/// Cleans arbitrary HTML down to what chat messages may hold.
pub(crate) fn clean(html: &str) -> String {
    builder().clean(html).to_string()
}

/// Respells the entities that ammonia's serializer writes differently, so that HTML it did
/// not change compares equal: outside tags `&quot;` and `&#39;`/`&#x27;` become plain quotes;
/// inside tags `&lt;`, `&gt;` and `&#39;` become plain characters; U+00A0 becomes `&nbsp;`.
fn canonical(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    let mut rest = html;
    while let Some(c) = rest.chars().next() {
        let replaced: Option<(&str, &str)> = if c == '&' {
            let table: &[(&str, &str)] = if in_tag {
                &[
                    ("&lt;", "<"),
                    ("&gt;", ">"),
                    ("&#39;", "'"),
                    ("&#x27;", "'"),
                ]
            } else {
                &[("&quot;", "\""), ("&#39;", "'"), ("&#x27;", "'")]
            };
            table
                .iter()
                .find(|(from, _)| rest.starts_with(from))
                .copied()
        } else {
            None
        };
        if let Some((from, to)) = replaced {
            out.push_str(to);
            rest = &rest[from.len()..];
            continue;
        }
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            _ => {}
        }
        if c == '\u{A0}' {
            out.push_str("&nbsp;");
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Returns `html` itself when ammonia would leave it as it is, and ammonia's cleaned version
/// otherwise.
pub(crate) fn checked(html: &str) -> String {
    let cleaned = clean(html);
    if cleaned == canonical(html) {
        html.to_owned()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_renderer_output_exactly() {
        let html = "<div class=\"codehilite\"><pre><span></span><code>a &quot;b&quot; &#39;c&#39;\n</code></pre></div>";
        assert_eq!(checked(html), html);
        let emoji = "<p><span aria-label=\"smile\" class=\"emoji emoji-1f642\" role=\"img\" title=\"smile\">:smile:</span></p>";
        assert_eq!(checked(emoji), emoji);
    }

    #[test]
    fn removes_what_is_not_allowed() {
        assert_eq!(checked("<p onclick=\"x()\">a</p>"), "<p>a</p>");
        assert_eq!(checked("<span class=\"evil\">a</span>"), "<span>a</span>");
        assert_eq!(
            checked("<a href=\"javascript:x()\">a</a>"),
            "<a rel=\"noopener noreferrer\">a</a>"
        );
        assert_eq!(
            checked(
                "<a href=\"https://x.org\" onclick=\"x()\" target=\"_top\" rel=\"opener\">a</a>"
            ),
            "<a href=\"https://x.org\" rel=\"noopener noreferrer\">a</a>"
        );
        assert_eq!(checked("<script>x()</script>b"), "b");
        assert_eq!(checked("<td style=\"color: red\">a</td>"), "a");
    }

    #[test]
    fn link_attributes_survive_ammonia_unchanged() {
        assert!(link_attributes("https://x.org").ends_with(&format!(" rel=\"{LINK_REL}\"")));
        for href in [
            "https://x.org/a?b=1&c=2",
            "/user_uploads/1/a.pdf",
            "#narrow/a",
            "/#narrow/b",
        ] {
            let html = format!(
                "<p><a href=\"{}\" title=\"t\"{}>x</a></p>",
                crate::escape::attr(href),
                link_attributes(href)
            );
            assert_eq!(checked(&html), html);
        }
        assert_eq!(
            link_attributes("https://x.org"),
            " target=\"_blank\" rel=\"noopener noreferrer\""
        );
        assert_eq!(
            link_attributes("/user_uploads/1/a.pdf"),
            link_attributes("https://x.org")
        );
        assert_eq!(link_attributes("#narrow/a"), " rel=\"noopener noreferrer\"");
        assert_eq!(
            link_attributes("/#narrow/a"),
            " rel=\"noopener noreferrer\""
        );
    }
}

//! The last line of defence: ammonia with exactly the tags, attributes and classes the
//! renderer writes. The renderer escapes all user text itself, so ammonia normally changes
//! nothing; [`checked`] then keeps the renderer's byte-exact output (ammonia's serializer
//! spells some entities differently) and otherwise returns ammonia's cleaned HTML.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use ammonia::{Builder, UrlRelative};

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
        ]
        .into_iter()
        .collect();
        let mut attributes: HashMap<&str, HashSet<&str>> = HashMap::new();
        let mut allow = |tag: &'static str, attrs: &[&'static str]| {
            attributes.insert(tag, attrs.iter().copied().collect());
        };
        allow("a", &["href", "title", "class", "data-stream-id"]);
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
            &["alt", "class", "src", "title", "data-src-fullsize"],
        );
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
            .link_rel(None)
            .attribute_filter(|_element, attribute, value| match attribute {
                "class" => allowed_class_list(value).then_some(Cow::Borrowed(value)),
                "style" => matches!(
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
        assert_eq!(checked("<a href=\"javascript:x()\">a</a>"), "<a>a</a>");
        assert_eq!(checked("<script>x()</script>b"), "b");
        assert_eq!(checked("<td style=\"color: red\">a</td>"), "a");
    }
}

//! Writes Zulip's HTML for the comrak syntax tree: block layout as Zulip's web client writes
//! it, the text passes (autolinks, linkifiers, emoji), links with Zulip's URL rules, and
//! inline image previews.

use std::collections::{HashMap, HashSet};

use comrak::{
    nodes::{AstNode, ListType, NodeValue, TableAlignment},
    parse_document, Arena, Options,
};

use crate::link_schemes::{safe_url, scheme};
use crate::{
    autolink, blocks, emoji, escape, extract, fence, linkifiers, previews, sanitize,
    stash::{self, Effect, Segment, Stash, TOKEN_END, TOKEN_START},
    Lookup, RenderOptions, Rendered,
};

/// Tags whose placeholders stand alone as blocks rather than inside a paragraph.
fn is_block_html(html: &str) -> bool {
    let rest = html.strip_prefix('<').unwrap_or("");
    let rest = rest.strip_prefix('/').unwrap_or(rest);
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    matches!(
        name.as_str(),
        "div"
            | "blockquote"
            | "p"
            | "pre"
            | "ul"
            | "ol"
            | "li"
            | "table"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "hr"
    )
}

/// A link that gets a preview.
struct Preview {
    url: String,
    title: Option<String>,
    anchor: String,
    kind: previews::Kind,
}

/// State while writing inline content.
#[derive(Default)]
struct Inline {
    in_link: bool,
    depth: usize,
    previews: Vec<Preview>,
}

struct Renderer<'l> {
    lookup: &'l dyn Lookup,
    options: RenderOptions,
    stash: Stash,
    result: Rendered,
    previews_seen: HashSet<String>,
    /// Whether links get previews (not when the message has too many links).
    previews_enabled: bool,
    /// The distinct links outside quotes, to count them against the preview limit.
    unquoted_links: HashSet<String>,
    root_tail: String,
    in_blockquote: usize,
    list_starts: HashMap<usize, usize>,
}

/// Renders a message to (unsanitized) HTML and collects what the rendering found. Trusted
/// pieces (typeset math) stand in the HTML as markers; the second value holds them, for
/// [`stash::splice_trusted`] after sanitizing.
pub(crate) fn render_document(
    source: &str,
    lookup: &dyn Lookup,
    options: RenderOptions,
) -> (Rendered, Vec<String>) {
    let (rendered, trusted, links) = render_pass(source, lookup, options, true);
    if links > previews::LIMIT_PER_MESSAGE && rendered.html.contains("message_inline_") {
        // As the reference: a message with that many links gets no previews at all.
        let (rendered, trusted, _) = render_pass(source, lookup, options, false);
        return (rendered, trusted);
    }
    (rendered, trusted)
}

/// One rendering; also returns how many distinct links it found outside quotes.
fn render_pass(
    source: &str,
    lookup: &dyn Lookup,
    options: RenderOptions,
    previews_enabled: bool,
) -> (Rendered, Vec<String>, usize) {
    let source = stash::scrub_input(source)
        .replace("\r\n", "\n")
        .replace('\r', "\n");
    let mut stash = Stash::default();
    let lines = fence::preprocess(&source, &mut stash);
    let fixed = blocks::fix_up(lines, &mut stash);
    let text = extract::extract(&fixed.lines.join("\n"), lookup, &mut stash);

    let arena = Arena::new();
    let mut comrak_options = Options::default();
    comrak_options.extension.table = true;
    let root = parse_document(&arena, &text, &comrak_options);

    let mut renderer = Renderer {
        lookup,
        options,
        stash,
        result: Rendered::default(),
        previews_seen: HashSet::new(),
        previews_enabled,
        unquoted_links: HashSet::new(),
        root_tail: String::new(),
        in_blockquote: 0,
        list_starts: fixed.list_starts,
    };
    let mut html = String::with_capacity(text.len() * 2);
    for child in root.children() {
        renderer.block(child, &mut html);
    }
    html.push_str(&renderer.root_tail);
    let trimmed = html.trim_end_matches('\n').len();
    html.truncate(trimmed);
    let trusted = renderer.stash.take_trusted();
    let links = renderer.unquoted_links.len();
    let mut result = renderer.result;
    result.html = html;
    (result, trusted, links)
}

impl Renderer<'_> {
    fn block<'a>(&mut self, node: &'a AstNode<'a>, out: &mut String) {
        let value = node.data.borrow().value.clone();
        match value {
            NodeValue::Paragraph => self.paragraph_block(node, out),
            NodeValue::Heading(h) => {
                let mut st = Inline::default();
                let inner = self.inlines(node, &mut st);
                out.push_str(&format!("<h{0}>{inner}</h{0}>\n", h.level));
                self.previews_to_root(st.previews);
            }
            NodeValue::BlockQuote | NodeValue::MultilineBlockQuote(_) => {
                self.in_blockquote += 1;
                out.push_str("<blockquote>\n");
                for child in node.children() {
                    self.block(child, out);
                }
                out.push_str("</blockquote>\n");
                self.in_blockquote -= 1;
            }
            NodeValue::List(list) => {
                let line = node.data.borrow().sourcepos.start.line;
                let start = line
                    .checked_sub(1)
                    .and_then(|l| self.list_starts.get(&l).copied())
                    .unwrap_or(list.start);
                if list.list_type == ListType::Ordered {
                    if start == 1 {
                        out.push_str("<ol>\n");
                    } else {
                        out.push_str(&format!("<ol start=\"{start}\">\n"));
                    }
                } else {
                    out.push_str("<ul>\n");
                }
                for item in node.children() {
                    self.item(item, list.tight, out);
                }
                out.push_str(if list.list_type == ListType::Ordered {
                    "</ol>\n"
                } else {
                    "</ul>\n"
                });
            }
            NodeValue::Item(_) => self.item(node, true, out),
            NodeValue::CodeBlock(code) => {
                let literal = self.stash.restore_original(&code.literal);
                let info = self.stash.restore_original(&code.info);
                let lang = info.split_whitespace().next();
                out.push_str(&crate::code::code_block(lang, &literal));
                out.push('\n');
            }
            NodeValue::ThematicBreak => out.push_str("<hr>\n"),
            NodeValue::Table(table) => self.table(node, &table.alignments, out),
            NodeValue::HtmlBlock(html) => {
                out.push_str("<p>");
                out.push_str(&escape::text(&self.stash.restore_original(&html.literal)));
                out.push_str("</p>\n");
            }
            _ => {
                for child in node.children() {
                    self.block(child, out);
                }
            }
        }
    }

    /// The stash entry of a paragraph that holds nothing but one block-level placeholder.
    fn block_token<'a>(&self, node: &'a AstNode<'a>) -> Option<String> {
        let child = node.first_child()?;
        if child.next_sibling().is_some() {
            return None;
        }
        let data = child.data.borrow();
        let NodeValue::Text(text) = &data.value else {
            return None;
        };
        let t = text.trim();
        if !t.starts_with(TOKEN_START)
            || !t.ends_with(TOKEN_END)
            || t.matches(TOKEN_START).count() != 1
        {
            return None;
        }
        match self.stash.segments(t).as_slice() {
            [Segment::Token(i)] => self
                .stash
                .get(*i)
                .filter(|e| is_block_html(&e.html))
                .map(|e| e.html.clone()),
            _ => None,
        }
    }

    fn paragraph_block<'a>(&mut self, node: &'a AstNode<'a>, out: &mut String) {
        if let Some(html) = self.block_token(node) {
            out.push_str(&html);
            out.push('\n');
            return;
        }
        let mut st = Inline::default();
        let inner = self.inlines(node, &mut st);
        let only_link = st.previews.len() == 1
            && st.previews[0].title.is_none()
            && st.previews[0].kind.replaces_bare_link()
            && inner == st.previews[0].anchor;
        let previews = self.previews_html(st.previews);
        if only_link && !previews.is_empty() {
            out.push_str(&previews);
            out.push('\n');
            return;
        }
        out.push_str("<p>");
        out.push_str(&inner);
        out.push_str("</p>\n");
        if !previews.is_empty() {
            out.push_str(&previews);
            out.push('\n');
        }
    }

    fn item<'a>(&mut self, node: &'a AstNode<'a>, tight: bool, out: &mut String) {
        out.push_str("<li>");
        if tight {
            let mut previews = Vec::new();
            for child in node.children() {
                let is_paragraph = matches!(child.data.borrow().value, NodeValue::Paragraph);
                if is_paragraph {
                    if let Some(html) = self.block_token(child) {
                        out.push_str(&html);
                        continue;
                    }
                    let mut st = Inline::default();
                    out.push_str(&self.inlines(child, &mut st));
                    previews.extend(st.previews);
                } else {
                    self.block(child, out);
                }
            }
            let html = self.previews_html(previews);
            out.push_str(&html);
        } else {
            for child in node.children() {
                self.block(child, out);
            }
        }
        out.push_str("</li>\n");
    }

    fn table<'a>(
        &mut self,
        node: &'a AstNode<'a>,
        alignments: &[TableAlignment],
        out: &mut String,
    ) {
        out.push_str("<table>\n");
        let mut in_body = false;
        for row in node.children() {
            let header = matches!(row.data.borrow().value, NodeValue::TableRow(true));
            if header {
                out.push_str("<thead>\n");
            } else if !in_body {
                out.push_str("<tbody>\n");
                in_body = true;
            }
            out.push_str("<tr>\n");
            for (i, cell) in row.children().enumerate() {
                let tag = if header { "th" } else { "td" };
                let align = match alignments.get(i) {
                    Some(TableAlignment::Left) => " style=\"text-align: left;\"",
                    Some(TableAlignment::Center) => " style=\"text-align: center;\"",
                    Some(TableAlignment::Right) => " style=\"text-align: right;\"",
                    _ => "",
                };
                let mut st = Inline::default();
                let inner = self.inlines(cell, &mut st);
                self.previews_to_root(st.previews);
                out.push_str(&format!("<{tag}{align}>{inner}</{tag}>\n"));
            }
            out.push_str("</tr>\n");
            if header {
                out.push_str("</thead>\n");
            }
        }
        if in_body {
            out.push_str("</tbody>\n");
        }
        out.push_str("</table>\n");
    }

    fn inlines<'a>(&mut self, node: &'a AstNode<'a>, st: &mut Inline) -> String {
        let mut out = String::new();
        let mut run = String::new();
        for child in node.children() {
            let value = child.data.borrow().value.clone();
            if let NodeValue::Text(t) = &value {
                run.push_str(t);
                continue;
            }
            if !run.is_empty() {
                self.text(&run, st, &mut out);
                run.clear();
            }
            match value {
                NodeValue::SoftBreak | NodeValue::LineBreak => out.push_str("<br>\n"),
                NodeValue::Code(code) => {
                    out.push_str("<code>");
                    out.push_str(&escape::text(&self.stash.restore_original(&code.literal)));
                    out.push_str("</code>");
                }
                NodeValue::Emph => {
                    // `***x***`: Zulip nests emphasis inside strong.
                    let only_strong = child.first_child().is_some_and(|c| {
                        c.next_sibling().is_none()
                            && matches!(c.data.borrow().value, NodeValue::Strong)
                    });
                    match child.first_child().filter(|_| only_strong) {
                        Some(strong) => {
                            out.push_str("<strong>");
                            self.wrap(strong, "em", st, &mut out);
                            out.push_str("</strong>");
                        }
                        None => self.wrap(child, "em", st, &mut out),
                    }
                }
                NodeValue::Strong => self.wrap(child, "strong", st, &mut out),
                NodeValue::Strikethrough => self.wrap(child, "del", st, &mut out),
                NodeValue::Link(link) => self.link(child, &link.url, st, &mut out),
                NodeValue::Image(link) => {
                    out.push('!');
                    self.link(child, &link.url, st, &mut out);
                }
                NodeValue::HtmlInline(html) => {
                    out.push_str(&escape::text(&self.stash.restore_original(&html)));
                }
                _ => {
                    let inner = self.inlines(child, st);
                    out.push_str(&inner);
                }
            }
        }
        if !run.is_empty() {
            self.text(&run, st, &mut out);
        }
        out
    }

    fn wrap<'a>(&mut self, node: &'a AstNode<'a>, tag: &str, st: &mut Inline, out: &mut String) {
        st.depth += 1;
        let inner = self.inlines(node, st);
        st.depth -= 1;
        out.push_str(&format!("<{tag}>{inner}</{tag}>"));
    }

    /// The text of a node's descendants, as written.
    fn plain_text<'a>(&self, node: &'a AstNode<'a>) -> String {
        let mut out = String::new();
        for d in node.descendants().skip(1) {
            match &d.data.borrow().value {
                NodeValue::Text(t) => out.push_str(&self.stash.restore_original(t)),
                NodeValue::Code(c) => out.push_str(&self.stash.restore_original(&c.literal)),
                NodeValue::SoftBreak | NodeValue::LineBreak => out.push(' '),
                _ => {}
            }
        }
        out
    }

    fn link<'a>(&mut self, node: &'a AstNode<'a>, url: &str, st: &mut Inline, out: &mut String) {
        let url = self.stash.restore_original(url);
        if !safe_url(&url) {
            out.push('[');
            let inner = self.inlines(node, st);
            out.push_str(&inner);
            out.push_str("](");
            out.push_str(&escape::text(&url));
            out.push(')');
            return;
        }
        let url = if scheme(&url).is_none() && !url.starts_with(['/', '#', '?']) && !url.is_empty()
        {
            format!("http://{url}")
        } else {
            url
        };
        let href = self.local(&url);
        let mut inner_state = Inline {
            in_link: true,
            depth: st.depth + 1,
            previews: Vec::new(),
        };
        let mut inner = self.inlines(node, &mut inner_state);
        let text = self.plain_text(node);
        if text.trim().is_empty() {
            inner = escape::text(&url);
        }
        let anchor = format!(
            "<a href=\"{}\"{}>{inner}</a>",
            escape::attr(&href),
            sanitize::link_attributes(&href)
        );
        self.note_link(&href);
        let title = (!text.trim().is_empty() && text != url).then_some(text);
        self.consider_preview(&href, title, &anchor, st);
        out.push_str(&anchor);
    }

    /// Rewrites links into the organization to relative ones, as Zulip does.
    fn local(&self, url: &str) -> String {
        if let Some(realm) = self.lookup.realm_url() {
            let prefix = format!("{}/", realm.trim_end_matches('/'));
            if let Some(rest) = url.strip_prefix(&prefix) {
                if rest.starts_with('#') || rest.starts_with("user_uploads/") {
                    return rest.to_owned();
                }
            }
        }
        url.to_owned()
    }

    fn note_link(&mut self, href: &str) {
        self.result.has_link = true;
        if self.in_blockquote == 0 && !self.unquoted_links.contains(href) {
            self.unquoted_links.insert(href.to_owned());
        }
        if href.starts_with("/user_uploads/") || href.starts_with("user_uploads/") {
            self.result.has_attachment = true;
        }
    }

    fn consider_preview(
        &mut self,
        url: &str,
        title: Option<String>,
        anchor: &str,
        st: &mut Inline,
    ) {
        if !self.previews_enabled
            || self.in_blockquote > 0
            || !self.previews_seen.insert(url.to_owned())
        {
            return;
        }
        let Some(kind) = previews::kind_of(url, self.lookup) else {
            return;
        };
        let preview = Preview {
            url: url.to_owned(),
            title,
            anchor: anchor.to_owned(),
            kind,
        };
        if st.depth == 0 {
            st.previews.push(preview);
        } else {
            self.previews_to_root(vec![preview]);
        }
    }

    fn previews_to_root(&mut self, previews: Vec<Preview>) {
        let html = self.previews_html(previews);
        self.root_tail.push_str(&html);
    }

    fn previews_html(&mut self, previews: Vec<Preview>) -> String {
        let mut out = String::new();
        for p in previews {
            if p.kind.is_image() {
                self.result.has_image = true;
            }
            out.push_str(&previews::html(
                &p.url,
                p.title.as_deref(),
                &p.kind,
                self.lookup,
            ));
        }
        out
    }

    /// Runs the text passes over a run of text and writes the result.
    fn text(&mut self, raw: &str, st: &mut Inline, out: &mut String) {
        let mut segments = self.stash.segments(raw);
        if !st.in_link {
            segments = self.pass(segments, |r, t, st| r.autolinks(t, st), st);
            let linkifiers = self.lookup.linkifiers();
            if !linkifiers.is_empty() {
                segments = self.pass(segments, |r, t, _| r.linkify(t), st);
            }
        }
        let lookup = self.lookup;
        segments = self.pass(segments, |_, t, _| emoji::names(t, lookup), st);
        if self.options.translate_emoticons {
            segments = self.pass(segments, |_, t, _| emoji::emoticons(t), st);
        }
        segments = self.pass(segments, |_, t, _| emoji::unicode(t), st);
        for segment in segments {
            match segment {
                Segment::Text(t) => escape::push_text(out, &t),
                Segment::Html(h) => out.push_str(&h),
                Segment::Token(i) => {
                    if let Some(entry) = self.stash.get(i) {
                        out.push_str(&entry.html);
                        match entry.effect {
                            Effect::None => {}
                            Effect::User(id) => {
                                self.result.mentioned_user_ids.insert(id);
                            }
                            Effect::Group(id) => {
                                self.result.mentioned_group_ids.insert(id);
                            }
                            Effect::StreamWildcard => self.result.stream_wildcard = true,
                            Effect::TopicWildcard => self.result.topic_wildcard = true,
                        }
                    }
                }
            }
        }
    }

    fn pass(
        &mut self,
        segments: Vec<Segment>,
        mut f: impl FnMut(&mut Self, &str, &mut Inline) -> Vec<Segment>,
        st: &mut Inline,
    ) -> Vec<Segment> {
        let mut out = Vec::with_capacity(segments.len());
        for segment in segments {
            match segment {
                Segment::Text(t) => out.extend(f(self, &t, st)),
                other => out.push(other),
            }
        }
        out
    }

    fn autolinks(&mut self, text: &str, st: &mut Inline) -> Vec<Segment> {
        let found = autolink::find(text);
        if found.is_empty() {
            return vec![Segment::Text(text.to_owned())];
        }
        let mut out = Vec::new();
        let mut last = 0;
        for link in found {
            if last < link.start {
                out.push(Segment::Text(text[last..link.start].to_owned()));
            }
            let shown = &text[link.start..link.end];
            let href = self.local(&link.href);
            let anchor = format!(
                "<a href=\"{}\"{}>{}</a>",
                escape::attr(&href),
                sanitize::link_attributes(&href),
                escape::text(shown)
            );
            self.note_link(&href);
            let title =
                (shown != link.href && !link.href.ends_with(shown)).then(|| shown.to_owned());
            self.consider_preview(&href, title, &anchor, st);
            out.push(Segment::Html(anchor));
            last = link.end;
        }
        if last < text.len() {
            out.push(Segment::Text(text[last..].to_owned()));
        }
        out
    }

    fn linkify(&mut self, text: &str) -> Vec<Segment> {
        let found = linkifiers::find(text, self.lookup.linkifiers());
        if found.is_empty() {
            return vec![Segment::Text(text.to_owned())];
        }
        let mut out = Vec::new();
        let mut last = 0;
        for m in found {
            if last < m.start {
                out.push(Segment::Text(text[last..m.start].to_owned()));
            }
            let href = self.local(&m.url);
            self.note_link(&href);
            out.push(Segment::Html(format!(
                "<a href=\"{}\"{}>{}</a>",
                escape::attr(&href),
                sanitize::link_attributes(&href),
                escape::text(&text[m.start..m.end])
            )));
            last = m.end;
        }
        if last < text.len() {
            out.push(Segment::Text(text[last..].to_owned()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoLookup;

    fn html(src: &str) -> String {
        render_document(src, &NoLookup, RenderOptions::default())
            .0
            .html
    }

    #[test]
    fn urls() {
        assert!(safe_url("https://x.org"));
        assert!(safe_url("/user_uploads/1/a.png"));
        assert!(!safe_url("javascript:alert(1)"));
        assert!(previews::has_image_extension("https://x.org/a.PNG?x=1"));
        assert!(!previews::has_image_extension("https://x.org/a.png.html"));
    }

    #[test]
    fn lists_nest_inline() {
        assert_eq!(
            html("1. A\n2. B\n  3. C"),
            "<ol>\n<li>A</li>\n<li>B<ol start=\"3\">\n<li>C</li>\n</ol>\n</li>\n</ol>"
        );
    }

    #[test]
    fn unsafe_links_stay_text() {
        assert_eq!(
            html("[foo](javascript:alert(1))"),
            "<p>[foo](javascript:alert(1))</p>"
        );
    }

    #[test]
    fn image_previews() {
        let (r, _) = render_document(
            "* see https://x.org/a.png",
            &NoLookup,
            RenderOptions::default(),
        );
        assert!(r.html.contains("</a><div class=\"message_inline_image\">"));
        assert!(r.has_image && r.has_link && !r.has_attachment);
        let (r, _) = render_document(
            "[f](/user_uploads/2/a/f.pdf)",
            &NoLookup,
            RenderOptions::default(),
        );
        assert!(r.has_attachment);
    }

    #[test]
    fn code_blocks_and_quotes() {
        assert_eq!(
            html("```quote\nhi\n```"),
            "<blockquote>\n<p>hi</p>\n</blockquote>"
        );
        assert_eq!(
            html("```rust\nfn a() {}\n```"),
            "<div class=\"codehilite\" data-code-language=\"Rust\"><pre><span></span><code>fn a() {}\n</code></pre></div>"
        );
    }

    #[test]
    fn spoilers() {
        assert_eq!(
            html("```spoiler Head\nbody\n```"),
            "<div class=\"spoiler-block\"><div class=\"spoiler-header\">\n<p>Head</p>\n</div><div class=\"spoiler-content\" aria-hidden=\"true\">\n<p>body</p>\n</div></div>"
        );
    }
}

//! The difference between two renderings of a message, as the reference's
//! `highlight_html_differences` shows it in `content_html_diff`: the new HTML, inside a `<div>`,
//! with inserted words in `<span class="highlight_text_inserted">` and the removed words of the
//! old HTML, where they stood, in `<span class="highlight_text_deleted">`.
//!
//! Both sides are cut into tags and words (a word keeps the space after it), and the sequences
//! are diffed word by word (`similar`'s Myers diff, with a deadline). The output keeps every tag
//! of the new HTML and none that only the old one had, so it is as well formed as the new HTML.

use similar::{capture_diff_slices_deadline, Algorithm, DiffTag};
use std::time::{Duration, Instant};

/// A piece of HTML: a tag (with its attributes) or a word of text (with the whitespace after it).
#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    text: &'a str,
    is_tag: bool,
}

impl Token<'_> {
    /// What the diff compares: the tag, or the word without its trailing whitespace.
    fn key(&self) -> &str {
        if self.is_tag {
            self.text
        } else {
            self.text.trim_end()
        }
    }
}

fn tokens(html: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = html;
    while !rest.is_empty() {
        if rest.starts_with('<') {
            let end = tag_end(rest);
            out.push(Token {
                text: &rest[..end],
                is_tag: true,
            });
            rest = &rest[end..];
            continue;
        }
        // Leading whitespace of a text run (after a tag) stands alone.
        let word_start = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        let text_end = rest.find('<').unwrap_or(rest.len());
        if word_start > 0 && word_start <= text_end {
            let end = word_start.min(text_end);
            out.push(Token {
                text: &rest[..end],
                is_tag: false,
            });
            rest = &rest[end..];
            continue;
        }
        let after_word = rest[..text_end]
            .find(char::is_whitespace)
            .unwrap_or(text_end);
        let after_space = rest[after_word..text_end]
            .find(|c: char| !c.is_whitespace())
            .map_or(text_end, |i| after_word + i);
        out.push(Token {
            text: &rest[..after_space],
            is_tag: false,
        });
        rest = &rest[after_space..];
    }
    out
}

/// The length of the tag at the start of `html`, through its `>` (quoted attribute values may
/// hold one); all of it when the tag never closes.
fn tag_end(html: &str) -> usize {
    let mut quote = None;
    for (i, c) in html.char_indices().skip(1) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return i + 1,
            _ => {}
        }
    }
    html.len()
}

/// Appends `tokens`, their words in runs wrapped in a span of `class` (tags pass through when
/// `keep_tags`, are left out otherwise).
fn push_marked(out: &mut String, tokens: &[Token<'_>], class: &str, keep_tags: bool) {
    let mut open = false;
    for token in tokens {
        if token.is_tag {
            if open {
                out.push_str("</span>");
                open = false;
            }
            if keep_tags {
                out.push_str(token.text);
            }
        } else if token.key().is_empty() {
            // Whitespace alone is not worth marking.
            if open {
                out.push_str("</span>");
                open = false;
            }
            out.push_str(token.text);
        } else {
            if !open {
                out.push_str("<span class=\"");
                out.push_str(class);
                out.push_str("\">");
                open = true;
            }
            out.push_str(token.text);
        }
    }
    if open {
        out.push_str("</span>");
    }
}

/// `content_html_diff` for a message whose rendering went from `old` to `new`.
pub fn highlight_html_differences(old: &str, new: &str) -> String {
    let old_tokens = tokens(old);
    let new_tokens = tokens(new);
    let old_keys: Vec<&str> = old_tokens.iter().map(Token::key).collect();
    let new_keys: Vec<&str> = new_tokens.iter().map(Token::key).collect();
    // A pathological pair gives a less minimal diff rather than a slow answer.
    let deadline = Instant::now() + Duration::from_millis(200);
    let ops = capture_diff_slices_deadline(Algorithm::Myers, &old_keys, &new_keys, Some(deadline));
    let mut out = String::with_capacity(new.len() + old.len() / 2 + 64);
    out.push_str("<div>");
    for op in ops {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {
                for token in &new_tokens[new_range] {
                    out.push_str(token.text);
                }
            }
            DiffTag::Insert => push_marked(
                &mut out,
                &new_tokens[new_range],
                "highlight_text_inserted",
                true,
            ),
            DiffTag::Delete => push_marked(
                &mut out,
                &old_tokens[old_range],
                "highlight_text_deleted",
                false,
            ),
            DiffTag::Replace => {
                // Inserted words, then the deleted ones, then the tags that open what follows.
                let inserted = &new_tokens[new_range];
                let split = inserted
                    .iter()
                    .rposition(|t| !t.is_tag)
                    .map_or(0, |i| i + 1);
                push_marked(
                    &mut out,
                    &inserted[..split],
                    "highlight_text_inserted",
                    true,
                );
                push_marked(
                    &mut out,
                    &old_tokens[old_range],
                    "highlight_text_deleted",
                    false,
                );
                push_marked(
                    &mut out,
                    &inserted[split..],
                    "highlight_text_inserted",
                    true,
                );
            }
        }
    }
    out.push_str("</div>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_word() {
        assert_eq!(
            highlight_html_differences("<p>Hello!</p>", "<p>Howdy!</p>"),
            "<div><p><span class=\"highlight_text_inserted\">Howdy!</span>\
             <span class=\"highlight_text_deleted\">Hello!</span></p></div>"
        );
    }

    #[test]
    fn words_added_and_removed_keep_the_new_structure() {
        assert_eq!(
            highlight_html_differences(
                "<p>the quick brown fox</p>",
                "<p>the slow brown fox jumps</p>"
            ),
            "<div><p>the <span class=\"highlight_text_inserted\">slow </span>\
             <span class=\"highlight_text_deleted\">quick </span>brown fox \
             <span class=\"highlight_text_inserted\">jumps</span></p></div>"
        );
        // A removed paragraph leaves its words, not its tags.
        let diff = highlight_html_differences("<p>one</p>\n<p>two</p>", "<p>one</p>");
        assert_eq!(
            diff,
            "<div><p>one</p>\n<span class=\"highlight_text_deleted\">two</span></div>"
        );
    }

    #[test]
    fn unchanged_html_is_kept() {
        let html = "<p>a <strong title=\"x > y\">b</strong> &amp; c</p>";
        assert_eq!(
            highlight_html_differences(html, html),
            format!("<div>{html}</div>")
        );
    }
}

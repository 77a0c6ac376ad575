//! Inline syntax that Zulip processes before emphasis and links is rendered here, before
//! comrak sees the text, and replaced by placeholders: code spans, inline math, `<time:…>`,
//! channel links, mentions and raw HTML tags (which Zulip shows escaped). `<` and `_` are
//! hidden from comrak so it finds no HTML, autolinks or underscore emphasis, which Zulip's
//! flavour does not have.

use crate::{
    channels, escape, mentions,
    stash::{Stash, BACKTICK, ESC_LT, ESC_UNDERSCORE, LT, TOKEN_END, TOKEN_START, UNDERSCORE},
    tex, timestamp, Lookup,
};

/// Replaces the early inline syntax in `text` by placeholders.
pub(crate) fn extract(text: &str, lookup: &dyn Lookup, stash: &mut Stash) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut pending_del: Option<usize> = None;
    // Whether the line starting at the given offset is a thematic break made of `_`.
    let mut rule_line: Option<(usize, bool)> = None;
    let mut line_start = 0;
    while i < text.len() {
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        let prev = text[..i].chars().next_back();
        if pending_del == Some(i) {
            out.push_str(&stash.push("~~", "</del>"));
            pending_del = None;
            i += 2;
            continue;
        }
        match c {
            '~' if pending_del.is_none() && prev != Some('~') => {
                if let Some(close) = strikethrough(text, i) {
                    out.push_str(&stash.push("~~", "<del>"));
                    pending_del = Some(close);
                    i += 2;
                    continue;
                }
            }
            TOKEN_START => {
                let end = text[i..].find(TOKEN_END).map_or(text.len(), |e| i + e + 3);
                out.push_str(&text[i..end]);
                i = end;
                continue;
            }
            '\\' => match bytes.get(i + 1) {
                Some(b'<') => {
                    out.push(ESC_LT);
                    i += 2;
                    continue;
                }
                Some(b'_') => {
                    out.push(ESC_UNDERSCORE);
                    i += 2;
                    continue;
                }
                Some(b'`') => {
                    out.push_str("\\`");
                    i += 2;
                    continue;
                }
                _ => {}
            },
            '`' => {
                let (end, replacement) = code_span(text, i, stash);
                out.push_str(&replacement);
                i = end;
                continue;
            }
            '$' => {
                if let Some((end, body)) = tex::match_inline(text, i) {
                    out.push_str(&tex::inline(&text[i..end], body, stash));
                    i = end;
                    continue;
                }
            }
            '<' => {
                if let Some(rest) = text[i..].strip_prefix("<time:") {
                    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
                    if let Some(close) = line.find('>') {
                        let end = i + 6 + close + 1;
                        let html = timestamp::render(&rest[..close]);
                        out.push_str(&stash.push(&text[i..end], html));
                        i = end;
                        continue;
                    }
                }
                if let Some(end) = html_tag(text, i) {
                    let html = escape::code(&text[i..end]);
                    out.push_str(&stash.push(&text[i..end], html));
                    i = end;
                    continue;
                }
                out.push(LT);
                i += 1;
                continue;
            }
            '@' if mentions::can_start_after(prev) => {
                if let Some((end, token)) = mentions::try_mention(text, i, lookup, stash) {
                    out.push_str(&token);
                    i = end;
                    continue;
                }
            }
            '#' if channels::can_start_after(prev) => {
                if let Some((end, token)) = channels::try_channel_link(text, i, lookup, stash) {
                    out.push_str(&token);
                    i = end;
                    continue;
                }
            }
            '_' => {
                let is_rule = match rule_line {
                    Some((start, rule)) if start == line_start => rule,
                    _ => {
                        let rule = is_underscore_rule(text, i);
                        rule_line = Some((line_start, rule));
                        rule
                    }
                };
                if !is_rule {
                    out.push(UNDERSCORE);
                    i += 1;
                    continue;
                }
            }
            _ => {}
        }
        if c == '\n' {
            line_start = i + 1;
        }
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Matches Zulip's strikethrough `(?<!~)~~[^~\n]+?~~(?!~)` at `i`, returning where the closing
/// `~~` starts.
fn strikethrough(text: &str, i: usize) -> Option<usize> {
    let rest = text[i..].strip_prefix("~~")?;
    let len = rest.find(['~', '\n'])?;
    let close = i + 2 + len;
    (len > 0 && text[close..].starts_with("~~") && !text[close + 2..].starts_with('~'))
        .then_some(close)
}

/// Whether the `_` at `i` is part of a line of underscores (a thematic break).
fn is_underscore_rule(text: &str, i: usize) -> bool {
    let start = text[..i].rfind('\n').map_or(0, |p| p + 1);
    let end = text[i..].find('\n').map_or(text.len(), |p| i + p);
    let line = &text[start..end];
    line.chars().all(|c| c == '_' || c == ' ') && line.chars().filter(|&c| c == '_').count() >= 3
}

/// Handles a run of backticks at `i`: a code span (single line, closed by a run of the same
/// length) becomes a placeholder with its content kept verbatim; an unmatched run stays
/// literal, except that a run of three or more at the start of a line is left for comrak's
/// fenced code blocks.
fn code_span(text: &str, i: usize, stash: &mut Stash) -> (usize, String) {
    let n = text[i..].bytes().take_while(|&b| b == b'`').count();
    let line_end = text[i..].find('\n').map_or(text.len(), |p| i + p);
    let mut j = i + n;
    while j < line_end {
        if text.as_bytes()[j] == b'`' {
            let run = text[j..line_end].bytes().take_while(|&b| b == b'`').count();
            if run == n && j > i + n {
                let end = j + n;
                let content = &text[i + n..j];
                let html = format!("<code>{}</code>", escape::text(content));
                return (end, stash.push(&text[i..end], html));
            }
            j += run;
        } else {
            j += 1;
        }
    }
    let line_start = text[..i].rfind('\n').map_or(0, |p| p + 1);
    let before = &text[line_start..i];
    let at_line_start = before.chars().all(|c| {
        c == ' ' || c == '>' || c == '*' || c == '-' || c == '+' || c == '.' || c.is_ascii_digit()
    });
    if n >= 3 && at_line_start {
        return (i + n, text[i..i + n].to_owned());
    }
    (i + n, BACKTICK.to_string().repeat(n))
}

/// Matches an HTML tag or comment at `i` the way Zulip's web client does
/// (`<\/?[a-zA-Z0-9-]+(?:"[^"]*"|'[^']*'|[^'">])*?>`), on one line; e-mail addresses and
/// `scheme:` autolinks are not tags.
fn html_tag(text: &str, i: usize) -> Option<usize> {
    let rest = &text[i + 1..];
    if let Some(comment) = rest.strip_prefix("!--") {
        let close = comment
            .find("-->")
            .filter(|c| !comment[..*c].contains('\n'))?;
        return Some(i + 4 + close + 3);
    }
    let body = rest.strip_prefix('/').unwrap_or(rest);
    let name_len = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(body.len());
    if name_len == 0 {
        return None;
    }
    let after = &body[name_len..];
    if after.starts_with([':', '@', '.']) {
        return None;
    }
    let offset = i + 1 + (rest.len() - body.len()) + name_len;
    let mut quote: Option<char> = None;
    for (k, c) in after.char_indices().take(2000) {
        match (quote, c) {
            (_, '\n' | '`') => return None,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return Some(offset + k + 1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoLookup;

    fn run(src: &str) -> (String, Stash) {
        let mut stash = Stash::default();
        let out = extract(src, &NoLookup, &mut stash);
        (out, stash)
    }

    #[test]
    fn code_spans_keep_spaces() {
        let (out, stash) = run("` outer ` x");
        assert!(out.starts_with(TOKEN_START));
        assert_eq!(stash.get(0).unwrap().html, "<code> outer </code>");
    }

    #[test]
    fn tags_are_escaped_placeholders() {
        let (_, stash) = run("<b title=\"x\">");
        assert_eq!(stash.get(0).unwrap().html, "&lt;b title=&quot;x&quot;&gt;");
        let (out, _) = run("a < b");
        assert!(out.contains(LT));
    }

    #[test]
    fn underscores_are_hidden() {
        let (out, _) = run("__foo__ \\_");
        assert_eq!(out.matches(UNDERSCORE).count(), 4);
        assert!(out.contains(ESC_UNDERSCORE));
        let (out, _) = run("___");
        assert_eq!(out, "___");
    }

    #[test]
    fn timestamps_and_math() {
        let (_, mut stash) = run("<time:1496701800> $$x$$ $$\\error$$");
        assert!(stash.get(0).unwrap().html.starts_with("<time"));
        assert!(stash.take_trusted()[0].starts_with("<span class=\"katex\">"));
        assert!(stash.get(2).unwrap().html.contains("tex-error"));
    }
}

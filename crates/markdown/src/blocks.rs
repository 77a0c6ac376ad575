//! Line-level fix-ups between Zulip's block syntax and CommonMark's, applied after the fenced
//! blocks are out of the way:
//! - lists nest under an item when indented by two or more spaces (CommonMark wants the
//!   item's content column), and a list may start right after a paragraph line;
//! - a line right after an empty `>` line still belongs to the quote;
//! - a paragraph that starts with a block-level HTML tag ends with a blank line inside its
//!   `<p>`, as in Zulip's web client;
//! - trailing spaces at the end of a paragraph or list item are kept.

use std::collections::HashMap;

use crate::stash::{Stash, TOKEN_START};

/// A list item line: its indentation and the column its content starts at, relative to the
/// marker.
fn list_item(line: &str) -> Option<(usize, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    let marker = if rest.starts_with(['*', '+', '-']) {
        1
    } else {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 || !rest[digits..].starts_with(['.', ')']) {
            return None;
        }
        digits + 1
    };
    let after = &rest[marker..];
    if after.is_empty() {
        return Some((indent, marker + 1));
    }
    let spaces = after.len() - after.trim_start_matches(' ').len();
    if spaces == 0 {
        return None;
    }
    if after.trim().is_empty() {
        return Some((indent, marker + 1));
    }
    Some((indent, marker + spaces.min(4)))
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

fn is_empty_quote(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with('>') && t.trim_start_matches('>').trim().is_empty()
}

struct Level {
    orig_indent: usize,
    new_indent: usize,
    content: usize,
}

/// The fixed-up lines, and the start numbers of nested ordered lists that had to be
/// renumbered to 1 (CommonMark lets only those interrupt a paragraph), by line index.
pub(crate) struct FixedUp {
    /// The lines.
    pub lines: Vec<String>,
    /// Line index of a list's first item → the number it really starts at.
    pub list_starts: HashMap<usize, usize>,
}

/// Applies all the fix-ups.
pub(crate) fn fix_up(lines: Vec<String>, stash: &mut Stash) -> FixedUp {
    let mut list_starts = HashMap::new();
    let lines = lists_and_quotes(lines, &mut list_starts);
    let lines = html_blocks(lines, stash);
    let lines = leading_spaces(lines, stash);
    let lines = no_reference_definitions(lines);
    FixedUp {
        lines: trailing_spaces(lines, stash),
        list_starts,
    }
}

/// Rewrites the number of an ordered item to 1, keeping the content column.
fn renumber(item: &str) -> Option<(String, usize)> {
    let digits = item.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let start: usize = item[..digits].parse().ok()?;
    if start == 1 {
        return None;
    }
    let delimiter = item.get(digits..=digits)?;
    let rest = &item[digits + 1..];
    Some((
        format!("1{delimiter}{}{rest}", " ".repeat(digits - 1)),
        start,
    ))
}

fn lists_and_quotes(lines: Vec<String>, list_starts: &mut HashMap<usize, usize>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut stack: Vec<Level> = Vec::new();
    let mut prev_blank = true;
    for line in lines {
        if is_blank(&line) {
            prev_blank = true;
            out.push(line);
            continue;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some((_, marker_width)) = list_item(&line) {
            while stack.last().is_some_and(|l| l.orig_indent > indent) {
                stack.pop();
            }
            let mut nested = false;
            let new_indent = match stack.last() {
                None => {
                    let prev_is_text = out.last().is_some_and(|p| {
                        !is_blank(p)
                            && list_item(p).is_none()
                            && !p.trim_start().starts_with(['>', '#', '|'])
                    });
                    if prev_is_text && !prev_blank {
                        out.push(String::new());
                    }
                    indent.min(3)
                }
                Some(l) if indent >= l.orig_indent + 2 => {
                    nested = true;
                    l.content
                }
                Some(l) => {
                    let new_indent = l.new_indent;
                    stack.pop();
                    new_indent
                }
            };
            stack.push(Level {
                orig_indent: indent,
                new_indent,
                content: new_indent + marker_width,
            });
            let mut item = line[indent..].to_owned();
            if nested && !prev_blank {
                if let Some((renumbered, start)) = renumber(&item) {
                    list_starts.insert(out.len(), start);
                    item = renumbered;
                }
            }
            out.push(format!("{}{item}", " ".repeat(new_indent)));
            prev_blank = false;
            continue;
        }
        if !stack.is_empty() {
            if prev_blank && indent == 0 {
                stack.clear();
            } else if indent > 0 {
                let shift = stack
                    .iter()
                    .rev()
                    .find(|l| l.orig_indent < indent)
                    .map_or(0, |l| l.new_indent.saturating_sub(l.orig_indent));
                if shift > 0 {
                    out.push(format!("{}{line}", " ".repeat(shift)));
                    prev_blank = false;
                    continue;
                }
            }
        }
        let lazy_quote =
            !line.trim_start().starts_with('>') && out.last().is_some_and(|p| is_empty_quote(p));
        if lazy_quote {
            out.push(format!("> {line}"));
        } else {
            out.push(line);
        }
        prev_blank = false;
    }
    out
}

/// Tags that do not start an HTML block in Zulip's web client.
const INLINE_TAGS: &[&str] = &[
    "a", "em", "strong", "small", "s", "cite", "q", "dfn", "abbr", "data", "time", "code", "var",
    "samp", "kbd", "sub", "sup", "i", "b", "u", "mark", "ruby", "rt", "rp", "bdi", "bdo", "span",
    "br", "wbr", "ins", "del", "img",
];

/// Whether a paragraph's text is an HTML block for Zulip's web client: it starts with a
/// block-level tag and either ends with that tag's closing tag or is one opening tag.
fn is_html_block(block: &str) -> bool {
    let t = block.trim_start_matches(' ');
    let Some(rest) = t.strip_prefix('<') else {
        return false;
    };
    let name_len = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    if name_len == 0 {
        return false;
    }
    let name = &rest[..name_len];
    let after = &rest[name_len..];
    if after.starts_with(":/") || after.starts_with('@') || INLINE_TAGS.contains(&name) {
        return false;
    }
    let trimmed = t.trim_end();
    if trimmed.ends_with(&format!("</{name}>")) && trimmed.len() > name.len() * 2 + 5 {
        return true;
    }
    // One opening tag: `<name` then quoted strings or other characters up to the first `>`.
    let mut quote: Option<char> = None;
    for (i, c) in after.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return after[i + 1..].trim().is_empty(),
            _ => {}
        }
    }
    false
}

fn html_blocks(mut lines: Vec<String>, stash: &mut Stash) -> Vec<String> {
    let mut i = 0;
    while i < lines.len() {
        let starts_block = i == 0 || is_blank(&lines[i - 1]);
        if !starts_block || !lines[i].trim_start().starts_with('<') {
            i += 1;
            continue;
        }
        let mut end = i;
        while end + 1 < lines.len() && !is_blank(&lines[end + 1]) {
            end += 1;
        }
        if is_html_block(&lines[i..=end].join("\n")) {
            let token = stash.push("", "\n\n");
            lines[end].push_str(&token);
        }
        i = end + 1;
    }
    lines
}

fn trailing_spaces(mut lines: Vec<String>, stash: &mut Stash) -> Vec<String> {
    for i in 0..lines.len() {
        let line = &lines[i];
        let trimmed = line.trim_end_matches(' ');
        if trimmed.len() == line.len() || trimmed.trim().is_empty() {
            continue;
        }
        let last = trimmed.chars().next_back().unwrap_or(' ');
        let kept = last.is_alphanumeric()
            || ".,;:!?)]}'\"".contains(last)
            || (!last.is_ascii() && last != TOKEN_START);
        let first = trimmed.trim_start().chars().next().unwrap_or(' ');
        if !kept || first == '#' || trimmed.contains('|') || list_marker_only(trimmed) {
            continue;
        }
        let ends_block = lines
            .get(i + 1)
            .is_none_or(|next| is_blank(next) || list_item(next).is_some());
        if ends_block {
            let spaces = line[trimmed.len()..].to_owned();
            let token = stash.push(spaces.clone(), spaces);
            lines[i] = format!("{trimmed}{token}");
        }
    }
    lines
}

/// Splits a line into its block quote markers (`> > `) and the rest.
fn quote_prefix(line: &str) -> (&str, &str) {
    let mut end = 0;
    loop {
        let rest = &line[end..];
        let spaces = rest.len() - rest.trim_start_matches(' ').len();
        if spaces > 3 || !rest[spaces..].starts_with('>') {
            break;
        }
        end += spaces + 1;
        if line[end..].starts_with(' ') {
            end += 1;
        }
    }
    line.split_at(end)
}

/// Keeps the indentation of continuation lines of a paragraph that starts at the margin, as
/// Zulip does (CommonMark drops it).
fn leading_spaces(mut lines: Vec<String>, stash: &mut Stash) -> Vec<String> {
    let mut block_ok = false;
    for i in 0..lines.len() {
        let (prefix, rest) = quote_prefix(&lines[i]);
        if rest.trim().is_empty() {
            block_ok = false;
            continue;
        }
        let starts_block = i == 0 || quote_prefix(&lines[i - 1]).1.trim().is_empty();
        let plain = !rest.starts_with(' ')
            && list_item(rest).is_none()
            && !rest.starts_with(['#', '|', TOKEN_START, '<']);
        if starts_block {
            block_ok = plain;
            continue;
        }
        if !block_ok || list_item(rest).is_some() {
            block_ok = false;
            continue;
        }
        let spaces = rest.len() - rest.trim_start_matches(' ').len();
        if spaces > 0 && spaces < 4 && !rest.trim_start().starts_with(['>', '#', '|']) {
            let token = stash.push(&rest[..spaces], &rest[..spaces]);
            lines[i] = format!("{prefix}{token}{}", &rest[spaces..]);
        }
    }
    lines
}

/// Zulip has no link reference definitions: a `[label]: url` line stays text.
fn no_reference_definitions(mut lines: Vec<String>) -> Vec<String> {
    for line in &mut lines {
        let (prefix, rest) = quote_prefix(line);
        let indent = rest.len() - rest.trim_start_matches(' ').len();
        let body = &rest[indent..];
        if indent < 4 && body.starts_with('[') && body.find("]:").is_some_and(|p| p > 1) {
            *line = format!("{prefix}{}\\{body}", &rest[..indent]);
        }
    }
    lines
}

fn list_marker_only(line: &str) -> bool {
    list_item(line).is_some_and(|(indent, width)| line.len() <= indent + width)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(src: &str) -> String {
        let mut stash = Stash::default();
        fix_up(src.split('\n').map(str::to_owned).collect(), &mut stash)
            .lines
            .join("\n")
    }

    #[test]
    fn two_space_nesting() {
        assert_eq!(fix("1. A\n2. B\n  3. C"), "1. A\n2. B\n   1. C");
        assert_eq!(
            fix("1. a\n  2. b\n    3. c\n  2. d\n2. e"),
            "1. a\n   1. b\n      1. c\n   2. d\n2. e"
        );
    }

    #[test]
    fn hanging_lists_and_lazy_quotes() {
        assert_eq!(fix("text:\n1. A"), "text:\n\n1. A");
        assert_eq!(fix(">\n>\ntext"), ">\n>\n> text");
    }

    #[test]
    fn html_block_detection() {
        assert!(is_html_block("<script>alert(1)</script>"));
        assert!(is_html_block("<script src=\"x\"<b>"));
        assert!(!is_html_block("<scr<script></script>ipt"));
        assert!(!is_html_block("<b>bold</b>"));
        assert!(!is_html_block("<http://x.org>"));
    }
}

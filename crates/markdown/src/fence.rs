//! Zulip's fenced block preprocessor: ```` ``` ```` / `~~~` code blocks, `quote` blocks,
//! `spoiler` blocks and `math` blocks, found line by line before the Markdown parse. Code and
//! math become placeholders; quotes become `> ` lines; spoilers become their HTML frame around
//! Markdown header and content.

use crate::{code, stash::Stash, tex};

/// What kind of fenced block is open.
#[derive(Debug)]
enum Kind {
    Code(Option<String>),
    Quote,
    Spoiler(String),
    Math,
}

#[derive(Debug)]
struct Frame {
    kind: Kind,
    fence: String,
    lines: Vec<String>,
}

/// A parsed opening fence line.
#[derive(Debug, PartialEq, Eq)]
struct Fence {
    fence: String,
    lang: Option<String>,
    header: Option<String>,
}

/// Parses a line as Zulip's `FENCE_RE` does.
fn parse_fence(line: &str) -> Option<Fence> {
    let first = line.chars().next()?;
    if first != '`' && first != '~' {
        return None;
    }
    let count = line.chars().take_while(|&c| c == first).count();
    if count < 3 {
        return None;
    }
    let fence = &line[..count];
    let rest = line[count..].trim_start_matches(' ');
    if rest.is_empty() {
        return Some(Fence {
            fence: fence.to_owned(),
            lang: None,
            header: None,
        });
    }
    if rest.contains(['`', '~']) {
        return None;
    }
    let mut body = rest.strip_prefix('{').unwrap_or(rest);
    body = body.strip_prefix('.').unwrap_or(body);
    let is_lang = |c: char| c.is_ascii_alphanumeric() || "_+,-./#".contains(c);
    let lang_len = body.find(|c: char| !is_lang(c)).unwrap_or(body.len());
    if lang_len == 0 {
        return None;
    }
    let lang = &body[..lang_len];
    let header = body[lang_len..].trim_start_matches(' ');
    Some(Fence {
        fence: fence.to_owned(),
        lang: Some(lang.to_owned()),
        header: (!header.is_empty()).then(|| header.to_owned()),
    })
}

/// Runs the preprocessor over the message's lines.
pub(crate) fn preprocess(source: &str, stash: &mut Stash) -> Vec<String> {
    let mut output: Vec<String> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    for line in source.split('\n') {
        match stack.last_mut() {
            None => {
                if let Some(frame) = open(line) {
                    stack.push(frame);
                } else {
                    output.push(line.to_owned());
                }
            }
            Some(frame) => {
                if line.trim_end() == frame.fence {
                    close(&mut stack, &mut output, stash);
                    continue;
                }
                match frame.kind {
                    Kind::Code(_) => frame.lines.push(line.trim_end().to_owned()),
                    Kind::Math => frame.lines.push(line.to_owned()),
                    Kind::Quote | Kind::Spoiler(_) => {
                        if let Some(inner) = open(line) {
                            stack.push(inner);
                        } else {
                            frame.lines.push(line.to_owned());
                        }
                    }
                }
            }
        }
    }
    while !stack.is_empty() {
        close(&mut stack, &mut output, stash);
    }
    output
}

fn open(line: &str) -> Option<Frame> {
    let fence = parse_fence(line)?;
    let lang = fence.lang.map(|l| l.to_lowercase());
    let kind = match lang.as_deref() {
        Some("quote" | "quoted") => Kind::Quote,
        Some("math") => Kind::Math,
        Some("spoiler") => Kind::Spoiler(fence.header.unwrap_or_default()),
        _ => Kind::Code(lang),
    };
    Some(Frame {
        kind,
        fence: fence.fence,
        lines: Vec::new(),
    })
}

/// Closes the innermost open block, writing its lines to the enclosing one.
fn close(stack: &mut Vec<Frame>, output: &mut Vec<String>, stash: &mut Stash) {
    let Some(frame) = stack.pop() else {
        return;
    };
    let mut produced: Vec<String> = Vec::new();
    match frame.kind {
        Kind::Code(lang) => {
            let text = frame.lines.join("\n");
            let html = code::code_block(lang.as_deref(), &text);
            produced.push(String::new());
            produced.push(stash.push(String::new(), html));
            produced.push(String::new());
        }
        Kind::Quote => {
            produced.push(String::new());
            produced.extend(frame.lines.iter().map(|l| format!("> {l}")));
            produced.push(String::new());
        }
        Kind::Spoiler(header) => {
            let open = stash.push(
                "",
                "<div class=\"spoiler-block\"><div class=\"spoiler-header\">",
            );
            let middle = stash.push(
                "",
                "</div><div class=\"spoiler-content\" aria-hidden=\"true\">",
            );
            let footer = stash.push("", "</div></div>");
            let text = frame.lines.join("\n");
            let joined = [open, header, middle, text, footer].join("\n\n");
            produced.push(String::new());
            produced.extend(joined.split('\n').map(str::to_owned));
            produced.push(String::new());
        }
        Kind::Math => {
            let text = frame.lines.join("\n");
            let mut parts = Vec::new();
            for paragraph in text.split("\n\n") {
                if paragraph.trim().is_empty() {
                    continue;
                }
                parts.push(tex::display(paragraph, stash));
            }
            produced.push(String::new());
            produced.extend(
                parts
                    .join("\n\n")
                    .split('\n')
                    .map(str::to_owned)
                    .collect::<Vec<_>>(),
            );
            produced.push(String::new());
        }
    }
    match stack.last_mut() {
        Some(parent) => parent.lines.extend(produced),
        None => output.extend(produced),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fences() {
        let f = parse_fence("~~~~.python ").unwrap();
        assert_eq!(f.fence, "~~~~");
        assert_eq!(f.lang.as_deref(), Some("python"));
        assert_eq!(f.header, None);
        let f = parse_fence("```spoiler Some header").unwrap();
        assert_eq!(f.header.as_deref(), Some("Some header"));
        assert!(parse_fence("```inline code```").is_none());
        assert!(parse_fence("``not").is_none());
        assert!(parse_fence(" ```").is_none());
    }

    #[test]
    fn quote_blocks_become_quote_lines() {
        let mut stash = Stash::default();
        let lines = preprocess("~~~ quote\nhi\n~~~\nafter", &mut stash);
        assert_eq!(lines, vec!["", "> hi", "", "after"]);
    }

    #[test]
    fn nested_fences_close_innermost_first() {
        let mut stash = Stash::default();
        let lines = preprocess("```quote\n~~~\ncode\n```\n~~~\n```", &mut stash);
        // The inner ~~~ block swallows the ``` line, which does not close it.
        assert_eq!(lines.iter().filter(|l| l.starts_with('>')).count(), 3);
    }

    #[test]
    fn spoilers_have_frame_placeholders() {
        let mut stash = Stash::default();
        let lines = preprocess("```spoiler Title\nbody\n```", &mut stash);
        assert!(lines.contains(&"Title".to_owned()));
        assert!(lines.contains(&"body".to_owned()));
        assert!(stash.get(2).is_some());
    }
}

//! Placeholders: pieces of the message that are rendered before comrak parses the rest are
//! stored here and stand in the text as private-use characters that comrak treats as plain
//! text. A few Markdown characters that Zulip treats differently from CommonMark (`<`, `_`,
//! unmatched backticks) are hidden from comrak the same way and restored afterwards.

/// Starts a placeholder token.
pub(crate) const TOKEN_START: char = '\u{E000}';
/// Ends a placeholder token.
pub(crate) const TOKEN_END: char = '\u{E001}';
/// The first of ten digit characters used inside tokens.
const DIGIT_ZERO: u32 = 0xE010;
/// A literal `<`.
pub(crate) const LT: char = '\u{E002}';
/// A backslash-escaped `<` (`\<`).
pub(crate) const ESC_LT: char = '\u{E003}';
/// A literal `_`.
pub(crate) const UNDERSCORE: char = '\u{E004}';
/// A backslash-escaped `_` (`\_`).
pub(crate) const ESC_UNDERSCORE: char = '\u{E005}';
/// A literal backtick that must not open a code span.
pub(crate) const BACKTICK: char = '\u{E006}';
/// Starts a marker for trusted HTML, put in only after sanitizing.
const TRUSTED_START: char = '\u{E007}';
/// Ends a marker for trusted HTML.
const TRUSTED_END: char = '\u{E008}';

/// What expanding a placeholder as HTML tells about the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Nothing.
    None,
    /// A user was mentioned (not silently).
    User(i64),
    /// A group was mentioned (not silently).
    Group(i64),
    /// `@**all**` and friends.
    StreamWildcard,
    /// `@**topic**`.
    TopicWildcard,
}

/// One stored piece.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The source text it replaced, used where the token ends up in code.
    pub original: String,
    /// The HTML it renders to elsewhere.
    pub html: String,
    /// What rendering it tells about the message.
    pub effect: Effect,
}

/// The stored pieces of one message.
#[derive(Debug, Default)]
pub(crate) struct Stash {
    entries: Vec<Entry>,
    trusted: Vec<String>,
}

/// Writes `index` in the private-use digits tokens are made of.
fn push_digits(out: &mut String, index: usize) {
    for d in index.to_string().bytes() {
        out.push(char::from_u32(DIGIT_ZERO + u32::from(d - b'0')).unwrap_or(TOKEN_END));
    }
}

/// Reads private-use digits back into a number.
fn read_digits(body: &str) -> Option<usize> {
    let mut index = 0usize;
    for c in body.chars() {
        let d = (c as u32).checked_sub(DIGIT_ZERO).filter(|d| *d < 10)?;
        index = index.checked_mul(10)?.checked_add(d as usize)?;
    }
    Some(index)
}

impl Stash {
    /// Stores a piece and returns the token that stands for it.
    pub fn push(&mut self, original: impl Into<String>, html: impl Into<String>) -> String {
        self.push_with(original, html, Effect::None)
    }

    /// Stores a piece with an effect and returns the token that stands for it.
    pub fn push_with(
        &mut self,
        original: impl Into<String>,
        html: impl Into<String>,
        effect: Effect,
    ) -> String {
        let index = self.entries.len();
        self.entries.push(Entry {
            original: original.into(),
            html: html.into(),
            effect,
        });
        let mut token = String::new();
        token.push(TOKEN_START);
        push_digits(&mut token, index);
        token.push(TOKEN_END);
        token
    }

    /// Stores a piece whose HTML is trusted (KaTeX's output, which the sanitizer's tag list
    /// does not describe): the token expands to a marker that survives sanitizing, and
    /// [`splice_trusted`] puts the HTML in its place afterwards.
    pub fn push_trusted(&mut self, original: impl Into<String>, html: String) -> String {
        let mut marker = String::new();
        marker.push(TRUSTED_START);
        push_digits(&mut marker, self.trusted.len());
        marker.push(TRUSTED_END);
        self.trusted.push(html);
        self.push(original, marker)
    }

    /// The trusted pieces, for [`splice_trusted`].
    pub fn take_trusted(&mut self) -> Vec<String> {
        std::mem::take(&mut self.trusted)
    }

    /// The entry with this index.
    pub fn get(&self, index: usize) -> Option<&Entry> {
        self.entries.get(index)
    }

    /// Restores `s` to the source text it came from (for code blocks, code spans and URLs).
    pub fn restore_original(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some((before, index, after)) = split_token(rest) {
            push_original_chars(&mut out, before);
            if let Some(entry) = self.get(index) {
                out.push_str(&self.restore_original(&entry.original));
            }
            rest = after;
        }
        push_original_chars(&mut out, rest);
        out
    }

    /// Splits text into plain text (with hidden characters restored) and the HTML of tokens.
    pub fn segments(&self, s: &str) -> Vec<Segment> {
        let mut out = Vec::new();
        let mut rest = s;
        while let Some((before, index, after)) = split_token(rest) {
            if !before.is_empty() {
                out.push(Segment::Text(restore_text(before)));
            }
            if self.get(index).is_some() {
                out.push(Segment::Token(index));
            }
            rest = after;
        }
        if !rest.is_empty() {
            out.push(Segment::Text(restore_text(rest)));
        }
        out
    }
}

/// A piece of inline content while the text passes run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// Plain text, not yet escaped.
    Text(String),
    /// Finished HTML.
    Html(String),
    /// A stash token, expanded (and its effect applied) when the HTML is written.
    Token(usize),
}

/// Finds the first token in `s`: the text before it, its index and the text after it.
fn split_token(s: &str) -> Option<(&str, usize, &str)> {
    let start = s.find(TOKEN_START)?;
    let body_start = start + TOKEN_START.len_utf8();
    let end_rel = s[body_start..].find(TOKEN_END)?;
    let body = &s[body_start..body_start + end_rel];
    let index = read_digits(body)?;
    Some((
        &s[..start],
        index,
        &s[body_start + end_rel + TOKEN_END.len_utf8()..],
    ))
}

fn push_original_chars(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            LT => out.push('<'),
            ESC_LT => out.push_str("\\<"),
            UNDERSCORE => out.push('_'),
            ESC_UNDERSCORE => out.push_str("\\_"),
            BACKTICK => out.push('`'),
            _ => out.push(c),
        }
    }
}

/// Restores hidden characters for plain text.
pub(crate) fn restore_text(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            LT | ESC_LT => '<',
            UNDERSCORE | ESC_UNDERSCORE => '_',
            BACKTICK => '`',
            _ => c,
        })
        .collect()
}

/// Replaces the markers of [`Stash::push_trusted`] in sanitized HTML with the trusted HTML
/// they stand for. Input cannot hold markers ([`scrub_input`]), so every marker is ours.
pub(crate) fn splice_trusted(html: &str, trusted: &[String]) -> String {
    if trusted.is_empty() {
        return html.to_owned();
    }
    let mut out =
        String::with_capacity(html.len() + trusted.iter().map(String::len).sum::<usize>());
    let mut rest = html;
    while let Some(start) = rest.find(TRUSTED_START) {
        out.push_str(&rest[..start]);
        let body_start = start + TRUSTED_START.len_utf8();
        let Some(len) = rest[body_start..].find(TRUSTED_END) else {
            break;
        };
        let body = &rest[body_start..body_start + len];
        if let Some(piece) = read_digits(body).and_then(|i| trusted.get(i)) {
            out.push_str(piece);
        }
        rest = &rest[body_start + len + TRUSTED_END.len_utf8()..];
    }
    out.push_str(rest);
    out
}

/// Replaces characters of the private-use range used here, so input cannot forge tokens.
pub(crate) fn scrub_input(s: &str) -> String {
    s.chars()
        .map(|c| {
            if ('\u{E000}'..='\u{E0FF}').contains(&c) {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        let mut stash = Stash::default();
        let mut text = String::from("a");
        for i in 0..12 {
            text.push_str(&stash.push(format!("<o{i}>"), format!("<h{i}>")));
        }
        text.push(LT);
        let original = stash.restore_original(&text);
        assert!(original.starts_with("a<o0><o1>"));
        assert!(original.ends_with("<o11><"));
        let segments = stash.segments(&text);
        assert_eq!(segments[0], Segment::Text("a".into()));
        assert_eq!(segments[12], Segment::Token(11));
        assert_eq!(segments[13], Segment::Text("<".into()));
    }

    #[test]
    fn trusted_pieces_are_spliced_in() {
        let mut stash = Stash::default();
        let a = stash.push_trusted("$$a$$", "<math>a</math>".to_owned());
        let b = stash.push_trusted("$$b$$", "<math>b</math>".to_owned());
        let html = format!(
            "<p>{} and {}</p>",
            stash.get(0).unwrap().html,
            stash.get(1).unwrap().html
        );
        assert!(!a.is_empty() && !b.is_empty());
        let trusted = stash.take_trusted();
        assert_eq!(
            splice_trusted(&html, &trusted),
            "<p><math>a</math> and <math>b</math></p>"
        );
        assert_eq!(stash.restore_original(&a), "$$a$$");
    }

    #[test]
    fn scrubs_private_use() {
        assert_eq!(scrub_input("a\u{E000}b"), "a\u{FFFD}b");
    }
}

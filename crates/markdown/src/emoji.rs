//! Emoji: `:name:` syntax, Unicode emoji characters and (optionally) emoticons such as `:)`,
//! rendered as Zulip's `<span class="emoji emoji-CODE">` or, for the organization's custom
//! emoji, `<img class="emoji">`.
//!
//! Zulip names emoji with its own table, built mostly from the Unicode (CLDR) names; here the
//! names come from the `emojis` crate's CLDR names and GitHub shortcodes, with Zulip's own
//! names for the emoji where they differ taking precedence. Skin-tone variants and emoji newer
//! than Unicode 15.0 are not in Zulip's table and are left as text.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::{escape, stash::Segment, Lookup};

/// Zulip's names that differ from the CLDR names; the first name for a code is canonical.
const ZULIP_NAMES: &[(&str, &str)] = &[
    ("smile", "1f642"),
    ("slight_smile", "1f642"),
    ("big_smile", "1f604"),
    ("smiley", "1f603"),
    ("grinning", "1f600"),
    ("grin", "1f601"),
    ("laughing", "1f606"),
    ("joy", "1f602"),
    ("sweat_smile", "1f605"),
    ("rolling_on_the_floor_laughing", "1f923"),
    ("rofl", "1f923"),
    ("wink", "1f609"),
    ("blush", "1f60a"),
    ("innocent", "1f607"),
    ("heart_eyes", "1f60d"),
    ("frown", "1f641"),
    ("slight_frown", "1f641"),
    ("sad", "2639"),
    ("neutral", "1f610"),
    ("confused", "1f615"),
    ("open_mouth", "1f62e"),
    ("stuck_out_tongue", "1f61b"),
    ("thinking", "1f914"),
    ("cry", "1f622"),
    ("sob", "1f62d"),
    ("poop", "1f4a9"),
    ("+1", "1f44d"),
    ("thumbs_up", "1f44d"),
    ("like", "1f44d"),
    ("-1", "1f44e"),
    ("thumbs_down", "1f44e"),
    ("clap", "1f44f"),
    ("tada", "1f389"),
    ("heart", "2764"),
    ("working_on_it", "1f6e0"),
    ("octopus", "1f419"),
    ("check", "2705"),
    ("holiday_tree", "1f384"),
    ("division", "2797"),
    ("gold", "1f947"),
    ("silver", "1f948"),
    ("bronze", "1f949"),
    ("kiwi", "1f95d"),
    ("hash", "0023-20e3"),
    ("asterisk", "002a-20e3"),
    ("zero", "0030-20e3"),
    ("one", "0031-20e3"),
    ("two", "0032-20e3"),
    ("three", "0033-20e3"),
    ("four", "0034-20e3"),
    ("five", "0035-20e3"),
    ("six", "0036-20e3"),
    ("seven", "0037-20e3"),
    ("eight", "0038-20e3"),
    ("nine", "0039-20e3"),
    ("ten", "1f51f"),
    ("cat", "1f408"),
    ("dog", "1f415"),
    ("rabbit", "1f407"),
    ("mouse", "1f401"),
    ("cow", "1f404"),
    ("tiger", "1f405"),
    ("pig", "1f416"),
    ("horse", "1f40e"),
    ("monkey", "1f412"),
    ("eye_in_speech_bubble", "1f441-200d-1f5e8"),
    ("fire", "1f525"),
    ("100", "1f4af"),
    ("eyes", "1f440"),
    ("rocket", "1f680"),
    ("star", "2b50"),
    ("wave", "1f44b"),
    ("ok", "1f44c"),
    ("pray", "1f64f"),
    ("muscle", "1f4aa"),
    ("shrug", "1f937"),
    ("coffee", "2615"),
    ("beer", "1f37a"),
    ("bulb", "1f4a1"),
    ("bug", "1f41b"),
    ("zulip", "zulip"),
];

/// Emoticons Zulip translates when the sender asks for it.
const EMOTICONS: &[(&str, &str)] = &[
    (":)", "smile"),
    ("(:", "smile"),
    (":(", "frown"),
    ("<3", "heart"),
    (":|", "neutral"),
    (":/", "confused"),
    (";)", "wink"),
    (":D", "grinning"),
    (":o", "open_mouth"),
    (":O", "open_mouth"),
    (":p", "stuck_out_tongue"),
    (":P", "stuck_out_tongue"),
];

struct Table {
    by_name: HashMap<String, String>,
    by_code: HashMap<String, String>,
}

/// The emoji code Zulip uses: lowercase hex code points without `FE0F`, joined by `-`.
pub(crate) fn code_of(s: &str) -> String {
    s.chars()
        .filter(|&c| c != '\u{FE0F}')
        .map(|c| format!("{:04x}", c as u32))
        .collect::<Vec<_>>()
        .join("-")
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '+')
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut by_name = HashMap::new();
        let mut by_code = HashMap::new();
        for (name, code) in ZULIP_NAMES {
            by_name.insert((*name).to_owned(), (*code).to_owned());
            by_code
                .entry((*code).to_owned())
                .or_insert_with(|| (*name).to_owned());
        }
        let max = emojis::UnicodeVersion::new(15, 0);
        let usable: Vec<&emojis::Emoji> = emojis::iter()
            .filter(|e| {
                e.unicode_version() <= max
                    && e.skin_tone().is_none_or(|t| t == emojis::SkinTone::Default)
            })
            .collect();
        for e in &usable {
            let name: String = e
                .name()
                .to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' | '-' => Some('_'),
                    '’' | '\'' | ':' | ',' | '.' | '!' | '“' | '”' | '(' | ')' => None,
                    c => Some(c),
                })
                .collect();
            let code = code_of(e.as_str());
            if valid_name(&name) {
                by_name.entry(name.clone()).or_insert_with(|| code.clone());
                by_code.entry(code.clone()).or_insert(name);
            }
        }
        for e in &usable {
            let code = code_of(e.as_str());
            for short in e.shortcodes() {
                if valid_name(short) {
                    by_name
                        .entry(short.to_owned())
                        .or_insert_with(|| code.clone());
                }
            }
        }
        Table { by_name, by_code }
    })
}

/// The HTML for a Unicode emoji with Zulip name `name` and code `code`.
fn unicode_html(name: &str, code: &str) -> String {
    if code == "zulip" {
        return "<img alt=\":zulip:\" class=\"emoji\" src=\"/static/generated/emoji/images/emoji/unicode/zulip.png\" title=\"zulip\">"
            .to_owned();
    }
    let title = escape::attr(&name.replace('_', " "));
    format!(
        "<span aria-label=\"{title}\" class=\"emoji emoji-{code}\" role=\"img\" title=\"{title}\">:{}:</span>",
        escape::text(name)
    )
}

/// The HTML for `:name:`, if `name` is a custom or Unicode emoji.
pub(crate) fn name_html(name: &str, lookup: &dyn Lookup) -> Option<String> {
    if let Some(custom) = lookup.realm_emoji(name) {
        return Some(format!(
            "<img alt=\":{}:\" class=\"emoji\" src=\"{}\" title=\"{}\">",
            escape::attr(&custom.name),
            escape::attr(&custom.url),
            escape::attr(&custom.name.replace('_', " "))
        ));
    }
    let code = table().by_name.get(name)?;
    Some(unicode_html(name, code))
}

/// Replaces `:name:` in a text segment.
pub(crate) fn names(text: &str, lookup: &dyn Lookup) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut last = 0;
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        if bytes[i] != b':' {
            i += 1;
            continue;
        }
        let body_start = i + 1;
        let body_len = text[body_start..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '+'))
            .unwrap_or(text.len() - body_start);
        let close = body_start + body_len;
        if body_len == 0 || bytes.get(close) != Some(&b':') {
            i += 1;
            continue;
        }
        match name_html(&text[body_start..close], lookup) {
            Some(html) => {
                if last < i {
                    out.push(Segment::Text(text[last..i].to_owned()));
                }
                out.push(Segment::Html(html));
                last = close + 1;
                i = close + 1;
            }
            None => i = close + 1,
        }
    }
    if last < text.len() {
        out.push(Segment::Text(text[last..].to_owned()));
    }
    out
}

/// Replaces emoticons in a text segment (only where whitespace or the start is before them
/// and whitespace, punctuation or the end after them).
pub(crate) fn emoticons(text: &str) -> Vec<Segment> {
    const TERMINAL: &str = ",.;?!()[] \"'\n\t";
    let mut out = Vec::new();
    let mut last = 0;
    let mut i = 0;
    while i < text.len() {
        let before_ok = text[..i]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace);
        let found = before_ok
            .then(|| {
                EMOTICONS.iter().find(|(e, _)| {
                    text[i..].starts_with(e)
                        && text[i + e.len()..]
                            .chars()
                            .next()
                            .is_none_or(|c| TERMINAL.contains(c))
                })
            })
            .flatten();
        if let Some((e, name)) = found {
            if last < i {
                out.push(Segment::Text(text[last..i].to_owned()));
            }
            let code = table().by_name.get(*name).cloned().unwrap_or_default();
            out.push(Segment::Html(unicode_html(name, &code)));
            i += e.len();
            last = i;
        } else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    if last < text.len() {
        out.push(Segment::Text(text[last..].to_owned()));
    }
    out
}

fn is_emoji_base(c: char) -> bool {
    matches!(c as u32,
        0x00A9 | 0x00AE | 0x203C | 0x2049 | 0x2122 | 0x2139 | 0x2194..=0x2199 | 0x21A9..=0x21AA
        | 0x231A..=0x231B | 0x2328 | 0x23CF | 0x23E9..=0x23F3 | 0x23F8..=0x23FA | 0x24C2
        | 0x25AA..=0x25AB | 0x25B6 | 0x25C0 | 0x25FB..=0x25FE | 0x2600..=0x27BF
        | 0x2934..=0x2935 | 0x2B05..=0x2B07 | 0x2B1B..=0x2B1C | 0x2B50 | 0x2B55 | 0x3030
        | 0x303D | 0x3297 | 0x3299 | 0x1F000..=0x1FAFF)
        && !is_modifier(c)
        && !is_regional(c)
}

fn is_modifier(c: char) -> bool {
    ('\u{1F3FB}'..='\u{1F3FF}').contains(&c)
}

fn is_regional(c: char) -> bool {
    ('\u{1F1E6}'..='\u{1F1FF}').contains(&c)
}

fn is_keycap_base(c: char) -> bool {
    c.is_ascii_digit() || c == '#' || c == '*'
}

/// Matches one emoji unit at the start of `s`, returning its length in bytes.
fn unit(s: &str) -> Option<usize> {
    let mut chars = s.char_indices().peekable();
    let (_, first) = chars.next()?;
    if is_regional(first) {
        let (i, second) = chars.next()?;
        return is_regional(second).then(|| i + second.len_utf8());
    }
    if is_keycap_base(first) {
        let rest = &s[1..];
        if let Some(r) = rest.strip_prefix('\u{FE0F}') {
            return Some(1 + '\u{FE0F}'.len_utf8() + if r.starts_with('\u{20E3}') { 3 } else { 0 });
        }
        return rest.starts_with('\u{20E3}').then_some(1 + 3);
    }
    if !is_emoji_base(first) {
        return None;
    }
    let mut len = first.len_utf8();
    let rest = &s[len..];
    if let Some(c) = rest.chars().next() {
        if is_modifier(c) {
            len += c.len_utf8();
        } else if c == '\u{FE0F}' {
            len += c.len_utf8();
            if s[len..].starts_with('\u{20E3}') {
                len += 3;
            }
        } else if ('\u{E0020}'..='\u{E007E}').contains(&c) {
            let tags = rest
                .char_indices()
                .find(|(_, c)| !('\u{E0020}'..='\u{E007E}').contains(c))
                .map_or(rest.len(), |(i, _)| i);
            if rest[tags..].starts_with('\u{E007F}') {
                len += tags + '\u{E007F}'.len_utf8();
            }
        }
    }
    Some(len)
}

/// Matches a ZWJ sequence of emoji units at the start of `s`.
fn sequence(s: &str) -> Option<usize> {
    let mut len = unit(s)?;
    while let Some(rest) = s[len..].strip_prefix('\u{200D}') {
        match unit(rest) {
            Some(l) => len += '\u{200D}'.len_utf8() + l,
            None => break,
        }
    }
    Some(len)
}

/// Replaces Unicode emoji in a text segment; sequences Zulip does not know stay as text.
pub(crate) fn unicode(text: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut last = 0;
    let mut i = 0;
    while i < text.len() {
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        if c.is_ascii() && !is_keycap_base(c) {
            i += 1;
            continue;
        }
        match sequence(&text[i..]) {
            Some(len) => {
                let code = code_of(&text[i..i + len]);
                if let Some(name) = table().by_code.get(&code) {
                    if last < i {
                        out.push(Segment::Text(text[last..i].to_owned()));
                    }
                    out.push(Segment::Html(unicode_html(name, &code)));
                    last = i + len;
                }
                i += len;
            }
            None => i += c.len_utf8(),
        }
    }
    if last < text.len() {
        out.push(Segment::Text(text[last..].to_owned()));
    }
    out
}

/// The code of the Unicode emoji called `name`, if there is one.
pub(crate) fn code_for_name(name: &str) -> Option<String> {
    table().by_name.get(name).cloned()
}

/// Every Unicode emoji code with its names, the canonical name first and the other names
/// sorted: the `code_to_names` table the reference serves at `server_emoji_data_url`.
pub(crate) fn code_to_names() -> std::collections::BTreeMap<String, Vec<String>> {
    let table = table();
    let mut out: std::collections::BTreeMap<String, Vec<String>> = table
        .by_code
        .iter()
        .map(|(code, name)| (code.clone(), vec![name.clone()]))
        .collect();
    let mut aliases: Vec<(&String, &String)> = table
        .by_name
        .iter()
        .filter(|(name, code)| table.by_code.get(*code) != Some(*name))
        .collect();
    aliases.sort();
    for (name, code) in aliases {
        if let Some(names) = out.get_mut(code) {
            names.push(name.clone());
        }
    }
    out
}

/// Whether `code` is the code of a Unicode emoji.
pub(crate) fn is_known_code(code: &str) -> bool {
    table().by_code.contains_key(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoLookup;

    fn html(segments: Vec<Segment>) -> String {
        segments
            .into_iter()
            .map(|s| match s {
                Segment::Text(t) => t,
                Segment::Html(h) => h,
                Segment::Token(_) => String::new(),
            })
            .collect()
    }

    #[test]
    fn names_use_zulip_table() {
        assert_eq!(
            html(names(":smile:", &NoLookup)),
            "<span aria-label=\"smile\" class=\"emoji emoji-1f642\" role=\"img\" title=\"smile\">:smile:</span>"
        );
        assert!(html(names(":avocado:x", &NoLookup)).contains("emoji-1f951"));
        assert_eq!(html(names(":not_an_emoji:", &NoLookup)), ":not_an_emoji:");
        assert_eq!(html(names(":skin-tone-2:", &NoLookup)), ":skin-tone-2:");
    }

    #[test]
    fn unicode_sequences() {
        assert!(html(unicode("x 💩")).contains("title=\"poop\""));
        assert!(html(unicode("#\u{FE0F}\u{20E3}")).contains("emoji-0023-20e3"));
        assert!(html(unicode("🤷\u{200d}♀\u{FE0F}")).contains("woman shrugging"));
        assert_eq!(html(unicode("🍋\u{200d}🟩")), "🍋\u{200d}🟩");
        assert_eq!(html(unicode("1 2")), "1 2");
    }

    #[test]
    fn emoticons_need_boundaries() {
        assert!(html(emoticons(":) a")).contains("emoji-1f642"));
        assert_eq!(html(emoticons("a:)")), "a:)");
        assert!(html(emoticons("x <3.")).contains("emoji-2764"));
    }
}

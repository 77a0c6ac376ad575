//! HTML and URL escaping in the exact spellings Zulip's output uses.

/// Escapes text content: `&`, `<` and `>` (quotes stay as they are).
pub(crate) fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    push_text(&mut out, s);
    out
}

/// Appends `s` to `out`, escaped as text content.
pub(crate) fn push_text(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
}

/// Escapes an attribute value (to be written between double quotes).
pub(crate) fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escapes code the way Pygments does: `&<>"'`, with `'` as `&#39;`.
pub(crate) fn code(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escapes like Python's `html.escape`: `&<>"'`, with `'` as `&#x27;`.
pub(crate) fn python(s: &str) -> String {
    code(s).replace("&#39;", "&#x27;")
}

/// Percent-encodes everything but `A-Z a-z 0-9 _ . - ~` and the bytes in `safe`, like
/// Python's `urllib.parse.quote(s, safe=...)`.
pub(crate) fn quote(s: &str, safe: &[u8]) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"_.-~".contains(&b) || safe.contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(text("<a href=\"x\">&'"), "&lt;a href=\"x\"&gt;&amp;'");
        assert_eq!(attr("a\"b<"), "a&quot;b&lt;");
        assert_eq!(code("'\""), "&#39;&quot;");
        assert_eq!(python("'"), "&#x27;");
        assert_eq!(quote("a b/c.d", b""), "a%20b%2Fc.d");
        assert_eq!(quote("é", b""), "%C3%A9");
    }
}

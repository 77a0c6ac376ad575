//! Math: inline `$$…$$` and ```` ```math ```` blocks, typeset by KaTeX ([`crate::math`]).
//! Math KaTeX cannot typeset renders as the reference renders it: a `tex-error` span holding
//! the source, which clients show as written.

use crate::escape;
use crate::stash::Stash;

/// The token for inline math `$$body$$` (`source` is the whole match): KaTeX's HTML when it
/// typesets the body, else the `tex-error` span.
pub(crate) fn inline(source: &str, body: &str, stash: &mut Stash) -> String {
    match crate::math::typeset(body, false) {
        Some(html) => stash.push_trusted(source, html),
        None => stash.push(source, inline_error(body)),
    }
}

/// The token for one paragraph of a math block: KaTeX's display-mode HTML, else the
/// `tex-error` span.
pub(crate) fn display(paragraph: &str, stash: &mut Stash) -> String {
    match crate::math::typeset(paragraph, true) {
        Some(html) => stash.push_trusted(paragraph, html),
        None => stash.push(
            paragraph,
            format!(
                "<span class=\"tex-error\">{}</span>",
                escape::python(paragraph)
            ),
        ),
    }
}

/// The HTML for inline math `$$body$$` that could not be typeset.
pub(crate) fn inline_error(body: &str) -> String {
    format!(
        "<span class=\"tex-error\">{}</span>",
        escape::text(&format!("$${body}$$"))
    )
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Matches Zulip's inline math pattern `\B(?<!\$)\$\$(?P<body>[^\n_$](\\\$|[^$\n])*)\$\$(?!\$)\B`
/// at byte `start` of `s` (which must start with `$$`), returning the end of the match and
/// the body.
pub(crate) fn match_inline(s: &str, start: usize) -> Option<(usize, &str)> {
    let bytes = s.as_bytes();
    if !s[start..].starts_with("$$") {
        return None;
    }
    if let Some(prev) = s[..start].chars().next_back() {
        if prev == '$' || is_word(prev) {
            return None;
        }
    }
    let body_start = start + 2;
    let first = s[body_start..].chars().next()?;
    if first == '\n' || first == '_' || first == '$' {
        return None;
    }
    // Positions reachable by the body's repetition, as byte offsets; the body cannot cross a
    // line, and cannot pass a `$` that is not escaped, so the scan stops there.
    let line_end = s[body_start..]
        .find('\n')
        .map_or(bytes.len(), |p| body_start + p);
    let mut reachable = vec![false; line_end - body_start + 2];
    let first_end = body_start + first.len_utf8();
    if first_end > line_end {
        return None;
    }
    reachable[first_end - body_start] = true;
    let mut furthest = first_end;
    let mut best = None;
    let mut k = first_end;
    while k <= line_end && k <= furthest {
        if reachable[k - body_start] {
            if s[k..].starts_with("$$") && bytes.get(k + 2) != Some(&b'$') {
                let after_ok = s[k + 2..].chars().next().is_none_or(|c| !is_word(c));
                if after_ok {
                    best = Some(k);
                }
            }
            if k < line_end {
                let c = s[k..].chars().next().unwrap_or('\n');
                if c != '$' {
                    let next = k + c.len_utf8();
                    reachable[next - body_start] = true;
                    furthest = furthest.max(next);
                }
                if c == '\\' && bytes.get(k + 1) == Some(&b'$') {
                    reachable[k + 2 - body_start] = true;
                    furthest = furthest.max(k + 2);
                }
            }
        }
        k += 1;
    }
    let end = best?;
    Some((end + 2, &s[body_start..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_like_zulip() {
        assert_eq!(match_inline("$$1 + 1$$", 0), Some((9, "1 + 1")));
        let money = "event ($$x \\approx 500\\$$$)";
        let start = money.find("$$").unwrap();
        assert_eq!(
            match_inline(money, start).map(|m| m.1),
            Some("x \\approx 500\\$")
        );
        assert_eq!(match_inline("$$_$$ x", 0), None);
        assert_eq!(match_inline("$$x=3\ny=4$$", 0), None);
        assert_eq!(match_inline("is$$", 2), None);
        assert_eq!(match_inline("$$$ or $$$$!", 0), None);
    }

    #[test]
    fn errors_keep_source() {
        assert_eq!(
            inline_error("<b>"),
            "<span class=\"tex-error\">$$&lt;b&gt;$$</span>"
        );
    }
}

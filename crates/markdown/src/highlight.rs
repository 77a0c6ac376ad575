//! Search highlighting: the words of a rendered message (or an escaped topic) that match a
//! `search` narrow's words, wrapped in `<span class="highlight">`, as the reference marks
//! `match_content` and `match_subject`. Words match by their English (Snowball) stem, as the
//! full-text search that found the message does, so "running" highlights "runs".

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::HashSet;

/// The stems of a search's words.
pub struct SearchTerms {
    stemmer: Stemmer,
    stems: HashSet<String>,
}

impl std::fmt::Debug for SearchTerms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchTerms")
            .field("stems", &self.stems)
            .finish()
    }
}

/// The words of `text`: runs of letters and digits.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

impl SearchTerms {
    /// The terms of a search text (its words; punctuation and quotes separate them).
    pub fn new(query: &str) -> SearchTerms {
        let stemmer = Stemmer::create(Algorithm::English);
        let stems = words(query)
            .map(|w| stemmer.stem(&w.to_lowercase()).into_owned())
            .collect();
        SearchTerms { stemmer, stems }
    }

    /// Whether the search has no words (nothing is highlighted).
    pub fn is_empty(&self) -> bool {
        self.stems.is_empty()
    }

    fn matches(&self, word: &str) -> bool {
        self.stems
            .contains(self.stemmer.stem(&word.to_lowercase()).as_ref())
    }

    /// Wraps each matching word of `html`'s text in `<span class="highlight">`; tags, their
    /// attributes and character references are left as they are.
    pub fn highlight_html(&self, html: &str) -> String {
        let mut out = String::with_capacity(html.len() + 32);
        let mut rest = html;
        while !rest.is_empty() {
            if rest.starts_with('<') {
                let end = tag_end(rest);
                out.push_str(&rest[..end]);
                rest = &rest[end..];
            } else if rest.starts_with('&') {
                let end = reference_end(rest);
                out.push_str(&rest[..end]);
                rest = &rest[end..];
            } else {
                let end = rest.find(['<', '&']).unwrap_or(rest.len());
                self.highlight_text(&rest[..end], &mut out);
                rest = &rest[end..];
            }
        }
        out
    }

    /// Appends plain text (no markup) to `out`, its matching words highlighted.
    fn highlight_text(&self, text: &str, out: &mut String) {
        let mut last = 0;
        let mut word_start = None;
        for (i, c) in text
            .char_indices()
            .chain(std::iter::once((text.len(), ' ')))
        {
            if c.is_alphanumeric() {
                if word_start.is_none() {
                    word_start = Some(i);
                }
            } else if let Some(start) = word_start.take() {
                let word = &text[start..i];
                if self.matches(word) {
                    out.push_str(&text[last..start]);
                    out.push_str("<span class=\"highlight\">");
                    out.push_str(word);
                    out.push_str("</span>");
                    last = i;
                }
            }
        }
        out.push_str(&text[last..]);
    }
}

/// The length of the tag at the start of `html` (through its `>`, outside quoted attribute
/// values); the rest of the text when it never closes.
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

/// The length of the character reference at the start of `html` (`&amp;`, `&#39;`); one
/// character when it is a lone `&`.
fn reference_end(html: &str) -> usize {
    let body = &html[1..];
    match body.find(';') {
        Some(end)
            if end > 0
                && end <= 32
                && body[..end].chars().all(|c| c.is_alphanumeric() || c == '#') =>
        {
            end + 2
        }
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_in_text_nodes_are_wrapped_by_stem() {
        let terms = SearchTerms::new("Running cats");
        assert_eq!(
            terms.highlight_html("<p>The cat <strong>runs</strong>; a <a href=\"/cat\" title=\"cats > dogs\">catalog</a></p>"),
            "<p>The <span class=\"highlight\">cat</span> <strong><span class=\"highlight\">runs</span></strong>; a <a href=\"/cat\" title=\"cats > dogs\">catalog</a></p>"
        );
    }

    #[test]
    fn references_and_case_are_kept() {
        let terms = SearchTerms::new("\"amp\" Tom");
        assert_eq!(
            terms.highlight_html("Tom&amp;TOM &#39;amp&#39; & tom"),
            "<span class=\"highlight\">Tom</span>&amp;<span class=\"highlight\">TOM</span> &#39;<span class=\"highlight\">amp</span>&#39; & <span class=\"highlight\">tom</span>"
        );
        assert!(SearchTerms::new(" \"\" ").is_empty());
        assert_eq!(SearchTerms::new("").highlight_html("<p>x</p>"), "<p>x</p>");
    }

    #[test]
    fn unicode_words() {
        let terms = SearchTerms::new("café");
        assert_eq!(
            terms.highlight_html("un café, s'il"),
            "un <span class=\"highlight\">café</span>, s'il"
        );
    }
}

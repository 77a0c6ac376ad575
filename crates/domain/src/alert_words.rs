//! Alert words: cleaning what a client sends, and finding them in a message the way the reference
//! server does (case-insensitively, as whole words: the text around an occurrence must be the
//! start or end of the message, whitespace, or one of a few punctuation marks).

use crate::error::RequestError;
use crate::ids::UserId;
use std::collections::BTreeSet;

/// The longest alert word, in characters.
pub const MAX_ALERT_WORD_LENGTH: usize = 100;

/// What may come right before an alert word (besides whitespace and the start of the message).
const ALLOWED_BEFORE: &[char] = &['(', '"', '.', ',', '\'', ';', '[', '*', '`', '>'];
/// What may come right after one (besides whitespace and the end of the message).
const ALLOWED_AFTER: &[char] = &[')', '"', '?', ':', '.', ',', '\'', ';', ']', '!', '*', '`'];

/// Checks the words to add: each at most 100 characters as sent (the error names its index, as
/// the reference's does); then trimmed, blank ones dropped, and repeats (ignoring case) merged,
/// keeping the first one's place and the last one's spelling, as the reference does.
pub fn clean_new_words(words: &[String]) -> Result<Vec<String>, RequestError> {
    for (i, word) in words.iter().enumerate() {
        if word.chars().count() > MAX_ALERT_WORD_LENGTH {
            return Err(RequestError::invalid_param(
                "alert_words",
                format!("alert_words[{i}] is too long (limit: {MAX_ALERT_WORD_LENGTH} characters)"),
            ));
        }
    }
    let mut out: Vec<String> = Vec::new();
    for word in words.iter().map(|w| w.trim()).filter(|w| !w.is_empty()) {
        let key = word.to_lowercase();
        match out.iter_mut().find(|w| w.to_lowercase() == key) {
            Some(existing) => *existing = word.to_owned(),
            None => out.push(word.to_owned()),
        }
    }
    Ok(out)
}

fn allowed_before(c: Option<char>) -> bool {
    c.is_none_or(|c| c.is_whitespace() || ALLOWED_BEFORE.contains(&c))
}

fn allowed_after(c: Option<char>) -> bool {
    c.is_none_or(|c| c.is_whitespace() || ALLOWED_AFTER.contains(&c))
}

/// Whether `word` occurs in `content` as a whole word, ignoring case. `content_lower` must be
/// `content.to_lowercase()` (computed once per message by callers checking many words).
pub fn occurs_in(content_lower: &str, word: &str) -> bool {
    let word = word.trim().to_lowercase();
    if word.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(found) = content_lower[from..].find(&word) {
        let start = from + found;
        let end = start + word.len();
        let before = content_lower[..start].chars().next_back();
        let after = content_lower[end..].chars().next();
        if allowed_before(before) && allowed_after(after) {
            return true;
        }
        // Continue after the first character of this occurrence.
        from = start
            + content_lower[start..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
    }
    false
}

/// The people (among `words`' owners, minus `exclude`) with a word occurring in `content`.
pub fn people_alerted(
    content: &str,
    words: &[(UserId, String)],
    exclude: UserId,
) -> BTreeSet<UserId> {
    let lower = content.to_lowercase();
    let mut out = BTreeSet::new();
    for (user, word) in words {
        if *user != exclude && !out.contains(user) && occurs_in(&lower, word) {
            out.insert(*user);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occurs(content: &str, word: &str) -> bool {
        occurs_in(&content.to_lowercase(), word)
    }

    #[test]
    fn matches_whole_words_ignoring_case() {
        assert!(occurs("Deploy tonight", "deploy"));
        assert!(occurs("we DEPLOY tonight", "Deploy"));
        assert!(occurs("ready to deploy", "deploy"));
        assert!(occurs("deploy", "deploy"));
        assert!(!occurs("redeploy now", "deploy"));
        assert!(!occurs("deployment now", "deploy"));
        assert!(!occurs("", "deploy"));
        assert!(!occurs("anything", "  "));
    }

    #[test]
    fn punctuation_around_a_word_counts_as_a_boundary() {
        for content in [
            "(deploy)",
            "\"deploy\"",
            "deploy.",
            "deploy, now",
            "'deploy'",
            "deploy;",
            "[deploy]",
            "*deploy*",
            "`deploy`",
            "> deploy",
            ">deploy",
            "deploy!",
            "deploy?",
            "deploy:",
            "line\ndeploy\nline",
            "tab\tdeploy",
        ] {
            assert!(occurs(content, "deploy"), "{content}");
        }
        for content in [
            "_deploy_",
            "deploy-it",
            "#deploy",
            "@deploy",
            "deploy/x",
            "x/deploy",
        ] {
            assert!(!occurs(content, "deploy"), "{content}");
        }
    }

    #[test]
    fn a_later_occurrence_can_match_after_an_embedded_one() {
        assert!(occurs("redeploy, then deploy", "deploy"));
        assert!(occurs("aaa aa", "aa"));
    }

    #[test]
    fn phrases_and_non_ascii_text() {
        assert!(occurs("Is the Release Train late?", "release train"));
        assert!(!occurs("prerelease train", "release train"));
        assert!(occurs("Ça marche, ÉTÉ!", "été"));
        assert!(occurs("日本 語", "語"));
        assert!(!occurs("日本語", "語"));
    }

    #[test]
    fn people_alerted_skips_the_excluded_sender() {
        let words = vec![
            (UserId(1), "deploy".to_owned()),
            (UserId(2), "Deploy".to_owned()),
            (UserId(2), "other".to_owned()),
            (UserId(3), "nothing".to_owned()),
        ];
        let found = people_alerted("time to DEPLOY", &words, UserId(1));
        assert_eq!(found.into_iter().collect::<Vec<_>>(), vec![UserId(2)]);
    }

    #[test]
    fn cleaning_trims_drops_blanks_and_merges_repeats() {
        let words: Vec<String> = ["  Foo ", "", "   ", "bar", "FOO"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(clean_new_words(&words).unwrap(), vec!["FOO", "bar"]);
    }

    #[test]
    fn words_are_at_most_100_characters() {
        let ok = vec!["é".repeat(100)];
        assert_eq!(clean_new_words(&ok).unwrap(), ok);
        let long = vec!["ok".to_owned(), "x".repeat(101)];
        let err = clean_new_words(&long).unwrap_err();
        assert_eq!(
            err.msg,
            "alert_words[1] is too long (limit: 100 characters)"
        );
        assert_eq!(err.code.as_str(), "BAD_REQUEST");
    }
}

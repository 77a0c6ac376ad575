//! Linkifiers: the rules a pattern and its URL template must follow before an organization
//! stores them, and the one way their regular expressions are compiled.
//!
//! Patterns use the reference server's (Python `re`/RE2) syntax, e.g. `#(?P<id>[0-9]+)`, and are
//! compiled with the `regex` crate, which matches in linear time and refuses look-around and
//! backreferences; the compiled program and the pattern's length are bounded too, so that no
//! pattern can make rendering slow or eat memory. The template's variables must be exactly the
//! pattern's named groups.

use crate::error::RequestError;
use crate::url_template::UrlTemplate;
use regex::{Regex, RegexBuilder};
use regex_syntax::ast::parse::ParserBuilder;
use regex_syntax::ast::Ast;
use std::collections::BTreeSet;

/// The longest pattern, in characters.
pub const MAX_PATTERN_LENGTH: usize = 1000;

/// The longest URL template, in characters.
pub const MAX_URL_TEMPLATE_LENGTH: usize = 2000;

/// The largest compiled program (and lazy-DFA cache) of one pattern, in bytes.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// How deeply groups and repetitions may nest in a pattern.
pub const REGEX_NEST_LIMIT: u32 = 64;

/// Compiles a pattern within the size limits. Rendering compiles stored patterns with this too,
/// so a pattern that was accepted always compiles the same way.
pub fn build_regex(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .nest_limit(REGEX_NEST_LIMIT)
        .build()
}

/// Whether a repetition applies directly to another (`a**`, `\d????`), which the `regex` crate
/// allows but Python, RE2 and the JavaScript that clients compile patterns with refuse.
fn nested_repetition(ast: &Ast) -> bool {
    match ast {
        Ast::Repetition(r) => matches!(*r.ast, Ast::Repetition(_)) || nested_repetition(&r.ast),
        Ast::Group(g) => nested_repetition(&g.ast),
        Ast::Alternation(a) => a.asts.iter().any(nested_repetition),
        Ast::Concat(c) => c.asts.iter().any(nested_repetition),
        _ => false,
    }
}

/// Compiles a pattern as [`build_regex`] does, also refusing what clients cannot compile; the
/// error is the short reason.
fn check_pattern(pattern: &str) -> Result<Regex, String> {
    let regex = build_regex(pattern).map_err(|err| regex_reason(&err))?;
    // The pattern compiled, so it parses, within the nest limit (which bounds the recursion).
    let ast = ParserBuilder::new()
        .nest_limit(REGEX_NEST_LIMIT)
        .build()
        .parse(pattern)
        .map_err(|err| err.kind().to_string())?;
    if nested_repetition(&ast) {
        return Err("bad repetition operator".to_owned());
    }
    Ok(regex)
}

/// The short reason of a compilation error: the `error: ...` line of a syntax error.
fn regex_reason(err: &regex::Error) -> String {
    match err {
        regex::Error::CompiledTooBig(_) => "pattern is too large".to_owned(),
        other => {
            let text = other.to_string();
            text.lines()
                .rev()
                .find_map(|line| line.strip_prefix("error: "))
                .unwrap_or("invalid pattern")
                .trim()
                .to_owned()
        }
    }
}

fn check_present(raw: &str, var_name: &str, max: usize) -> Result<String, RequestError> {
    let value = raw.trim();
    if value.is_empty() {
        return Err(RequestError::invalid_param(
            var_name,
            format!("{var_name} must not be empty"),
        ));
    }
    if value.chars().count() > max {
        return Err(RequestError::invalid_param(
            var_name,
            format!("{var_name} is too long (limit: {max} characters)"),
        ));
    }
    Ok(value.to_owned())
}

/// "Invalid URL template." for `url_template` when it is not a valid RFC 6570 template.
pub fn parse_url_template(template: &str) -> Result<UrlTemplate, RequestError> {
    UrlTemplate::parse(template)
        .map_err(|_| RequestError::invalid_param("url_template", "Invalid URL template."))
}

/// A pattern and URL template as stored: both trimmed and not empty, the pattern a valid
/// regular expression, the template a valid URL template whose variables are exactly the
/// pattern's named groups. Errors come in the reference server's order and words.
pub fn check_linkifier(
    pattern: &str,
    url_template: &str,
) -> Result<(String, String), RequestError> {
    let pattern = check_present(pattern, "pattern", MAX_PATTERN_LENGTH)?;
    let url_template = check_present(url_template, "url_template", MAX_URL_TEMPLATE_LENGTH)?;
    let template = parse_url_template(&url_template)?;
    let regex = check_pattern(&pattern).map_err(|reason| {
        RequestError::invalid_param("pattern", format!("Bad regular expression: {reason}"))
    })?;
    let groups: BTreeSet<&str> = regex.capture_names().flatten().collect();
    let variables = template.variable_names();
    if let Some(name) = variables.difference(&groups).next() {
        return Err(RequestError::invalid_param(
            "url_template",
            format!("Group '{name}' in URL template is not present in linkifier pattern."),
        ));
    }
    if let Some(name) = groups.difference(&variables).next() {
        return Err(RequestError::invalid_param(
            "url_template",
            format!("Group '{name}' in linkifier pattern is not present in URL template."),
        ));
    }
    Ok((pattern, url_template))
}

/// The error for a pattern another linkifier already uses (the reference server's words).
pub fn duplicate_pattern() -> RequestError {
    RequestError::invalid_param(
        "pattern",
        "Realm filter with this Realm and Pattern already exists.",
    )
}

/// `PATCH /realm/linkifiers`: `ordered` must list every existing linkifier exactly once.
pub fn check_reorder(ordered: &[i64], existing: &BTreeSet<i64>) -> Result<(), RequestError> {
    let given: BTreeSet<i64> = ordered.iter().copied().collect();
    if given.len() < ordered.len() {
        return Err(RequestError::invalid_param(
            "ordered_linkifier_ids",
            "The ordered list must not contain duplicated linkifiers",
        ));
    }
    if &given != existing {
        return Err(RequestError::invalid_param(
            "ordered_linkifier_ids",
            "The ordered list must enumerate all existing linkifiers exactly once",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(pattern: &str, template: &str) -> String {
        check_linkifier(pattern, template).unwrap_err().msg
    }

    #[test]
    fn accepts_and_trims_valid_linkifiers() {
        let (p, t) = check_linkifier(
            " #(?P<id>[0-9]+) ",
            " https://github.com/zulip/zulip/issues/{id}\n",
        )
        .unwrap();
        assert_eq!(p, "#(?P<id>[0-9]+)");
        assert_eq!(t, "https://github.com/zulip/zulip/issues/{id}");
        assert!(check_linkifier(
            r"(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)",
            "https://github.com/{org}/{repo}/issue/{id}"
        )
        .is_ok());
        assert!(check_linkifier("3#123", "https://example.com").is_ok());
        assert!(check_linkifier(
            r"FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8});(?P<chapter>[0-9]{2,3});(?P<fragment>[a-z]{2,8})",
            "https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}"
        )
        .is_ok());
        // Unnamed groups need no variable.
        assert!(check_linkifier("(a|b)-(?P<id>[0-9]+)", "https://e.com/{id}").is_ok());
        // A lazy repetition is one repetition; a repeated group is fine.
        assert!(check_linkifier(r"(?P<id>\d+?)(?:ab)+x??", "https://e.com/{id}").is_ok());
    }

    #[test]
    fn blank_and_long_values_name_their_parameter() {
        let err = check_linkifier("  ", "https://e.com/{id}").unwrap_err();
        assert_eq!(err.data["var_name"], "pattern");
        assert_eq!(err.msg, "pattern must not be empty");
        let err = check_linkifier("#(?P<id>[0-9]+)", "").unwrap_err();
        assert_eq!(err.data["var_name"], "url_template");
        let long = "a".repeat(MAX_PATTERN_LENGTH + 1);
        assert_eq!(
            msg(&long, "https://e.com/"),
            format!("pattern is too long (limit: {MAX_PATTERN_LENGTH} characters)")
        );
    }

    #[test]
    fn invalid_patterns_are_bad_regular_expressions() {
        assert_eq!(
            msg("(foo", "https://e.com/"),
            "Bad regular expression: unclosed group"
        );
        for bad in [
            r"ZUL-(?P<id>\d????)",
            r"(?=x)(?P<id>[0-9]+)",
            r"(?<!x)(?P<id>[0-9]+)",
            r"(?P<id>a)\1",
            r"(?P<id>a)(?P<id>b)",
            r"(?P<id>a**)",
            r"(?P<id>(?:a+)|b{2}{3})",
        ] {
            let err = check_linkifier(bad, "https://e.com/{id}").unwrap_err();
            assert!(
                err.msg.starts_with("Bad regular expression: "),
                "{bad}: {}",
                err.msg
            );
            assert_eq!(err.data["var_name"], "pattern");
        }
    }

    #[test]
    fn huge_compiled_patterns_are_refused() {
        // Short to write, but its compiled program is far beyond the limit.
        let err = check_linkifier(r"(?P<id>\w{1000}){50}", "https://e.com/{id}").unwrap_err();
        assert_eq!(err.msg, "Bad regular expression: pattern is too large");
        let nested = format!("{}(?P<id>a){}", "(".repeat(100), ")".repeat(100));
        assert!(check_linkifier(&nested, "https://e.com/{id}").is_err());
    }

    #[test]
    fn template_errors_come_before_pattern_errors() {
        assert_eq!(msg("(foo", "{id"), "Invalid URL template.");
        let err = check_linkifier(r"#(?P<id>[123])", "{id").unwrap_err();
        assert_eq!(err.data["var_name"], "url_template");
    }

    #[test]
    fn template_variables_must_be_exactly_the_named_groups() {
        assert_eq!(
            msg(r"ZUL-(?P<id>\d+)", "$fgfg"),
            "Group 'id' in linkifier pattern is not present in URL template."
        );
        assert_eq!(
            msg(
                r"ZUL-(?P<id>\d+)",
                "https://realm.com/my_realm_filter/{hello}"
            ),
            "Group 'hello' in URL template is not present in linkifier pattern."
        );
        assert_eq!(
            msg(
                r"ZUL-(?P<id>\d+)-(?P<hello>\d+)-(?P<world>\d+)",
                "https://realm.com/{hello}"
            ),
            "Group 'id' in linkifier pattern is not present in URL template."
        );
        assert_eq!(
            msg("#(?P<id>[0-9]+)", "https://e.com/{b}{a}"),
            "Group 'a' in URL template is not present in linkifier pattern."
        );
    }

    #[test]
    fn reorders_must_be_permutations() {
        let existing: BTreeSet<i64> = [1, 2, 3].into_iter().collect();
        assert!(check_reorder(&[3, 1, 2], &existing).is_ok());
        assert!(check_reorder(&[], &BTreeSet::new()).is_ok());
        assert_eq!(
            check_reorder(&[3, 1, 2, 3], &existing).unwrap_err().msg,
            "The ordered list must not contain duplicated linkifiers"
        );
        for bad in [&[1, 2][..], &[1, 2, 3, 4], &[1, 2, 4]] {
            let err = check_reorder(bad, &existing).unwrap_err();
            assert_eq!(
                err.msg,
                "The ordered list must enumerate all existing linkifiers exactly once"
            );
            assert_eq!(err.data["var_name"], "ordered_linkifier_ids");
        }
    }
}

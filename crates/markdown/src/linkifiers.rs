//! Linkifiers: organization-defined patterns (regular expressions with named groups) whose
//! matches become links built from an RFC 6570 URL template, in message text and, through
//! [`topic_links`], in topic names.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use parley_domain::linkifier::build_regex;
use parley_domain::url_template::UrlTemplate;
use regex::Regex;

use crate::{autolink, Linkifier, TopicLink};

/// Compiled patterns, shared between renders (invalid patterns are remembered as `None`).
/// Cloning a `Regex` would give it a fresh match cache, so the cache holds them in `Arc`s.
fn compiled(pattern: &str) -> Option<Arc<Regex>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Arc<Regex>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = match cache.lock() {
        Ok(map) => map,
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some(found) = map.get(pattern) {
        return found.clone();
    }
    if map.len() > 1024 {
        map.clear();
    }
    let regex = build_regex(pattern).ok().map(Arc::new);
    map.insert(pattern.to_owned(), regex.clone());
    regex
}

/// A linkifier match in some text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Match {
    /// Byte offset where the matched text starts.
    pub start: usize,
    /// Byte offset where it ends.
    pub end: usize,
    /// The expanded URL.
    pub url: String,
}

fn boundary_before(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_none_or(|c| c.is_whitespace() || "'\"(,:<".contains(c))
}

fn boundary_after(text: &str, at: usize) -> bool {
    text[at..]
        .chars()
        .next()
        .is_none_or(|c| !c.is_alphanumeric())
}

/// The first match of any linkifier at or after byte `from`; earlier linkifiers win ties.
fn first_match(text: &str, from: usize, linkifiers: &[Linkifier]) -> Option<Match> {
    let mut best: Option<Match> = None;
    for linkifier in linkifiers {
        let Some(regex) = compiled(&linkifier.pattern) else {
            continue;
        };
        let mut at = from;
        while at <= text.len() {
            let Some(m) = regex.find_at(text, at) else {
                break;
            };
            if best.as_ref().is_some_and(|b| m.start() >= b.start) {
                break;
            }
            if m.start() < m.end()
                && boundary_before(text, m.start())
                && boundary_after(text, m.end())
            {
                if let Some(caps) = regex.captures_at(text, m.start()) {
                    let url = expand(&linkifier.url_template, &|name| {
                        caps.name(name).map(|v| v.as_str().to_owned())
                    });
                    if let Some(url) = url.filter(|u| crate::link_schemes::safe_url(u)) {
                        best = Some(Match {
                            start: m.start(),
                            end: m.end(),
                            url,
                        });
                    }
                }
                break;
            }
            at = m.start() + text[m.start()..].chars().next().map_or(1, char::len_utf8);
        }
    }
    best
}

/// All non-overlapping linkifier matches in `text`, left to right.
pub(crate) fn find(text: &str, linkifiers: &[Linkifier]) -> Vec<Match> {
    let mut out = Vec::new();
    if linkifiers.is_empty() {
        return out;
    }
    let mut from = 0;
    while let Some(m) = first_match(text, from, linkifiers) {
        from = m.end;
        out.push(m);
    }
    out
}

/// Expands an RFC 6570 template (every operator and modifier; values percent-encoded as the
/// RFC says, variables without a value left out); `None` if the template is not valid.
pub(crate) fn expand(template: &str, value: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    UrlTemplate::parse(template).ok().map(|t| t.expand(value))
}

/// The links in a topic name: linkifier matches and bare URLs, left to right, without
/// overlaps (Zulip's `topic_links`).
pub fn topic_links(topic: &str, linkifiers: &[Linkifier]) -> Vec<TopicLink> {
    let mut found: Vec<(usize, usize, String)> = find(topic, linkifiers)
        .into_iter()
        .map(|m| (m.start, m.end, m.url))
        .collect();
    for link in autolink::find(topic) {
        let text = &topic[link.start..link.end];
        let url = if link.href.starts_with("http://") && !text.starts_with("http") {
            format!("https://{text}")
        } else {
            link.href.clone()
        };
        found.push((link.start, link.end, url));
    }
    found.sort_by_key(|(start, end, _)| (*start, std::cmp::Reverse(*end)));
    let mut out = Vec::new();
    let mut covered = 0;
    for (start, end, url) in found {
        if start < covered {
            continue;
        }
        covered = end;
        out.push(TopicLink {
            text: topic[start..end].to_owned(),
            url,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linkifiers() -> Vec<Linkifier> {
        vec![
            Linkifier {
                id: 1,
                pattern: "#(?P<id>[0-9]{2,8})".into(),
                url_template: "https://trac.example.com/ticket/{id}".into(),
            },
            Linkifier {
                id: 2,
                pattern: "(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>[0-9]+)".into(),
                url_template: "https://github.com/{org}/{repo}/issues/{id}".into(),
            },
        ]
    }

    #[test]
    fn expands_templates() {
        let v = |n: &str| Some(if n == "a" { "x y/z" } else { "q" }.to_owned());
        assert_eq!(
            expand("https://e.com/{a}", &v).unwrap(),
            "https://e.com/x%20y%2Fz"
        );
        assert_eq!(
            expand("https://e.com/{+a}", &v).unwrap(),
            "https://e.com/x%20y/z"
        );
        assert_eq!(expand("https://e.com/{missing", &v), None);
        assert_eq!(
            expand("https://e.com{/a}{?b,c}{#a}", &v).unwrap(),
            "https://e.com/x%20y%2Fz?b=q&c=q#x%20y/z"
        );
    }

    #[test]
    fn optional_groups_that_did_not_match_are_left_out() {
        let l = vec![Linkifier {
            id: 1,
            pattern: "T(?P<id>[0-9]+)(?:-(?P<sub>[a-z]+))?".into(),
            url_template: "https://e.com/t/{id}{?sub}".into(),
        }];
        let m = find("T12 and T13-ab", &l);
        assert_eq!(m[0].url, "https://e.com/t/12");
        assert_eq!(m[1].url, "https://e.com/t/13?sub=ab");
    }

    #[test]
    fn finds_with_boundaries() {
        let l = linkifiers();
        let m = find("see #123 and zulip/zulip#45, not x#678", &l);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].url, "https://trac.example.com/ticket/123");
        assert_eq!(m[1].url, "https://github.com/zulip/zulip/issues/45");
    }

    #[test]
    fn topic_links_include_urls() {
        let links = topic_links("#1234 see example.com/x", &linkifiers());
        assert_eq!(
            links,
            vec![
                TopicLink {
                    text: "#1234".into(),
                    url: "https://trac.example.com/ticket/1234".into()
                },
                TopicLink {
                    text: "example.com/x".into(),
                    url: "https://example.com/x".into()
                },
            ]
        );
    }
}

//! Bare URLs and e-mail addresses become links, following Zulip's link regex: a link starts
//! after whitespace or one of `'"(,:<`, is `http(s)://host…`, `domain.tld…` (a known TLD) or
//! an e-mail address, may hold up to seven levels of balanced parentheses, and ends before
//! trailing punctuation followed by whitespace or the end of the text.

/// Top-level domains recognised without a scheme. Zulip uses IANA's full list minus a few
/// file extensions (`java`, `md`, `mov`, `py`, `zip`); this is the country codes and the
/// generic domains in common use.
const TLDS: &[&str] = &[
    // Generic.
    "com",
    "org",
    "net",
    "edu",
    "gov",
    "mil",
    "int",
    "arpa",
    "info",
    "biz",
    "name",
    "pro",
    "aero",
    "coop",
    "museum",
    "mobi",
    "asia",
    "tel",
    "travel",
    "jobs",
    "cat",
    "post",
    "xxx",
    "app",
    "dev",
    "page",
    "blog",
    "shop",
    "store",
    "online",
    "site",
    "tech",
    "xyz",
    "club",
    "top",
    "cloud",
    "art",
    "design",
    "live",
    "news",
    "email",
    "link",
    "click",
    "space",
    "website",
    "wiki",
    "fun",
    "icu",
    "vip",
    "work",
    "today",
    "world",
    "life",
    "company",
    "agency",
    "solutions",
    "digital",
    "network",
    "systems",
    "media",
    "studio",
    "group",
    "team",
    "center",
    "academy",
    "games",
    "social",
    "chat",
    "zone",
    "run",
    "tools",
    "software",
    "host",
    "codes",
    "lol",
    "global",
    "education",
    "foundation",
    "institute",
    "science",
    "university",
    "school",
    "church",
    "health",
    "law",
    "bank",
    "finance",
    "money",
    "capital",
    "ventures",
    "partners",
    "consulting",
    "services",
    "support",
    "events",
    "photography",
    "photos",
    "pictures",
    "gallery",
    "video",
    "music",
    "film",
    "radio",
    "tv",
    "fm",
    "game",
    "city",
    "london",
    "berlin",
    "paris",
    "nyc",
    "tokyo",
    "amsterdam",
    "swiss",
    "google",
    "apple",
    "microsoft",
    "amazon",
    "android",
    "youtube",
    "gmail",
    "goog",
    "mozilla",
    "new",
    "ninja",
    "guru",
    "rocks",
    "expert",
    "community",
    "land",
    "farm",
    "garden",
    "house",
    "homes",
    "estate",
    "properties",
    "realty",
    "build",
    "engineering",
    "energy",
    "green",
    "earth",
    "eco",
    "one",
    "plus",
    "zero",
    "page",
    "web",
    "sucks",
    "wtf",
    "lgbt",
    "bio",
    "codes",
    "security",
    "systems",
    "ai",
    "io",
    // Country codes.
    "ac",
    "ad",
    "ae",
    "af",
    "ag",
    "al",
    "am",
    "ao",
    "aq",
    "ar",
    "as",
    "at",
    "au",
    "aw",
    "ax",
    "az",
    "ba",
    "bb",
    "bd",
    "be",
    "bf",
    "bg",
    "bh",
    "bi",
    "bj",
    "bm",
    "bn",
    "bo",
    "br",
    "bs",
    "bt",
    "bw",
    "by",
    "bz",
    "ca",
    "cc",
    "cd",
    "cf",
    "cg",
    "ch",
    "ci",
    "ck",
    "cl",
    "cm",
    "cn",
    "co",
    "cr",
    "cu",
    "cv",
    "cw",
    "cx",
    "cy",
    "cz",
    "de",
    "dj",
    "dk",
    "dm",
    "do",
    "dz",
    "ec",
    "ee",
    "eg",
    "er",
    "es",
    "et",
    "eu",
    "fi",
    "fj",
    "fk",
    "fo",
    "fr",
    "ga",
    "gb",
    "gd",
    "ge",
    "gf",
    "gg",
    "gh",
    "gi",
    "gl",
    "gm",
    "gn",
    "gp",
    "gq",
    "gr",
    "gs",
    "gt",
    "gu",
    "gw",
    "gy",
    "hk",
    "hm",
    "hn",
    "hr",
    "ht",
    "hu",
    "id",
    "ie",
    "il",
    "im",
    "in",
    "iq",
    "ir",
    "is",
    "it",
    "je",
    "jm",
    "jo",
    "jp",
    "ke",
    "kg",
    "kh",
    "ki",
    "km",
    "kn",
    "kp",
    "kr",
    "kw",
    "ky",
    "kz",
    "la",
    "lb",
    "lc",
    "li",
    "lk",
    "lr",
    "ls",
    "lt",
    "lu",
    "lv",
    "ly",
    "ma",
    "mc",
    "me",
    "mg",
    "mh",
    "mk",
    "ml",
    "mm",
    "mn",
    "mo",
    "mp",
    "mq",
    "mr",
    "ms",
    "mt",
    "mu",
    "mv",
    "mw",
    "mx",
    "my",
    "mz",
    "na",
    "nc",
    "ne",
    "nf",
    "ng",
    "ni",
    "nl",
    "no",
    "np",
    "nr",
    "nu",
    "nz",
    "om",
    "pa",
    "pe",
    "pf",
    "pg",
    "ph",
    "pk",
    "pl",
    "pm",
    "pn",
    "pr",
    "ps",
    "pt",
    "pw",
    "qa",
    "re",
    "ro",
    "rs",
    "ru",
    "rw",
    "sa",
    "sb",
    "sc",
    "sd",
    "se",
    "sg",
    "sh",
    "si",
    "sk",
    "sl",
    "sm",
    "sn",
    "so",
    "sr",
    "ss",
    "st",
    "su",
    "sv",
    "sx",
    "sy",
    "sz",
    "tc",
    "td",
    "tf",
    "tg",
    "th",
    "tj",
    "tk",
    "tl",
    "tm",
    "tn",
    "to",
    "tr",
    "tt",
    "tw",
    "tz",
    "ua",
    "ug",
    "uk",
    "us",
    "uy",
    "uz",
    "va",
    "vc",
    "ve",
    "vg",
    "vi",
    "vn",
    "vu",
    "wf",
    "ws",
    "ye",
    "yt",
    "za",
    "zm",
    "zw",
];

fn is_tld(s: &str) -> bool {
    TLDS.contains(&s)
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether a link may start after `prev`.
fn can_start_after(prev: Option<char>) -> bool {
    prev.is_none_or(|c| c.is_whitespace() || "'\"(,:<".contains(c))
}

const TRAILING: &str = "!:;?),.'\">";

/// A link found in text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// Byte offset where the link text starts.
    pub start: usize,
    /// Byte offset where it ends.
    pub end: usize,
    /// Where it points (with `http://` or `mailto:` added where needed).
    pub href: String,
}

/// Finds the links in `text`.
pub(crate) fn find(text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut prev: Option<char> = None;
    while i < text.len() {
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        if can_start_after(prev) && !c.is_whitespace() {
            if let Some((end, href)) = match_at(text, i) {
                out.push(Found {
                    start: i,
                    end,
                    href,
                });
                prev = text[..end].chars().next_back();
                i = end;
                continue;
            }
        }
        prev = Some(c);
        i += c.len_utf8();
    }
    out
}

fn match_at(text: &str, start: usize) -> Option<(usize, String)> {
    let tok_end = text[start..]
        .find(char::is_whitespace)
        .map_or(text.len(), |i| start + i);
    let token = &text[start..tok_end];
    // Cheap rejection: a link has a scheme, a dot in its host or an `@`.
    let host = token.split('/').next().unwrap_or(token);
    let lower = token.get(..8).unwrap_or(token).to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https://") && !host.contains('.') {
        return None;
    }
    let trimmed = token.trim_end_matches(|c| TRAILING.contains(c));
    let min_end = start + trimmed.len();
    // Candidate ends run from the shortest (Zulip's lazy quantifiers) to the whole token;
    // long runs of trailing punctuation are not worth trying one by one.
    let ends: Vec<usize> = (min_end..=tok_end.min(min_end + 64))
        .filter(|&e| text.is_char_boundary(e) && e > start)
        .collect();
    for &e in &ends {
        if let Some(href) = url(&text[start..e]) {
            return Some((e, href));
        }
    }
    for &e in ends.iter().rev() {
        if email(&text[start..e]) {
            return Some((e, format!("mailto:{}", &text[start..e])));
        }
    }
    None
}

fn url(s: &str) -> Option<String> {
    let lower_start = s.get(..8).map(str::to_ascii_lowercase).unwrap_or_default();
    let rest = if lower_start.starts_with("http://") {
        Some(&s[7..])
    } else if lower_start.starts_with("https://") {
        Some(&s[8..])
    } else {
        None
    };
    if let Some(rest) = rest {
        let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if host.is_empty() || !host.chars().all(|c| is_word(c) || ".:@-".contains(c)) {
            return None;
        }
        return valid_path(path).then(|| s.to_owned());
    }
    let (host, path) = s.split_at(s.find('/').unwrap_or(s.len()));
    let (labels, tld) = host.rsplit_once('.')?;
    if !is_tld(tld)
        || labels.is_empty()
        || labels
            .split('.')
            .any(|l| l.is_empty() || !l.chars().all(|c| is_word(c) || c == '-'))
    {
        return None;
    }
    valid_path(path).then(|| format!("http://{s}"))
}

/// An empty path, or `/` and characters without whitespace or `"`, with parentheses
/// balanced at most seven deep.
fn valid_path(path: &str) -> bool {
    if path.is_empty() {
        return true;
    }
    let mut depth = 0i32;
    for c in path.chars() {
        match c {
            '(' => {
                depth += 1;
                if depth > 7 {
                    return false;
                }
            }
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            '"' => return false,
            c if c.is_whitespace() => return false,
            _ => {}
        }
    }
    depth == 0
}

fn email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    let ok = |c: char| is_word(c) || c == '.' || c == '-';
    let Some((name, last)) = domain.rsplit_once('.') else {
        return false;
    };
    !local.is_empty()
        && local.chars().all(ok)
        && !name.is_empty()
        && name.chars().all(ok)
        && !last.is_empty()
        && last.chars().all(is_word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(text: &str) -> Vec<String> {
        find(text)
            .into_iter()
            .map(|f| text[f.start..f.end].to_owned())
            .collect()
    }

    #[test]
    fn finds_like_zulip() {
        assert_eq!(links("end of sentence https://t.co."), vec!["https://t.co"]);
        assert_eq!(links("with short example.com url"), vec!["example.com"]);
        assert_eq!(find("example.com")[0].href, "http://example.com");
        assert!(links("readme.md python views.py love...it").is_empty());
        assert_eq!(
            links("(http://en.wikipedia.org/wiki/Each-way_(bet)_(more_parens))"),
            vec!["http://en.wikipedia.org/wiki/Each-way_(bet)_(more_parens)"]
        );
        assert_eq!(links("javascript:foo.com"), vec!["foo.com"]);
        assert!(links("foobarscript://foo.com a@b.com/foo").is_empty());
        assert_eq!(find("<a@b.com>")[0].href, "mailto:a@b.com");
        assert_eq!(
            links("http://example.com/something?with,commas,in,url, but"),
            vec!["http://example.com/something?with,commas,in,url"]
        );
        assert!(
            links("https://zulip.com/(we_like_((t(d(o(_(1(2)1)__)o)o))o_nest_)_nest)_nest")
                .is_empty()
        );
    }
}

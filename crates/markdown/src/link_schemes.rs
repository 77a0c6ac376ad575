//! Which link targets a message may carry: relative ones, and those of a few schemes. The
//! renderer checks every link with it and so do linkifiers, whose URLs come from templates.

/// URL schemes links may use.
const SCHEMES: &[&str] = &["http", "https", "ftp", "mailto", "tel", "sms"];

/// The scheme of a URL, if it has one.
pub(crate) fn scheme(url: &str) -> Option<&str> {
    let colon = url.find(':')?;
    let candidate = &url[..colon];
    let mut chars = candidate.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)))
        .then_some(candidate)
}

/// Whether a link target is allowed: no scheme (a relative link) or one of [`SCHEMES`].
pub(crate) fn safe_url(url: &str) -> bool {
    if url.chars().any(|c| c.is_control()) {
        return false;
    }
    scheme(url).is_none_or(|s| SCHEMES.iter().any(|ok| s.eq_ignore_ascii_case(ok)))
}

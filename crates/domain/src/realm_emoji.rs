//! Custom emoji rules: which names are valid, and the URL of an emoji's image.

use crate::error::RequestError;

/// The name a client asked for, as the reference stores it: trimmed, spaces as underscores.
pub fn normalize_name(raw: &str) -> String {
    raw.trim().replace(' ', "_")
}

/// Checks a (normalized) emoji name: lowercase English letters, digits, `-` and `_`, ending
/// with a letter or digit.
pub fn check_name(name: &str) -> Result<(), RequestError> {
    if name.is_empty() {
        return Err(RequestError::bad_request("Emoji name is missing"));
    }
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_';
    if !name.chars().all(allowed) {
        return Err(RequestError::bad_request(
            "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.",
        ));
    }
    if name.ends_with(['-', '_']) {
        return Err(RequestError::bad_request(
            "Emoji names must end with either a letter or digit.",
        ));
    }
    Ok(())
}

/// The path (under the server's URL) where an emoji image is served.
pub fn image_url(realm_id: i64, file_name: &str) -> String {
    format!("/user_avatars/{realm_id}/emoji/images/{file_name}")
}

/// The file-store path of an emoji image.
pub fn store_path(realm_id: i64, file_name: &str) -> String {
    format!("{realm_id}/emoji/images/{file_name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name("green_tick").is_ok());
        assert!(check_name("party-parrot2").is_ok());
        assert!(check_name(&normalize_name(" big smile ")).is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("Upper").is_err());
        assert!(check_name("tick_").is_err());
        assert!(check_name("a.b").is_err());
        assert!(check_name("ünï").is_err());
    }
}

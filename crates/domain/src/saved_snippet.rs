//! Saved snippets: the rules for their titles and content.

use crate::error::RequestError;
use crate::realm::limits::MAX_MESSAGE_LENGTH;

/// The longest title, in characters.
pub const MAX_TITLE_LENGTH: usize = 60;

/// A title as stored: trimmed, not empty, at most [`MAX_TITLE_LENGTH`] characters.
pub fn check_title(raw: &str) -> Result<String, RequestError> {
    check(raw, "title", MAX_TITLE_LENGTH)
}

/// Content as stored: trimmed, not empty, at most a message's length.
pub fn check_content(raw: &str) -> Result<String, RequestError> {
    check(raw, "content", MAX_MESSAGE_LENGTH)
}

fn check(raw: &str, var_name: &str, max: usize) -> Result<String, RequestError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_and_content_are_trimmed_and_must_not_be_empty() {
        assert_eq!(check_title("  Hi ").unwrap(), "Hi");
        assert_eq!(check_content("\n body \n").unwrap(), "body");
        let err = check_title(" \t").unwrap_err();
        assert_eq!(err.data["var_name"], "title");
        assert_eq!(err.msg, "title must not be empty");
        assert_eq!(check_content("").unwrap_err().data["var_name"], "content");
    }

    #[test]
    fn lengths_are_limited() {
        assert!(check_title(&"t".repeat(60)).is_ok());
        assert!(check_title(&"t".repeat(61)).is_err());
        assert!(check_content(&"c".repeat(MAX_MESSAGE_LENGTH + 1)).is_err());
    }
}

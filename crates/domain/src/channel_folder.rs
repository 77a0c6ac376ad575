//! Rules of channel folders that need no storage.

use crate::RequestError;

/// The longest folder name, in characters (the reference's limit).
pub const MAX_NAME_LENGTH: usize = 60;

/// The longest folder description, in characters.
pub const MAX_DESCRIPTION_LENGTH: usize = 1024;

/// A folder name: trimmed, not empty, at most [`MAX_NAME_LENGTH`] characters.
pub fn check_name(raw: &str) -> Result<String, RequestError> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(RequestError::invalid_param(
            "name",
            "Channel folder name can't be empty.",
        ));
    }
    if name.chars().count() > MAX_NAME_LENGTH {
        return Err(RequestError::invalid_param(
            "name",
            format!("Channel folder name too long (limit: {MAX_NAME_LENGTH} characters)."),
        ));
    }
    Ok(name.to_owned())
}

/// A folder description: trimmed, at most [`MAX_DESCRIPTION_LENGTH`] characters.
pub fn check_description(raw: &str) -> Result<String, RequestError> {
    let description = raw.trim();
    if description.chars().count() > MAX_DESCRIPTION_LENGTH {
        return Err(RequestError::invalid_param(
            "description",
            format!(
                "Channel folder description too long (limit: {MAX_DESCRIPTION_LENGTH} characters)."
            ),
        ));
    }
    Ok(description.to_owned())
}

/// Whether `order` names every folder of `ids` exactly once.
pub fn is_complete_order(order: &[i64], ids: &[i64]) -> bool {
    let mut given = order.to_vec();
    let mut all = ids.to_vec();
    given.sort_unstable();
    all.sort_unstable();
    given == all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_descriptions_are_bounded() {
        assert_eq!(check_name("  Frontend ").unwrap(), "Frontend");
        assert_eq!(check_name(" ").unwrap_err().data["var_name"], "name");
        assert!(check_name(&"x".repeat(MAX_NAME_LENGTH)).is_ok());
        assert!(check_name(&"x".repeat(MAX_NAME_LENGTH + 1)).is_err());
        assert!(check_description(&"x".repeat(MAX_DESCRIPTION_LENGTH + 1)).is_err());
    }

    #[test]
    fn an_order_lists_every_folder_once() {
        assert!(is_complete_order(&[3, 1, 2], &[1, 2, 3]));
        assert!(!is_complete_order(&[3, 1], &[1, 2, 3]));
        assert!(!is_complete_order(&[3, 1, 1, 2], &[1, 2, 3]));
        assert!(!is_complete_order(&[3, 1, 4], &[1, 2, 3]));
    }
}

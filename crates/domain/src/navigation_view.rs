//! Navigation views: which fragments are built-in views, and the rules for fragments and names.

use crate::error::RequestError;

/// The fragments of the built-in views, which take no custom name.
pub const BUILT_IN_FRAGMENTS: [&str; 7] = [
    "inbox",
    "recent",
    "feed",
    "drafts",
    "narrow/has/reaction/sender/me",
    "narrow/is/mentioned",
    "narrow/is/starred",
];

/// Whether a fragment denotes a built-in view.
pub fn is_built_in(fragment: &str) -> bool {
    BUILT_IN_FRAGMENTS.contains(&fragment)
}

/// A fragment as stored: trimmed and not blank.
pub fn check_fragment(raw: &str) -> Result<String, RequestError> {
    let fragment = raw.trim();
    if fragment.is_empty() {
        return Err(RequestError::invalid_param(
            "fragment",
            "fragment cannot be blank",
        ));
    }
    Ok(fragment.to_owned())
}

/// A name as stored: trimmed and not blank.
pub fn check_name(raw: &str) -> Result<String, RequestError> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(RequestError::invalid_param("name", "name cannot be blank"));
    }
    Ok(name.to_owned())
}

/// Whether a view may have this name: built-in views have none, custom views need one
/// (`required` when the view is being created).
pub fn check_name_for(
    fragment: &str,
    name: Option<&str>,
    required: bool,
) -> Result<(), RequestError> {
    match (is_built_in(fragment), name) {
        (true, Some(_)) => Err(RequestError::invalid_param(
            "name",
            "Built-in views cannot have a custom name.",
        )),
        (false, None) if required => Err(RequestError::invalid_param(
            "name",
            "Custom views must have a valid name.",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_and_names_must_not_be_blank() {
        assert_eq!(check_fragment(" inbox ").unwrap(), "inbox");
        assert_eq!(
            check_fragment("  ").unwrap_err().data["var_name"],
            "fragment"
        );
        assert_eq!(check_name(" x ").unwrap(), "x");
        assert_eq!(check_name("").unwrap_err().data["var_name"], "name");
    }

    #[test]
    fn built_in_views_have_no_name_and_custom_views_need_one() {
        assert!(check_name_for("inbox", None, true).is_ok());
        assert!(check_name_for("inbox", Some("Mine"), true).is_err());
        assert!(check_name_for("narrow/channel/1", None, true).is_err());
        assert!(check_name_for("narrow/channel/1", None, false).is_ok());
        assert!(check_name_for("narrow/channel/1", Some("Dev"), true).is_ok());
    }
}

//! Code playgrounds: the rules for a playground's name, language and URL template.

use crate::error::RequestError;
use crate::linkifier::{parse_url_template, MAX_URL_TEMPLATE_LENGTH};

/// The longest Pygments language name, in characters (the reference server's limit).
pub const MAX_PYGMENTS_LANGUAGE_LENGTH: usize = 40;

/// The longest playground name, in characters.
pub const MAX_NAME_LENGTH: usize = 200;

/// A playground as stored: name, language and template, trimmed and valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedPlayground {
    /// The name users pick it by.
    pub name: String,
    /// The Pygments language name.
    pub pygments_language: String,
    /// The URL template, whose only variable is `code`.
    pub url_template: String,
}

fn too_long(var_name: &str, max: usize) -> RequestError {
    RequestError::invalid_param(
        var_name,
        format!("{var_name} is too long (limit: {max} characters)"),
    )
}

fn not_empty(value: &str, var_name: &str) -> Result<(), RequestError> {
    if value.is_empty() {
        Err(RequestError::invalid_param(
            var_name,
            format!("{var_name} must not be empty"),
        ))
    } else {
        Ok(())
    }
}

/// Checks a new playground: a non-empty name; a non-empty language of at most 40 characters
/// among letters, digits, spaces and `_ + , - . / #`; a valid URL template whose one and only
/// variable is `code`. Errors use the reference server's words.
pub fn check_playground(
    name: &str,
    pygments_language: &str,
    url_template: &str,
) -> Result<CheckedPlayground, RequestError> {
    if pygments_language.chars().count() > MAX_PYGMENTS_LANGUAGE_LENGTH {
        return Err(too_long("pygments_language", MAX_PYGMENTS_LANGUAGE_LENGTH));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || " _+,-./#".contains(c);
    if !pygments_language.chars().all(allowed) {
        return Err(RequestError::invalid_param(
            "pygments_language",
            "Invalid characters in pygments language",
        ));
    }
    let name = name.trim();
    let pygments_language = pygments_language.trim();
    let url_template = url_template.trim();
    not_empty(name, "name")?;
    if name.chars().count() > MAX_NAME_LENGTH {
        return Err(too_long("name", MAX_NAME_LENGTH));
    }
    not_empty(pygments_language, "pygments_language")?;
    not_empty(url_template, "url_template")?;
    if url_template.chars().count() > MAX_URL_TEMPLATE_LENGTH {
        return Err(too_long("url_template", MAX_URL_TEMPLATE_LENGTH));
    }
    let template = parse_url_template(url_template)?;
    let variables = template.variable_names();
    if !variables.contains("code") {
        return Err(RequestError::invalid_param(
            "url_template",
            "Missing the required variable \"code\" in the URL template",
        ));
    }
    if variables.len() != 1 {
        return Err(RequestError::invalid_param(
            "url_template",
            "\"code\" should be the only variable present in the URL template",
        ));
    }
    Ok(CheckedPlayground {
        name: name.to_owned(),
        pygments_language: pygments_language.to_owned(),
        url_template: url_template.to_owned(),
    })
}

/// The error for a language and name pair another playground already uses (the reference
/// server's words).
pub fn duplicate_playground() -> RequestError {
    RequestError::invalid_param(
        "name",
        "Realm playground with this Realm, Pygments language and Name already exists.",
    )
}

/// The error for deleting a playground that does not exist.
pub fn playground_not_found() -> RequestError {
    RequestError::invalid_param("playground_id", "Invalid playground")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(name: &str, language: &str, template: &str) -> RequestError {
        check_playground(name, language, template).unwrap_err()
    }

    #[test]
    fn accepts_and_trims() {
        let p = check_playground(
            " Python playground ",
            "Python ",
            " https://python.example.com?code={code}",
        )
        .unwrap();
        assert_eq!(p.name, "Python playground");
        assert_eq!(p.pygments_language, "Python");
        assert_eq!(p.url_template, "https://python.example.com?code={code}");
        assert!(check_playground("C#", "c#", "https://e.com/{?code}").is_ok());
        assert!(check_playground("x", "objective-c++", "https://e.com/{#code}").is_ok());
    }

    #[test]
    fn names_and_languages_are_checked() {
        let e = err(" ", "Python", "https://e.com/{code}");
        assert_eq!(
            (e.msg.as_str(), &e.data["var_name"]),
            ("name must not be empty", &"name".into())
        );
        let e = err("P", "", "https://e.com/{code}");
        assert_eq!(e.data["var_name"], "pygments_language");
        let e = err("P", "Py<thon>", "https://e.com/{code}");
        assert_eq!(e.msg, "Invalid characters in pygments language");
        let e = err("P", &"a".repeat(41), "https://e.com/{code}");
        assert_eq!(
            e.msg,
            "pygments_language is too long (limit: 40 characters)"
        );
        assert!(check_playground("P", &"a".repeat(40), "https://e.com/{code}").is_ok());
        let e = err(
            &"n".repeat(MAX_NAME_LENGTH + 1),
            "P",
            "https://e.com/{code}",
        );
        assert_eq!(e.data["var_name"], "name");
    }

    #[test]
    fn the_template_has_exactly_the_variable_code() {
        let e = err("P", "Python", "https://e.com/{code");
        assert_eq!(e.msg, "Invalid URL template.");
        assert_eq!(e.data["var_name"], "url_template");
        let e = err("P", "Python", "https://e.com/");
        assert_eq!(
            e.msg,
            "Missing the required variable \"code\" in the URL template"
        );
        let e = err("P", "Python", "https://e.com/{code}{?lang}");
        assert_eq!(
            e.msg,
            "\"code\" should be the only variable present in the URL template"
        );
        let e = err("P", "Python", "");
        assert_eq!(e.msg, "url_template must not be empty");
    }
}

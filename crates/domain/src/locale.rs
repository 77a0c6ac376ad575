//! Time zones and languages people may choose.

use crate::RequestError;

/// Checks an IANA time zone name (empty = unset).
pub fn check_timezone(raw: &str) -> Result<String, RequestError> {
    let name = raw.trim();
    if name.is_empty() || name.parse::<chrono_tz::Tz>().is_ok() {
        Ok(name.to_owned())
    } else {
        Err(RequestError::invalid_param(
            "timezone",
            format!("Invalid timezone '{name}'"),
        ))
    }
}

/// The languages the server has translations for, by code, with their English names (the
/// `language_name` of settings events).
pub const LANGUAGES: &[(&str, &str)] = &[
    ("ar", "Arabic"),
    ("be", "Belarusian"),
    ("bg", "Bulgarian"),
    ("bn", "Bengali"),
    ("ca", "Catalan"),
    ("cs", "Czech"),
    ("da", "Danish"),
    ("de", "German"),
    ("el", "Greek"),
    ("en", "English"),
    ("en_GB", "British English"),
    ("eo", "Esperanto"),
    ("es", "Spanish"),
    ("fa", "Persian"),
    ("fi", "Finnish"),
    ("fr", "French"),
    ("gl", "Galician"),
    ("hi", "Hindi"),
    ("hu", "Hungarian"),
    ("id", "Indonesian"),
    ("it", "Italian"),
    ("ja", "Japanese"),
    ("ko", "Korean"),
    ("lt", "Lithuanian"),
    ("ml", "Malayalam"),
    ("nl", "Dutch"),
    ("no", "Norwegian"),
    ("pl", "Polish"),
    ("pt", "Portuguese"),
    ("pt_BR", "Portuguese (Brazil)"),
    ("ro", "Romanian"),
    ("ru", "Russian"),
    ("si", "Sinhala"),
    ("sr", "Serbian"),
    ("sv", "Swedish"),
    ("ta", "Tamil"),
    ("tr", "Turkish"),
    ("uk", "Ukrainian"),
    ("vi", "Vietnamese"),
    ("zh-hans", "Simplified Chinese"),
    ("zh-hant", "Traditional Chinese"),
];

/// The English name of a language the server knows.
pub fn language_name(code: &str) -> Option<&'static str> {
    LANGUAGES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_zones_and_languages() {
        assert_eq!(
            check_timezone("Europe/Paris").ok().as_deref(),
            Some("Europe/Paris")
        );
        assert_eq!(check_timezone("").ok().as_deref(), Some(""));
        assert!(check_timezone("Mars/Olympus").is_err());
        assert_eq!(language_name("de"), Some("German"));
        assert_eq!(language_name("xx"), None);
    }
}

//! The rules of a status update (`POST /users/me/status`): which parameters must come together,
//! how long the text may be, and which emoji are valid, with the reference server's messages.

use crate::error::RequestError;

/// The longest status text, in characters (after trimming).
pub const MAX_STATUS_TEXT_LENGTH: usize = 60;

/// The namespace of Unicode emoji (also what a cleared emoji is stored with).
pub const UNICODE_EMOJI: &str = "unicode_emoji";
/// The namespace of the organization's uploaded emoji.
pub const REALM_EMOJI: &str = "realm_emoji";
/// The namespace of the server's own extra emoji.
pub const EXTRA_EMOJI: &str = "zulip_extra_emoji";
/// The spec's name for the same namespace, accepted as a synonym.
pub const SERVICE_EXTRA_EMOJI: &str = "service_extra_emoji";
/// The one extra emoji the server ships: its name is also its code.
pub const EXTRA_EMOJI_NAME: &str = "zulip";

/// What the caller's Unicode emoji set knows; implemented over the Markdown crate's table so that
/// these rules stay free of it.
pub trait EmojiSet {
    /// The code of a Unicode emoji name, if it is one.
    fn code_for_name(&self, name: &str) -> Option<String>;
    /// Whether `code` is a known Unicode emoji code.
    fn is_code(&self, code: &str) -> bool;
    /// The code (ID) of the active custom emoji of this name, if there is one.
    fn custom_code_for_name(&self, _name: &str) -> Option<String> {
        None
    }
    /// The name of the custom emoji with this code (ID) and whether it is deactivated.
    fn custom_emoji(&self, _code: &str) -> Option<(String, bool)> {
        None
    }
}

/// A status update as the client sent it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusRequest {
    /// New text; "" clears it.
    pub status_text: Option<String>,
    /// Deprecated `away`; read for compatibility, changes nothing here.
    pub away: Option<bool>,
    /// The emoji's name; "" clears the emoji.
    pub emoji_name: Option<String>,
    /// The emoji's code within `reaction_type`.
    pub emoji_code: Option<String>,
    /// The emoji's namespace.
    pub reaction_type: Option<String>,
}

/// A checked emoji: name, code and namespace (all cleared when the name is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusEmoji {
    /// Name; "" when clearing.
    pub name: String,
    /// Code within `reaction_type`.
    pub code: String,
    /// Namespace.
    pub reaction_type: String,
}

/// A checked update: `None` leaves that part unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusChange {
    /// New text ("" clears it).
    pub status_text: Option<String>,
    /// New emoji.
    pub emoji: Option<StatusEmoji>,
}

impl StatusChange {
    /// Whether the update changes nothing that is stored (only the deprecated `away` was sent).
    pub fn is_empty(&self) -> bool {
        self.status_text.is_none() && self.emoji.is_none()
    }
}

/// The code and namespace an emoji name stands for, when the client sent only the name.
fn lookup(emoji: &dyn EmojiSet, name: &str) -> Result<(String, String), RequestError> {
    if let Some(code) = emoji.custom_code_for_name(name) {
        return Ok((code, REALM_EMOJI.to_owned()));
    }
    if name == EXTRA_EMOJI_NAME {
        return Ok((EXTRA_EMOJI_NAME.to_owned(), EXTRA_EMOJI.to_owned()));
    }
    emoji
        .code_for_name(name)
        .map(|code| (code, UNICODE_EMOJI.to_owned()))
        .ok_or_else(|| RequestError::bad_request(format!("Emoji '{name}' does not exist")))
}

/// Checks that name, code and namespace agree; a `realm_emoji` must exist under that name and be
/// active.
pub fn check_emoji(
    emoji: &dyn EmojiSet,
    name: &str,
    code: &str,
    reaction_type: &str,
) -> Result<(), RequestError> {
    match reaction_type {
        UNICODE_EMOJI => {
            if !emoji.is_code(code) {
                return Err(RequestError::bad_request("Invalid emoji code."));
            }
            if emoji.code_for_name(name).as_deref() != Some(code) {
                return Err(RequestError::bad_request("Invalid emoji name."));
            }
            Ok(())
        }
        EXTRA_EMOJI | SERVICE_EXTRA_EMOJI => {
            if code != EXTRA_EMOJI_NAME {
                return Err(RequestError::bad_request("Invalid emoji code."));
            }
            if name != code {
                return Err(RequestError::bad_request("Invalid emoji name."));
            }
            Ok(())
        }
        REALM_EMOJI => match emoji.custom_emoji(code) {
            None => Err(RequestError::bad_request("Invalid custom emoji.")),
            Some((known, _)) if known != name => {
                Err(RequestError::bad_request("Invalid custom emoji name."))
            }
            Some((_, true)) => Err(RequestError::bad_request(
                "This custom emoji has been deactivated.",
            )),
            Some(_) => Ok(()),
        },
        _ => Err(RequestError::bad_request("Invalid emoji type.")),
    }
}

/// Checks a status update: the text is trimmed and at most 60 characters; something must be
/// sent; an emoji code or namespace needs a name; an empty name clears the emoji; a name alone
/// finds its code and namespace; the emoji must exist.
pub fn check_status_request(
    emoji: &dyn EmojiSet,
    request: StatusRequest,
) -> Result<StatusChange, RequestError> {
    let status_text = request.status_text.map(|t| t.trim().to_owned());
    if let Some(text) = &status_text {
        if text.chars().count() > MAX_STATUS_TEXT_LENGTH {
            return Err(RequestError::invalid_param(
                "status_text",
                format!("status_text is too long (limit: {MAX_STATUS_TEXT_LENGTH} characters)"),
            ));
        }
    }
    if request.away.is_none() && status_text.is_none() && request.emoji_name.is_none() {
        return Err(RequestError::bad_request(
            "Client did not pass any new values.",
        ));
    }
    let given = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.is_empty());
    let emoji = match request.emoji_name {
        Some(name) if name.is_empty() => Some(StatusEmoji {
            name,
            code: String::new(),
            reaction_type: UNICODE_EMOJI.to_owned(),
        }),
        Some(name) => {
            let (code, reaction_type) = match (request.emoji_code, request.reaction_type) {
                (Some(code), Some(kind)) => (code, kind),
                (code, kind) => {
                    let (found_code, found_kind) = lookup(emoji, &name)?;
                    (code.unwrap_or(found_code), kind.unwrap_or(found_kind))
                }
            };
            check_emoji(emoji, &name, &code, &reaction_type)?;
            Some(StatusEmoji {
                name,
                code,
                reaction_type,
            })
        }
        None if given(&request.emoji_code) || given(&request.reaction_type) => {
            return Err(RequestError::bad_request(
                "Client must pass emoji_name if they pass either emoji_code or reaction_type.",
            ));
        }
        None => None,
    };
    Ok(StatusChange { status_text, emoji })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Table;

    impl EmojiSet for Table {
        fn code_for_name(&self, name: &str) -> Option<String> {
            match name {
                "car" => Some("1f697".into()),
                "smile" => Some("1f604".into()),
                _ => None,
            }
        }
        fn is_code(&self, code: &str) -> bool {
            matches!(code, "1f697" | "1f604")
        }
    }

    fn check(request: StatusRequest) -> Result<StatusChange, String> {
        check_status_request(&Table, request).map_err(|e| e.msg)
    }

    fn emoji(name: &str, code: Option<&str>, kind: Option<&str>) -> StatusRequest {
        StatusRequest {
            emoji_name: Some(name.into()),
            emoji_code: code.map(Into::into),
            reaction_type: kind.map(Into::into),
            ..StatusRequest::default()
        }
    }

    fn set(name: &str, code: &str, kind: &str) -> Option<StatusEmoji> {
        Some(StatusEmoji {
            name: name.into(),
            code: code.into(),
            reaction_type: kind.into(),
        })
    }

    #[test]
    fn text_is_trimmed_limited_and_clearable() {
        let text = |t: &str| StatusRequest {
            status_text: Some(t.into()),
            ..StatusRequest::default()
        };
        assert_eq!(
            check(text("  lunch ")).unwrap().status_text.as_deref(),
            Some("lunch")
        );
        assert_eq!(check(text("")).unwrap().status_text.as_deref(), Some(""));
        assert!(check(text(&"é".repeat(60))).is_ok());
        assert!(check(text(&format!("  {}  ", "x".repeat(60)))).is_ok());
        assert_eq!(
            check(text(&"x".repeat(61))).unwrap_err(),
            "status_text is too long (limit: 60 characters)"
        );
    }

    #[test]
    fn something_must_be_sent() {
        let none = "Client did not pass any new values.";
        assert_eq!(check(StatusRequest::default()).unwrap_err(), none);
        let code_only = StatusRequest {
            emoji_code: Some("1f697".into()),
            ..StatusRequest::default()
        };
        assert_eq!(check(code_only).unwrap_err(), none);
        let away = StatusRequest {
            away: Some(true),
            ..StatusRequest::default()
        };
        assert!(check(away).unwrap().is_empty());
    }

    #[test]
    fn code_or_type_needs_a_name() {
        let msg = "Client must pass emoji_name if they pass either emoji_code or reaction_type.";
        for (code, kind) in [(Some("1f697"), None), (None, Some("unicode_emoji"))] {
            let request = StatusRequest {
                status_text: Some("x".into()),
                emoji_code: code.map(Into::into),
                reaction_type: kind.map(Into::into),
                ..StatusRequest::default()
            };
            assert_eq!(check(request).unwrap_err(), msg);
        }
    }

    #[test]
    fn names_resolve_and_empty_names_clear() {
        assert_eq!(
            check(emoji("car", None, None)).unwrap().emoji,
            set("car", "1f697", UNICODE_EMOJI)
        );
        assert_eq!(
            check(emoji("zulip", None, None)).unwrap().emoji,
            set("zulip", "zulip", EXTRA_EMOJI)
        );
        assert_eq!(
            check(emoji("", Some("1f697"), None)).unwrap().emoji,
            set("", "", UNICODE_EMOJI)
        );
        assert_eq!(
            check(emoji("car", Some("1f697"), Some("unicode_emoji")))
                .unwrap()
                .emoji,
            set("car", "1f697", UNICODE_EMOJI)
        );
    }

    #[test]
    fn unknown_and_inconsistent_emoji_fail() {
        assert_eq!(
            check(emoji("nope", None, None)).unwrap_err(),
            "Emoji 'nope' does not exist"
        );
        assert_eq!(
            check(emoji("car", Some("zzz"), None)).unwrap_err(),
            "Invalid emoji code."
        );
        assert_eq!(
            check(emoji("car", Some("1f604"), None)).unwrap_err(),
            "Invalid emoji name."
        );
        assert_eq!(
            check(emoji("party", Some("12"), Some("realm_emoji"))).unwrap_err(),
            "Invalid custom emoji."
        );
        assert_eq!(
            check(emoji("car", None, Some("realm_emoji"))).unwrap_err(),
            "Invalid custom emoji."
        );
        assert_eq!(
            check(emoji("zulip", Some("other"), Some(EXTRA_EMOJI))).unwrap_err(),
            "Invalid emoji code."
        );
        assert_eq!(
            check(emoji("car", Some("zulip"), Some(EXTRA_EMOJI))).unwrap_err(),
            "Invalid emoji name."
        );
        assert!(check(emoji("zulip", Some("zulip"), Some(SERVICE_EXTRA_EMOJI))).is_ok());
        assert_eq!(
            check(emoji("car", Some("1f697"), Some("sticker"))).unwrap_err(),
            "Invalid emoji type."
        );
        assert_eq!(
            check(emoji("zulip", None, Some(UNICODE_EMOJI))).unwrap_err(),
            "Invalid emoji code."
        );
    }
}

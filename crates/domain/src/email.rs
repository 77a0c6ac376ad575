//! Email addresses: validation, normalisation and the placeholder API addresses used when a
//! user's real address is hidden.

use crate::error::RequestError;
use crate::ids::UserId;

/// The longest address accepted (RFC 5321's limit on a path).
pub const MAX_EMAIL_LENGTH: usize = 254;

/// Validates an address and returns it normalised (trimmed, lower-cased), so that lookups and
/// uniqueness are case-insensitive. `var_name` is the parameter the address came from.
pub fn normalize_email(raw: &str, var_name: &str) -> Result<String, RequestError> {
    let email = raw.trim().to_lowercase();
    let invalid =
        || RequestError::invalid_param(var_name, format!("Invalid email '{}'", raw.trim()));
    if email.is_empty() || email.len() > MAX_EMAIL_LENGTH {
        return Err(invalid());
    }
    let Some((local, domain)) = email.rsplit_once('@') else {
        return Err(invalid());
    };
    let bad_char =
        |c: char| c.is_whitespace() || c.is_control() || matches!(c, '<' | '>' | ',' | ';' | '"');
    if local.is_empty()
        || domain.is_empty()
        || local.contains('@')
        || email.chars().any(bad_char)
        || domain.starts_with('.')
        || domain.ends_with('.')
        || domain.contains("..")
    {
        return Err(invalid());
    }
    Ok(email)
}

/// The placeholder API address of a user whose real address is hidden: valid only for the API.
pub fn placeholder_email(user_id: UserId, realm_host: &str) -> String {
    format!("user{}@{}", user_id.0, realm_host)
}

/// The user a placeholder address names, if `email` is one for this organization.
pub fn parse_placeholder_email(email: &str, realm_host: &str) -> Option<UserId> {
    let (local, domain) = email.rsplit_once('@')?;
    if !domain.eq_ignore_ascii_case(realm_host) {
        return None;
    }
    let digits = local.strip_prefix("user")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().map(UserId)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_and_validates() {
        assert_eq!(
            normalize_email(" Iago@Zulip.COM ", "email").unwrap(),
            "iago@zulip.com"
        );
        for bad in [
            "",
            "nope",
            "@x.com",
            "a@",
            "a b@x.com",
            "a@x..com",
            "a@.x",
            "<a>@x.com",
        ] {
            let err = normalize_email(bad, "email").unwrap_err();
            assert_eq!(err.data["var_name"], "email", "{bad}");
        }
    }

    #[test]
    fn placeholder_round_trips() {
        let email = placeholder_email(UserId(42), "chat.example.com");
        assert_eq!(email, "user42@chat.example.com");
        assert_eq!(
            parse_placeholder_email(&email, "chat.example.com"),
            Some(UserId(42))
        );
        assert_eq!(parse_placeholder_email(&email, "other.example.com"), None);
        assert_eq!(
            parse_placeholder_email("userx@chat.example.com", "chat.example.com"),
            None
        );
    }
}

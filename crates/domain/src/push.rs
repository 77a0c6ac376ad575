//! Push devices: end-to-end encrypted registrations (`POST /mobile_push/register`) and the
//! legacy tokens (`/users/me/apns_device_token`, `/users/me/android_gcm_reg_id`), with the checks
//! on what a client sends. Notifications go out through the configured push service.

use crate::ids::UserId;
use crate::RequestError;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

/// Which push network the device's token belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// Firebase Cloud Messaging (Android).
    Fcm,
    /// Apple Push Notification service (iOS).
    Apns,
}

impl TokenKind {
    /// The API name.
    pub fn name(self) -> &'static str {
        match self {
            TokenKind::Fcm => "fcm",
            TokenKind::Apns => "apns",
        }
    }

    /// Parses `token_kind`; anything but `fcm` or `apns` is `BAD_REQUEST` naming it.
    pub fn parse(raw: &str) -> Result<TokenKind, RequestError> {
        match raw {
            "fcm" => Ok(TokenKind::Fcm),
            "apns" => Ok(TokenKind::Apns),
            _ => Err(RequestError::invalid_param(
                "token_kind",
                "Invalid token_kind",
            )),
        }
    }
}

/// A device registration as stored: the keys and the encrypted payload stay base64 text, exactly
/// as the client sent them, for the push service to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushDevice {
    /// The account that registered the device.
    pub user_id: UserId,
    /// The client's random ID of this account on the device.
    pub push_account_id: i64,
    /// Push network.
    pub token_kind: TokenKind,
    /// The client's public key (standard base64).
    pub push_public_key: String,
    /// Which of the bouncer's public keys encrypted the registration.
    pub bouncer_public_key: String,
    /// The registration encrypted for the bouncer (standard base64).
    pub encrypted_push_registration: String,
}

/// Checks that `value` is standard base64 (RFC 4648, with padding) and not empty; the error
/// names `var_name`.
pub fn check_base64(var_name: &str, value: &str) -> Result<(), RequestError> {
    match STANDARD.decode(value) {
        Ok(bytes) if !bytes.is_empty() => Ok(()),
        _ => Err(RequestError::invalid_param(
            var_name,
            format!("Invalid {var_name}"),
        )),
    }
}

/// Validates a registration's fields (all required by the caller's parameter layer).
pub fn check_registration(device: &PushDevice) -> Result<(), RequestError> {
    check_base64("push_public_key", &device.push_public_key)?;
    if device.bouncer_public_key.trim().is_empty() {
        return Err(RequestError::invalid_param(
            "bouncer_public_key",
            "Invalid bouncer_public_key",
        ));
    }
    check_base64(
        "encrypted_push_registration",
        &device.encrypted_push_registration,
    )
}

/// The longest push token the legacy endpoints accept.
pub const MAX_TOKEN_LENGTH: usize = 4096;

/// Checks a token of the legacy endpoints as the reference does: not empty, at most 4096
/// bytes, and for APNs a hexadecimal device token.
pub fn check_legacy_token(token: &str, kind: TokenKind) -> Result<(), RequestError> {
    if token.is_empty() || token.len() > MAX_TOKEN_LENGTH {
        return Err(RequestError::invalid_param(
            "token",
            "Empty or invalid length token",
        ));
    }
    if kind == TokenKind::Apns
        && (!token.len().is_multiple_of(2) || !token.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return Err(RequestError::invalid_param("token", "Invalid APNS token"));
    }
    Ok(())
}

/// Checks an iOS app's bundle ID (`appid`): letters, digits, dots and dashes.
pub fn check_ios_app_id(appid: &str) -> Result<(), RequestError> {
    if appid.is_empty()
        || !appid
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
    {
        return Err(RequestError::invalid_param("appid", "Invalid app ID"));
    }
    Ok(())
}

/// The reference's numbers for the token kinds in requests to the push service (APNs 1, FCM 2).
pub fn legacy_kind_number(kind: TokenKind) -> i64 {
    match kind {
        TokenKind::Apns => 1,
        TokenKind::Fcm => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_tokens() {
        assert!(check_legacy_token("c0ffee", TokenKind::Apns).is_ok());
        assert_eq!(
            check_legacy_token("", TokenKind::Fcm).unwrap_err().msg,
            "Empty or invalid length token"
        );
        assert_eq!(
            check_legacy_token("xyz", TokenKind::Apns).unwrap_err().msg,
            "Invalid APNS token"
        );
        assert!(check_legacy_token("xyz", TokenKind::Fcm).is_ok());
        assert!(check_legacy_token(&"a".repeat(4097), TokenKind::Fcm).is_err());
        assert!(check_ios_app_id("org.zulip.Zulip").is_ok());
        assert!(check_ios_app_id("org zulip").is_err());
    }

    #[test]
    fn token_kinds() {
        assert_eq!(TokenKind::parse("fcm").unwrap(), TokenKind::Fcm);
        assert_eq!(TokenKind::parse("apns").unwrap().name(), "apns");
        let err = TokenKind::parse("gcm").unwrap_err();
        assert_eq!(err.data["var_name"], "token_kind");
    }

    #[test]
    fn base64_is_standard_with_padding() {
        assert!(check_base64("k", "aGVsbG8=").is_ok());
        assert!(check_base64("k", "aGVsbG8").is_err());
        assert!(check_base64("k", "aGVs-G8_").is_err());
        assert!(check_base64("k", "").is_err());
        assert_eq!(
            check_base64("push_public_key", "!!").unwrap_err().data["var_name"],
            "push_public_key"
        );
    }
}

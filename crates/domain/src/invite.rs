//! Invitations (email invitations and reusable links): who may invite to which role, when an
//! invitation expires, which addresses are refused, and the welcome message a new account
//! receives. Pure rules; storage and events live elsewhere.

use crate::error::{ErrorCode, RequestError};
use crate::role::Role;
use crate::user::User;

/// The server default lifetime of an invitation link, in minutes (ten days, as the reference's
/// `INVITATION_LINK_VALIDITY_MINUTES`).
pub const DEFAULT_VALIDITY_MINUTES: i64 = 14400;

/// The longest `welcome_message_custom_text`, in characters.
pub const MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH: usize = 8000;

/// The Welcome Bot's address, as the reference names it.
pub const WELCOME_BOT_EMAIL: &str = "welcome-bot@zulip.com";

/// The Welcome Bot's display name.
pub const WELCOME_BOT_NAME: &str = "Welcome Bot";

/// Whether a stored link still works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// It may be used.
    Valid,
    /// Its lifetime is over.
    Expired,
    /// Someone revoked it.
    Revoked,
}

impl LinkState {
    /// The state of a link that is `revoked` or expires at `expiry` (Unix seconds; None never),
    /// seen at `now`. A revoked link reads as revoked even once it has also expired.
    pub fn of(revoked: bool, expiry: Option<i64>, now: i64) -> LinkState {
        if revoked {
            LinkState::Revoked
        } else if expiry.is_some_and(|at| at <= now) {
            LinkState::Expired
        } else {
            LinkState::Valid
        }
    }

    /// What a person following the link is told when it does not work.
    pub fn message(self) -> Option<&'static str> {
        match self {
            LinkState::Valid => None,
            LinkState::Expired => Some("This invitation link has expired."),
            LinkState::Revoked => Some("This invitation link has been revoked."),
        }
    }
}

/// "Must be an organization owner": the reference's error for inviting an owner without being
/// one.
pub fn owner_required() -> RequestError {
    RequestError::new(
        ErrorCode::UnauthorizedPrincipal,
        "Must be an organization owner",
    )
}

/// A caller may invite only roles with equal or stricter restrictions than their own (a larger
/// or equal role number); only owners invite owners. Guests invite nobody.
pub fn check_invite_as(caller: &User, invite_as: Role) -> Result<(), RequestError> {
    if caller.role.is_guest() {
        return Err(RequestError::guests_not_allowed());
    }
    if caller.role.at_least(invite_as) {
        return Ok(());
    }
    Err(match invite_as {
        Role::Owner => owner_required(),
        Role::Administrator => RequestError::bad_request("Must be an organization administrator"),
        _ => RequestError::bad_request("Must be an organization moderator"),
    })
}

/// The expiry time of a link created at `now` that lasts `minutes` (None: never). Lifetimes
/// below one minute, or too long to represent, are refused naming the parameter.
pub fn expiry_date(now: i64, minutes: Option<i64>) -> Result<Option<i64>, RequestError> {
    let Some(minutes) = minutes else {
        return Ok(None);
    };
    let invalid = || {
        RequestError::invalid_param(
            "invite_expires_in_minutes",
            "Invalid invite_expires_in_minutes",
        )
    };
    if minutes < 1 {
        return Err(invalid());
    }
    minutes
        .checked_mul(60)
        .and_then(|seconds| now.checked_add(seconds))
        .map(Some)
        .ok_or_else(invalid)
}

/// Checks the length of `welcome_message_custom_text`; the text itself is kept as given (an
/// empty text means "no welcome message").
pub fn check_welcome_text(text: &str) -> Result<(), RequestError> {
    if text.chars().count() > MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH {
        return Err(RequestError::invalid_param(
            "welcome_message_custom_text",
            format!(
                "welcome_message_custom_text is too long (limit: {MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH} characters)"
            ),
        ));
    }
    Ok(())
}

/// The welcome text a person who joined through a link receives: the link's custom text, the
/// organization's default when the link has none (None), nothing for an empty custom text.
pub fn welcome_text(custom: Option<&str>, organization_default: &str) -> Option<String> {
    match custom {
        Some("") => None,
        Some(text) => Some(text.to_owned()),
        None if organization_default.trim().is_empty() => None,
        None => Some(organization_default.to_owned()),
    }
}

/// The organization's default welcome message, used when an invitation does not set one.
pub const DEFAULT_WELCOME_TEXT: &str = "Hello, and welcome! :wave: This is a direct message from \
me, Welcome Bot.\n\nTo get started, look around the channels you were subscribed to, and say \
hello in one of them. If you have questions, your organization's administrators can help.";

/// The address of an invitation link: `<realm_url>/join/<key>/`.
pub fn join_url(realm_url: &str, key: &str) -> String {
    format!("{}/join/{key}/", realm_url.trim_end_matches('/'))
}

/// The addresses of `POST /invites`' `invitee_emails`: separated by commas or newlines, each
/// trimmed, `Name <address>` read as its address, empty parts skipped, repeats dropped (first
/// spelling kept), in the order given.
pub fn parse_invitee_emails(raw: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in raw.split([',', '\n']) {
        let part = match (part.find('<'), part.rfind('>')) {
            (Some(open), Some(close)) if open < close => &part[open + 1..close],
            _ => part,
        };
        let email = part.trim();
        if !email.is_empty() && !out.iter().any(|e| e.eq_ignore_ascii_case(email)) {
            out.push(email.to_owned());
        }
    }
    out
}

/// How long an account must exist before a non-administrator may send email invitations in an
/// organization that does not require invitations (the reference's `INVITES_MIN_USER_AGE_DAYS`).
pub const INVITES_MIN_USER_AGE_DAYS: i64 = 3;

/// One refused address of `POST /invites`: the address, why, and whether it belongs to a
/// deactivated account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedAddress {
    /// The address as given.
    pub email: String,
    /// Why it was refused.
    pub reason: &'static str,
    /// Whether the address is a deactivated account's.
    pub deactivated: bool,
}

/// `INVITATION_FAILED`: the reference's error for refused addresses, listing them in `errors`
/// as `[address, reason, deactivated]`.
pub fn invitation_failed(
    msg: &str,
    refused: &[RefusedAddress],
    sent_invitations: bool,
) -> RequestError {
    let errors: Vec<serde_json::Value> = refused
        .iter()
        .map(|r| serde_json::json!([r.email, r.reason, r.deactivated]))
        .collect();
    RequestError::new(ErrorCode::InvitationFailed, msg)
        .with("errors", errors)
        .with("sent_invitations", sent_invitations)
        .with("license_limit_reached", false)
        .with("daily_limit_reached", false)
}

/// Stores a list of IDs as text (`"1,2,3"`).
pub fn format_ids(ids: &[i64]) -> String {
    ids.iter()
        .map(|id| id.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads a list written by [`format_ids`]; unreadable parts are skipped.
pub fn parse_ids(text: &str) -> Vec<i64> {
    text.split(',')
        .filter_map(|part| part.trim().parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(role: Role) -> User {
        crate::testing::user(1, role)
    }

    #[test]
    fn roles_equal_or_stricter_only() {
        for caller in Role::ALL {
            for invited in Role::ALL {
                let result = check_invite_as(&user(caller), invited);
                let expected = !caller.is_guest() && caller.code() <= invited.code();
                assert_eq!(result.is_ok(), expected, "{caller:?} inviting {invited:?}");
            }
        }
        let err = check_invite_as(&user(Role::Administrator), Role::Owner).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnauthorizedPrincipal);
        assert_eq!(err.msg, "Must be an organization owner");
    }

    #[test]
    fn expiry_and_state() {
        assert_eq!(expiry_date(100, None), Ok(None));
        assert_eq!(expiry_date(100, Some(2)), Ok(Some(220)));
        assert!(expiry_date(100, Some(0)).is_err());
        assert!(expiry_date(100, Some(i64::MAX)).is_err());
        assert_eq!(LinkState::of(false, None, 5), LinkState::Valid);
        assert_eq!(LinkState::of(false, Some(6), 5), LinkState::Valid);
        assert_eq!(LinkState::of(false, Some(5), 5), LinkState::Expired);
        assert_eq!(LinkState::of(true, Some(1), 5), LinkState::Revoked);
    }

    #[test]
    fn welcome_texts() {
        assert_eq!(welcome_text(Some(""), "d"), None);
        assert_eq!(welcome_text(Some("x"), "d"), Some("x".into()));
        assert_eq!(welcome_text(None, "d"), Some("d".into()));
        assert!(check_welcome_text(&"é".repeat(8000)).is_ok());
        assert!(check_welcome_text(&"é".repeat(8001)).is_err());
    }

    #[test]
    fn ids_round_trip() {
        assert_eq!(parse_ids(&format_ids(&[3, 1, 2])), vec![3, 1, 2]);
        assert_eq!(parse_ids(""), Vec::<i64>::new());
        assert_eq!(join_url("http://x/", "abc"), "http://x/join/abc/");
    }

    #[test]
    fn invitee_emails_are_split_and_unwrapped() {
        assert_eq!(
            parse_invitee_emails("a@x.org, Bee <b@x.org>\n\n,A@X.org ,c@x.org"),
            vec!["a@x.org", "b@x.org", "c@x.org"]
        );
        assert!(parse_invitee_emails(" , \n").is_empty());
    }

    #[test]
    fn invitation_failed_lists_refused_addresses() {
        let err = invitation_failed(
            "m",
            &[RefusedAddress {
                email: "a@x.org".into(),
                reason: "Already has an account.",
                deactivated: false,
            }],
            true,
        );
        assert_eq!(err.code, ErrorCode::InvitationFailed);
        assert_eq!(err.data["errors"][0][1], "Already has an account.");
        assert_eq!(err.data["sent_invitations"], true);
        assert_eq!(err.data["daily_limit_reached"], false);
    }
}

//! Users (people and bots) and how one user's record looks to another: which email address they
//! see, whether the avatar URL is left to the client, and which profile data is included.

use crate::email::placeholder_email;
use crate::ids::UserId;
use crate::role::Role;
use sha2::{Digest, Sha256};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Kinds of bot, with the API's numeric values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BotType {
    /// A bot that uses the API like a person.
    Generic = 1,
    /// Receives third-party webhooks.
    IncomingWebhook = 2,
    /// Calls out to a URL on messages.
    OutgoingWebhook = 3,
    /// Runs inside the server.
    Embedded = 4,
}

impl BotType {
    /// The bot type for an API numeric value.
    pub fn from_code(code: i64) -> Option<BotType> {
        [
            BotType::Generic,
            BotType::IncomingWebhook,
            BotType::OutgoingWebhook,
            BotType::Embedded,
        ]
        .into_iter()
        .find(|t| *t as i64 == code)
    }
}

/// Where a user's avatar is hosted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AvatarSource {
    /// A third-party provider (Gravatar), derived from the email address.
    Gravatar,
    /// Uploaded to this server.
    Uploaded,
}

impl AvatarSource {
    /// The API's one-letter code (`G` or `U`).
    pub fn code(self) -> &'static str {
        match self {
            AvatarSource::Gravatar => "G",
            AvatarSource::Uploaded => "U",
        }
    }

    /// The source for a stored one-letter code; unknown codes fall back to Gravatar.
    pub fn from_code(code: &str) -> AvatarSource {
        if code == "U" {
            AvatarSource::Uploaded
        } else {
            AvatarSource::Gravatar
        }
    }
}

/// Who may see a user's real (delivery) email address, with the API's numeric values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmailAddressVisibility {
    /// Everyone in the organization, guests included.
    Everyone = 1,
    /// Members and above; not guests.
    Members = 2,
    /// Administrators only.
    Admins = 3,
    /// Nobody but the user (and administrators, who see everything).
    Nobody = 4,
    /// Moderators and above.
    Moderators = 5,
}

impl EmailAddressVisibility {
    /// The policy for an API numeric value.
    pub fn from_code(code: i64) -> Option<Self> {
        use EmailAddressVisibility::*;
        [Everyone, Members, Admins, Nobody, Moderators]
            .into_iter()
            .find(|v| *v as i64 == code)
    }
}

/// A user as stored: everything the API may show about them, but no credentials.
#[derive(Debug, Clone, PartialEq)]
pub struct User {
    /// Unique ID.
    pub id: UserId,
    /// The real address, normalised to lower case.
    pub delivery_email: String,
    /// Display name.
    pub full_name: String,
    /// Organization role.
    pub role: Role,
    /// False once deactivated.
    pub is_active: bool,
    /// Bot type, for bots only.
    pub bot_type: Option<BotType>,
    /// The bot's owner, for bots.
    pub bot_owner_id: Option<UserId>,
    /// IANA time zone name, or empty.
    pub timezone: String,
    /// Where the avatar is hosted.
    pub avatar_source: AvatarSource,
    /// Bumped whenever the avatar changes, to bust caches.
    pub avatar_version: i64,
    /// Account creation time, Unix seconds.
    pub date_joined: i64,
    /// Who may see `delivery_email`.
    pub email_address_visibility: EmailAddressVisibility,
    /// The permission to create users through the API (granted to the first owner).
    pub can_create_users: bool,
}

impl User {
    /// Whether this account is a bot.
    pub fn is_bot(&self) -> bool {
        self.bot_type.is_some()
    }

    /// The address the API knows this user by: the real one when everybody may see it (and for
    /// bots), otherwise a placeholder that is valid only for the API.
    pub fn api_email(&self, realm_host: &str) -> String {
        if self.is_bot() || self.email_address_visibility == EmailAddressVisibility::Everyone {
            self.delivery_email.clone()
        } else {
            placeholder_email(self.id, realm_host)
        }
    }

    /// `date_joined` as ISO 8601 with an offset, as the API writes it.
    pub fn date_joined_iso(&self) -> String {
        OffsetDateTime::from_unix_timestamp(self.date_joined)
            .ok()
            .and_then(|t| t.format(&Rfc3339).ok())
            .map(|s| s.replace('Z', "+00:00"))
            .unwrap_or_default()
    }
}

/// The longest display name accepted.
pub const MAX_FULL_NAME_LENGTH: usize = 100;

/// Characters a display name may not hold: they would break mention syntax.
const FULL_NAME_FORBIDDEN: [char; 6] = ['*', '`', '\\', '>', '"', '@'];

/// Validates a display name and returns it trimmed. `var_name` is the parameter it came from.
pub fn check_full_name(raw: &str, var_name: &str) -> Result<String, crate::RequestError> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(crate::RequestError::invalid_param(
            var_name,
            "Name too short!",
        ));
    }
    if name.chars().count() > MAX_FULL_NAME_LENGTH {
        return Err(crate::RequestError::invalid_param(
            var_name,
            "Name too long!",
        ));
    }
    if name
        .chars()
        .any(|c| c.is_control() || FULL_NAME_FORBIDDEN.contains(&c))
    {
        return Err(crate::RequestError::invalid_param(
            var_name,
            "Invalid characters in name!",
        ));
    }
    Ok(name.to_owned())
}

/// Whether `viewer` (None for a spectator) may see `target`'s real address: always their own and
/// bots'; administrators see every address; otherwise the target's visibility policy decides.
pub fn can_access_delivery_email(viewer: Option<&User>, target: &User) -> bool {
    if target.is_bot() {
        return true;
    }
    let Some(viewer) = viewer else {
        return false;
    };
    if viewer.id == target.id || viewer.role.is_admin() {
        return true;
    }
    match target.email_address_visibility {
        EmailAddressVisibility::Everyone => true,
        EmailAddressVisibility::Members => !viewer.role.is_guest(),
        EmailAddressVisibility::Moderators => viewer.role.is_moderator_or_above(),
        EmailAddressVisibility::Admins | EmailAddressVisibility::Nobody => false,
    }
}

/// The third-party (Gravatar) avatar URL of an address. Gravatar accepts SHA-256 hashes of the
/// trimmed, lower-cased address.
pub fn gravatar_url(email: &str, avatar_version: i64) -> String {
    let digest = Sha256::digest(email.trim().to_lowercase().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("https://secure.gravatar.com/avatar/{hex}?d=identicon&version={avatar_version}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: i64, role: Role, visibility: EmailAddressVisibility) -> User {
        User {
            delivery_email: format!("u{id}@example.com"),
            full_name: format!("User {id}"),
            date_joined: 1_700_000_000,
            email_address_visibility: visibility,
            ..crate::testing::user(id, role)
        }
    }

    #[test]
    fn delivery_email_visibility_rules() {
        use EmailAddressVisibility::*;
        let admin = user(1, Role::Administrator, Everyone);
        let moderator = user(2, Role::Moderator, Everyone);
        let member = user(3, Role::Member, Everyone);
        let guest = user(4, Role::Guest, Everyone);
        let cases = [
            (Everyone, [true, true, true, true]),
            (Members, [true, true, true, false]),
            (Moderators, [true, true, false, false]),
            (Admins, [true, false, false, false]),
            (Nobody, [true, false, false, false]),
        ];
        for (visibility, expected) in cases {
            let target = user(9, Role::Member, visibility);
            for (viewer, want) in [&admin, &moderator, &member, &guest]
                .into_iter()
                .zip(expected)
            {
                assert_eq!(
                    can_access_delivery_email(Some(viewer), &target),
                    want,
                    "{visibility:?} {:?}",
                    viewer.role
                );
            }
            assert!(can_access_delivery_email(Some(&target), &target));
            assert!(!can_access_delivery_email(None, &target));
        }
    }

    #[test]
    fn full_names_are_checked() {
        assert_eq!(
            check_full_name("  Ada Lovelace ", "full_name").unwrap(),
            "Ada Lovelace"
        );
        for bad in ["", "   ", "a*b", "x@y", "tab\tname"] {
            assert_eq!(
                check_full_name(bad, "full_name").unwrap_err().data["var_name"],
                "full_name"
            );
        }
        assert!(check_full_name(&"x".repeat(101), "full_name").is_err());
    }

    #[test]
    fn date_joined_has_offset() {
        let u = user(1, Role::Member, EmailAddressVisibility::Everyone);
        assert_eq!(u.date_joined_iso(), "2023-11-14T22:13:20+00:00");
    }
}

//! Users (people and bots) and how one user's record looks to another: which email address they
//! see, whether the avatar URL is left to the client, and which profile data is included.

use crate::email::placeholder_email;
use crate::ids::UserId;
use crate::role::Role;
use serde::Serialize;
use serde_json::{Map, Value};
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

/// Options of a request that shape user records.
#[derive(Debug, Clone, Copy, Default)]
pub struct UserRecordOptions {
    /// The client computes third-party avatar URLs itself.
    pub client_gravatar: bool,
    /// Include `profile_data`.
    pub include_custom_profile_fields: bool,
}

/// A user as one viewer sees them: the API's User object.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UserRecord {
    /// Unique ID.
    pub user_id: UserId,
    /// Real address, or null when the viewer may not see it.
    pub delivery_email: Option<String>,
    /// API address (a placeholder when the real one is hidden).
    pub email: String,
    /// Display name.
    pub full_name: String,
    /// ISO 8601 creation time.
    pub date_joined: String,
    /// False when deactivated.
    pub is_active: bool,
    /// Owner role.
    pub is_owner: bool,
    /// Administrator or owner.
    pub is_admin: bool,
    /// Guest role.
    pub is_guest: bool,
    /// Always false: billing is not a concept here, but clients read the field.
    pub is_billing_admin: bool,
    /// Bot account.
    pub is_bot: bool,
    /// Bot type code, null for people.
    pub bot_type: Option<i64>,
    /// Bot owner, present for bots only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot_owner_id: Option<Option<UserId>>,
    /// Role code.
    pub role: i64,
    /// IANA time zone, may be empty.
    pub timezone: String,
    /// Avatar URL, null when left to the client.
    pub avatar_url: Option<String>,
    /// Cache-busting avatar version.
    pub avatar_version: i64,
    /// Custom profile field values, when requested and the user is not a bot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile_data: Option<Map<String, Value>>,
}

impl UserRecord {
    /// How `target` looks to `viewer`. `profile_data` is the target's values keyed by field ID,
    /// used only when requested and the target is a person.
    pub fn build(
        target: &User,
        viewer: Option<&User>,
        options: UserRecordOptions,
        realm_host: &str,
        realm_url: &str,
        profile_data: Option<Map<String, Value>>,
    ) -> UserRecord {
        let can_see_email = can_access_delivery_email(viewer, target);
        let avatar_url = match target.avatar_source {
            AvatarSource::Gravatar if options.client_gravatar && can_see_email => None,
            AvatarSource::Gravatar => {
                Some(gravatar_url(&target.delivery_email, target.avatar_version))
            }
            AvatarSource::Uploaded => Some(format!(
                "{}/user_avatars/{}.png?version={}",
                realm_url.trim_end_matches('/'),
                target.id,
                target.avatar_version
            )),
        };
        UserRecord {
            user_id: target.id,
            delivery_email: can_see_email.then(|| target.delivery_email.clone()),
            email: target.api_email(realm_host),
            full_name: target.full_name.clone(),
            date_joined: target.date_joined_iso(),
            is_active: target.is_active,
            is_owner: target.role.is_owner(),
            is_admin: target.role.is_admin(),
            is_guest: target.role.is_guest(),
            is_billing_admin: false,
            is_bot: target.is_bot(),
            bot_type: target.bot_type.map(|t| t as i64),
            bot_owner_id: target.is_bot().then_some(target.bot_owner_id),
            role: target.role.code(),
            timezone: target.timezone.clone(),
            avatar_url,
            avatar_version: target.avatar_version,
            profile_data: if options.include_custom_profile_fields && !target.is_bot() {
                Some(profile_data.unwrap_or_default())
            } else {
                None
            },
        }
    }
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
    fn hidden_address_uses_placeholder_and_null_delivery_email() {
        let target = user(9, Role::Member, EmailAddressVisibility::Admins);
        let viewer = user(3, Role::Member, EmailAddressVisibility::Everyone);
        let record = UserRecord::build(
            &target,
            Some(&viewer),
            UserRecordOptions::default(),
            "chat.test",
            "http://chat.test",
            None,
        );
        assert_eq!(record.email, "user9@chat.test");
        assert_eq!(record.delivery_email, None);
        assert!(record.avatar_url.is_some());
        assert!(record.profile_data.is_none());
        assert!(record.bot_owner_id.is_none());
    }

    #[test]
    fn client_gravatar_nulls_avatar_only_when_email_visible() {
        let target = user(9, Role::Member, EmailAddressVisibility::Admins);
        let member = user(3, Role::Member, EmailAddressVisibility::Everyone);
        let admin = user(1, Role::Administrator, EmailAddressVisibility::Everyone);
        let options = UserRecordOptions {
            client_gravatar: true,
            include_custom_profile_fields: true,
        };
        let seen_by_member =
            UserRecord::build(&target, Some(&member), options, "h", "http://h", None);
        assert!(seen_by_member.avatar_url.is_some());
        let seen_by_admin =
            UserRecord::build(&target, Some(&admin), options, "h", "http://h", None);
        assert_eq!(seen_by_admin.avatar_url, None);
        assert_eq!(
            seen_by_admin.delivery_email.as_deref(),
            Some("u9@example.com")
        );
        assert_eq!(seen_by_admin.profile_data, Some(Map::new()));
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
    fn bots_carry_type_owner_and_their_real_address() {
        let mut bot = user(7, Role::Member, EmailAddressVisibility::Nobody);
        bot.bot_type = Some(BotType::IncomingWebhook);
        bot.bot_owner_id = Some(UserId(3));
        let viewer = user(4, Role::Guest, EmailAddressVisibility::Everyone);
        let options = UserRecordOptions {
            client_gravatar: false,
            include_custom_profile_fields: true,
        };
        let record = UserRecord::build(&bot, Some(&viewer), options, "h", "http://h", None);
        assert!(record.is_bot);
        assert_eq!(record.bot_type, Some(2));
        assert_eq!(record.bot_owner_id, Some(Some(UserId(3))));
        assert_eq!(record.delivery_email.as_deref(), Some("u7@example.com"));
        assert_eq!(record.email, "u7@example.com");
        assert!(record.profile_data.is_none(), "bots have no profile data");
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["bot_owner_id"], 3);
        bot.bot_owner_id = None;
        let json = serde_json::to_value(UserRecord::build(
            &bot,
            Some(&viewer),
            options,
            "h",
            "http://h",
            None,
        ))
        .unwrap();
        assert!(
            json["bot_owner_id"].is_null() && json.get("bot_owner_id").is_some(),
            "legacy bots: null owner"
        );
    }

    #[test]
    fn date_joined_has_offset() {
        let u = user(1, Role::Member, EmailAddressVisibility::Everyone);
        assert_eq!(u.date_joined_iso(), "2023-11-14T22:13:20+00:00");
    }
}

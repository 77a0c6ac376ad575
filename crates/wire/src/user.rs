//! People and bots as the API shows them: the User object (`GET /users`, `realm_users`, the
//! `realm_user` `add` event), the caller's own record (`GET /users/me`), and the avatar URL every
//! shape that names a user shares.

use parley_domain::email::placeholder_email;
use parley_domain::user::{can_access_delivery_email, gravatar_url, AvatarSource, User as Person};
use parley_domain::{Role, UserId};
use serde::Serialize;
use std::collections::BTreeMap;

/// Options of a request that shape user objects.
#[derive(Debug, Clone, Copy, Default)]
pub struct UserOptions {
    /// The client computes third-party avatar URLs itself.
    pub client_gravatar: bool,
    /// Include `profile_data`.
    pub include_custom_profile_fields: bool,
}

/// The avatar URL of `target`: the uploaded image on this server, or the Gravatar URL of its
/// address; None when the client computes Gravatar URLs itself (`leave_gravatar_to_client`).
pub fn avatar_url(
    target: &Person,
    realm_url: &str,
    leave_gravatar_to_client: bool,
) -> Option<String> {
    match target.avatar_source {
        AvatarSource::Gravatar if leave_gravatar_to_client => None,
        AvatarSource::Gravatar => Some(gravatar_url(&target.delivery_email, target.avatar_version)),
        AvatarSource::Uploaded => Some(format!(
            "{}/user_avatars/{}.png?version={}",
            realm_url.trim_end_matches('/'),
            target.id,
            target.avatar_version
        )),
    }
}

/// One custom profile field value of a user.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ProfileValue {
    /// The value as stored (JSON text for person pickers).
    pub value: String,
    /// The value rendered as HTML, for field types whose values are Markdown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendered_value: Option<String>,
}

/// A user's custom profile field values, keyed by field ID.
pub type ProfileData = BTreeMap<String, ProfileValue>;

/// A user as one viewer sees them: the API's User object.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct User {
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
    /// Bot account.
    pub is_bot: bool,
    /// Bot type code, null for people.
    pub bot_type: Option<i64>,
    /// Bot owner, present for bots only (null for bots without one).
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
    pub profile_data: Option<ProfileData>,
}

impl User {
    /// How `target` looks to `viewer` (None: a spectator). `profile_data` is the target's
    /// values, used only when requested and the target is a person.
    pub fn build(
        target: &Person,
        viewer: Option<&Person>,
        options: UserOptions,
        realm_host: &str,
        realm_url: &str,
        profile_data: Option<ProfileData>,
    ) -> User {
        let can_see_email = can_access_delivery_email(viewer, target);
        User {
            user_id: target.id,
            delivery_email: can_see_email.then(|| target.delivery_email.clone()),
            email: target.api_email(realm_host),
            full_name: target.full_name.clone(),
            date_joined: target.date_joined_iso(),
            is_active: target.is_active,
            is_owner: target.role.is_owner(),
            is_admin: target.role.is_admin(),
            is_guest: target.role.is_guest(),
            is_bot: target.is_bot(),
            bot_type: target.bot_type.map(|t| t as i64),
            bot_owner_id: target.is_bot().then_some(target.bot_owner_id),
            role: target.role.code(),
            timezone: target.timezone.clone(),
            avatar_url: avatar_url(target, realm_url, options.client_gravatar && can_see_email),
            avatar_version: target.avatar_version,
            profile_data: if options.include_custom_profile_fields && !target.is_bot() {
                Some(profile_data.unwrap_or_default())
            } else {
                None
            },
        }
    }

    /// How a user the viewer may not access looks, as the reference shows it: "Unknown user",
    /// an API-only address, an active member with a generic avatar and no profile data.
    pub fn inaccessible(
        target: &Person,
        options: UserOptions,
        realm_host: &str,
        realm_url: &str,
    ) -> User {
        User {
            user_id: target.id,
            delivery_email: None,
            email: placeholder_email(target.id, realm_host),
            full_name: "Unknown user".into(),
            date_joined: target.date_joined_iso(),
            is_active: true,
            is_owner: false,
            is_admin: false,
            is_guest: false,
            is_bot: false,
            bot_type: None,
            bot_owner_id: None,
            role: Role::Member.code(),
            timezone: String::new(),
            avatar_url: Some(format!(
                "{}/static/images/unknown-user-avatar.png",
                realm_url.trim_end_matches('/')
            )),
            avatar_version: 1,
            profile_data: options.include_custom_profile_fields.then(ProfileData::new),
        }
    }
}

/// A system bot in the snapshot's `cross_realm_bots`: a User object that says so.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CrossRealmBot {
    /// The bot as a user.
    #[serde(flatten)]
    pub user: User,
    /// Always true.
    pub is_system_bot: bool,
}

/// `GET /users/me`: the caller's own record. People have no `bot_type` or `bot_owner_id` here,
/// as the description says; the reference sends them for bots.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OwnUser {
    /// Unique ID.
    pub user_id: UserId,
    /// The real address (one's own is always visible).
    pub delivery_email: String,
    /// API address.
    pub email: String,
    /// Display name.
    pub full_name: String,
    /// ISO 8601 creation time.
    pub date_joined: String,
    /// Always true for a caller.
    pub is_active: bool,
    /// Owner role.
    pub is_owner: bool,
    /// Administrator or owner.
    pub is_admin: bool,
    /// Guest role.
    pub is_guest: bool,
    /// Bot account.
    pub is_bot: bool,
    /// Bot type code, bots only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot_type: Option<i64>,
    /// Bot owner, bots only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot_owner_id: Option<Option<UserId>>,
    /// Role code.
    pub role: i64,
    /// IANA time zone, may be empty.
    pub timezone: String,
    /// Avatar URL (never left to the client here).
    pub avatar_url: String,
    /// Cache-busting avatar version.
    pub avatar_version: i64,
    /// Custom profile field values.
    pub profile_data: ProfileData,
    /// The newest message the caller received, -1 while there is none.
    pub max_message_id: i64,
}

impl OwnUser {
    /// The caller's record from their User object as they see themselves.
    pub fn new(user: User, max_message_id: i64) -> OwnUser {
        OwnUser {
            user_id: user.user_id,
            delivery_email: user.delivery_email.unwrap_or_default(),
            email: user.email,
            full_name: user.full_name,
            date_joined: user.date_joined,
            is_active: user.is_active,
            is_owner: user.is_owner,
            is_admin: user.is_admin,
            is_guest: user.is_guest,
            is_bot: user.is_bot,
            bot_type: user.bot_type,
            bot_owner_id: user.bot_owner_id,
            role: user.role,
            timezone: user.timezone,
            avatar_url: user.avatar_url.unwrap_or_default(),
            avatar_version: user.avatar_version,
            profile_data: user.profile_data.unwrap_or_default(),
            max_message_id,
        }
    }
}

/// A person as the `reaction` and `typing` events name them.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PersonRef {
    /// ID.
    pub user_id: UserId,
    /// API address.
    pub email: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_name: Option<String>,
}

/// One entry of the snapshot's and the event's `muted_users`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct MutedUser {
    /// The muted person.
    pub id: UserId,
    /// When, Unix seconds.
    pub timestamp: i64,
}

/// A bot as its administrators see it (`realm_bots`, `realm_bot` `add`), API key included.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Bot {
    /// Its address.
    pub email: String,
    /// Its user ID.
    pub user_id: UserId,
    /// Display name.
    pub full_name: String,
    /// Bot type code.
    pub bot_type: Option<i64>,
    /// False once deactivated.
    pub is_active: bool,
    /// Its API key.
    pub api_key: String,
    /// Default sending channel's name.
    pub default_sending_stream: Option<String>,
    /// Default event-queue channel's name.
    pub default_events_register_stream: Option<String>,
    /// Follows every public channel.
    pub default_all_public_streams: bool,
    /// Its avatar.
    pub avatar_url: String,
    /// Its services (outgoing webhooks, embedded bots).
    pub services: Vec<serde_json::Value>,
    /// Its owner.
    pub owner_id: Option<UserId>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use parley_domain::user::{BotType, EmailAddressVisibility};

    fn person(id: i64, role: Role, visibility: EmailAddressVisibility) -> Person {
        Person {
            id: UserId(id),
            delivery_email: format!("u{id}@example.com"),
            full_name: format!("User {id}"),
            role,
            is_active: true,
            bot_type: None,
            bot_owner_id: None,
            timezone: String::new(),
            avatar_source: AvatarSource::Gravatar,
            avatar_version: 1,
            date_joined: 1_700_000_000,
            email_address_visibility: visibility,
            can_create_users: false,
        }
    }

    #[test]
    fn hidden_address_uses_placeholder_and_null_delivery_email() {
        let target = person(9, Role::Member, EmailAddressVisibility::Admins);
        let viewer = person(3, Role::Member, EmailAddressVisibility::Everyone);
        let user = User::build(
            &target,
            Some(&viewer),
            UserOptions::default(),
            "chat.test",
            "http://chat.test",
            None,
        );
        assert_eq!(user.email, "user9@chat.test");
        assert_eq!(user.delivery_email, None);
        assert!(user.avatar_url.is_some());
        let json = serde_json::to_value(&user).unwrap();
        assert!(json.get("profile_data").is_none());
        assert!(json.get("bot_owner_id").is_none());
        assert!(json.get("is_billing_admin").is_none());
        assert!(json["bot_type"].is_null());
    }

    #[test]
    fn client_gravatar_nulls_avatar_only_when_email_visible() {
        let target = person(9, Role::Member, EmailAddressVisibility::Admins);
        let member = person(3, Role::Member, EmailAddressVisibility::Everyone);
        let admin = person(1, Role::Administrator, EmailAddressVisibility::Everyone);
        let options = UserOptions {
            client_gravatar: true,
            include_custom_profile_fields: true,
        };
        let seen_by_member = User::build(&target, Some(&member), options, "h", "http://h", None);
        assert!(seen_by_member.avatar_url.is_some());
        let seen_by_admin = User::build(&target, Some(&admin), options, "h", "http://h", None);
        assert_eq!(seen_by_admin.avatar_url, None);
        assert_eq!(seen_by_admin.profile_data, Some(ProfileData::new()));
    }

    #[test]
    fn bots_carry_type_and_owner() {
        let mut bot = person(7, Role::Member, EmailAddressVisibility::Nobody);
        bot.bot_type = Some(BotType::IncomingWebhook);
        bot.bot_owner_id = Some(UserId(3));
        let viewer = person(4, Role::Guest, EmailAddressVisibility::Everyone);
        let options = UserOptions {
            client_gravatar: false,
            include_custom_profile_fields: true,
        };
        let user = User::build(&bot, Some(&viewer), options, "h", "http://h", None);
        assert_eq!(user.bot_type, Some(2));
        assert_eq!(user.email, "u7@example.com");
        assert!(user.profile_data.is_none(), "bots have no profile data");
        assert_eq!(serde_json::to_value(&user).unwrap()["bot_owner_id"], 3);
        bot.bot_owner_id = None;
        let json = serde_json::to_value(User::build(
            &bot,
            Some(&viewer),
            options,
            "h",
            "http://h",
            None,
        ))
        .unwrap();
        assert!(json["bot_owner_id"].is_null() && json.get("bot_owner_id").is_some());
    }

    #[test]
    fn own_record_has_no_bot_fields_for_people() {
        let me = person(5, Role::Member, EmailAddressVisibility::Everyone);
        let options = UserOptions {
            client_gravatar: false,
            include_custom_profile_fields: true,
        };
        let own = OwnUser::new(
            User::build(&me, Some(&me), options, "h", "http://h", None),
            12,
        );
        let json = serde_json::to_value(own).unwrap();
        assert!(json.get("bot_type").is_none() && json.get("bot_owner_id").is_none());
        assert_eq!(json["max_message_id"], 12);
    }
}

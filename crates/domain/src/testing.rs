//! Fixtures shared by the domain's unit tests.

use crate::ids::UserId;
use crate::role::Role;
use crate::user::{AvatarSource, EmailAddressVisibility, User};

/// An active person with this ID and role, address `u<id>@x.y`, visible to everyone.
pub(crate) fn user(id: i64, role: Role) -> User {
    User {
        id: UserId(id),
        delivery_email: format!("u{id}@x.y"),
        full_name: format!("U{id}"),
        role,
        is_active: true,
        bot_type: None,
        bot_owner_id: None,
        timezone: String::new(),
        avatar_source: AvatarSource::Gravatar,
        avatar_version: 1,
        date_joined: 0,
        email_address_visibility: EmailAddressVisibility::Everyone,
        can_create_users: false,
    }
}

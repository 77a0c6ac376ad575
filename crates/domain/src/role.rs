//! Organization roles and their ordering: a lower number is a more powerful role.

use crate::error::RequestError;
use serde::{Deserialize, Serialize};

/// A user's role in the organization, with the API's numeric values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
pub enum Role {
    /// Full control of the organization.
    Owner,
    /// Organization administrator.
    Administrator,
    /// Moderator: some administrative powers over content.
    Moderator,
    /// A regular member.
    Member,
    /// A guest: sees only what they are explicitly given.
    Guest,
}

impl Role {
    /// Every role, from most to least powerful.
    pub const ALL: [Role; 5] = [
        Role::Owner,
        Role::Administrator,
        Role::Moderator,
        Role::Member,
        Role::Guest,
    ];

    /// The API's numeric value (100 owner ... 600 guest).
    pub fn code(self) -> i64 {
        match self {
            Role::Owner => 100,
            Role::Administrator => 200,
            Role::Moderator => 300,
            Role::Member => 400,
            Role::Guest => 600,
        }
    }

    /// The role for an API numeric value, if it is one.
    pub fn from_code(code: i64) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.code() == code)
    }

    /// The role for a command-line name such as `admin`, or a numeric value as text.
    pub fn from_name(name: &str) -> Option<Role> {
        match name.trim().to_ascii_lowercase().as_str() {
            "owner" => Some(Role::Owner),
            "admin" | "administrator" => Some(Role::Administrator),
            "moderator" => Some(Role::Moderator),
            "member" => Some(Role::Member),
            "guest" => Some(Role::Guest),
            other => other.parse().ok().and_then(Role::from_code),
        }
    }

    /// Whether this role is at least as powerful as `other`.
    pub fn at_least(self, other: Role) -> bool {
        self.code() <= other.code()
    }

    /// Owners are administrators too.
    pub fn is_admin(self) -> bool {
        self.at_least(Role::Administrator)
    }

    /// Whether this is the owner role.
    pub fn is_owner(self) -> bool {
        self == Role::Owner
    }

    /// Moderators and above.
    pub fn is_moderator_or_above(self) -> bool {
        self.at_least(Role::Moderator)
    }

    /// Whether this is the guest role.
    pub fn is_guest(self) -> bool {
        self == Role::Guest
    }
}

impl From<Role> for i64 {
    fn from(role: Role) -> i64 {
        role.code()
    }
}

impl TryFrom<i64> for Role {
    type Error = RequestError;

    fn try_from(code: i64) -> Result<Self, Self::Error> {
        Role::from_code(code).ok_or_else(|| RequestError::bad_request("Invalid role"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_order() {
        for role in Role::ALL {
            assert_eq!(Role::from_code(role.code()), Some(role));
        }
        assert_eq!(Role::from_code(500), None);
        assert!(Role::Owner.is_admin());
        assert!(Role::Administrator.is_admin());
        assert!(!Role::Moderator.is_admin());
        assert!(Role::Moderator.at_least(Role::Member));
        assert!(!Role::Guest.at_least(Role::Member));
    }

    #[test]
    fn names_parse() {
        assert_eq!(Role::from_name("admin"), Some(Role::Administrator));
        assert_eq!(Role::from_name("Guest"), Some(Role::Guest));
        assert_eq!(Role::from_name("300"), Some(Role::Moderator));
        assert_eq!(Role::from_name("boss"), None);
    }
}

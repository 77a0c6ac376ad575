//! Who may do what: pure predicates over users, used by the actions before they change anything.

use crate::error::RequestError;
use crate::role::Role;
use crate::user::User;

/// `POST /users`: administrators who also hold the `can_create_users` permission.
pub fn check_can_create_users(caller: &User) -> Result<(), RequestError> {
    if !caller.role.is_admin() {
        return Err(RequestError::admin_required());
    }
    if !caller.can_create_users {
        return Err(RequestError::insufficient_permission());
    }
    Ok(())
}

/// Administrators only (realm settings, other users' data).
pub fn check_is_admin(caller: &User) -> Result<(), RequestError> {
    if caller.role.is_admin() {
        Ok(())
    } else {
        Err(RequestError::admin_required())
    }
}

/// A caller may give out only roles at most as powerful as their own.
pub fn check_can_grant_role(caller: &User, role: Role) -> Result<(), RequestError> {
    if caller.role.at_least(role) {
        Ok(())
    } else {
        Err(RequestError::insufficient_permission())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(role: Role, can_create_users: bool) -> User {
        User {
            can_create_users,
            ..crate::testing::user(1, role)
        }
    }

    #[test]
    fn create_users_needs_admin_and_permission() {
        assert!(check_can_create_users(&user(Role::Owner, true)).is_ok());
        assert!(check_can_create_users(&user(Role::Administrator, true)).is_ok());
        assert_eq!(
            check_can_create_users(&user(Role::Administrator, false))
                .unwrap_err()
                .msg,
            "Insufficient permission"
        );
        assert_eq!(
            check_can_create_users(&user(Role::Member, true))
                .unwrap_err()
                .msg,
            "Must be an organization administrator"
        );
    }

    #[test]
    fn roles_granted_only_downwards() {
        let admin = user(Role::Administrator, true);
        assert!(check_can_grant_role(&admin, Role::Member).is_ok());
        assert!(check_can_grant_role(&admin, Role::Administrator).is_ok());
        assert!(check_can_grant_role(&admin, Role::Owner).is_err());
    }
}

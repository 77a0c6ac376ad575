//! What the operator does from the command line rather than through the API: setting a user's
//! password (`parley change-password`).

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::secrets;
use parley_domain::email::normalize_email;
use parley_domain::user::User;
use parley_domain::RequestError;
use parley_storage::users;

/// Sets the password of the user whose delivery address is `email`, as an operator may without
/// the old one. The API key stays as it was (as the reference's password change keeps it); the
/// user's browser sessions end, in the same transaction.
pub async fn do_set_password(ctx: &Context, email: &str, password: &str) -> ActionResult<User> {
    let email = normalize_email(email, "email")?;
    crate::secrets::check_password(password)?;
    let hash = secrets::hash_password(password).map_err(ActionError::Internal)?;
    ctx.transaction(move |conn| {
        let user = users::by_delivery_email(conn, &email)?.ok_or_else(|| {
            ActionError::from(RequestError::invalid_param(
                "email",
                format!("No user has the address {email}"),
            ))
        })?;
        users::set_password_hash(conn, user.id, &hash)?;
        crate::sessions::end_sessions(conn, user.id, None)?;
        Ok(user)
    })
    .await
}

//! Changing one's email address: `PATCH /settings` with `email` mails a confirmation link to the
//! new address; the address changes only when the link is followed.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::mail::Mail;
use crate::notify::channels::active_users;
use crate::secrets;
use crate::time::now;
use parley_domain::email::normalize_email;
use parley_domain::user::{can_access_delivery_email, EmailAddressVisibility, User};
use parley_domain::RequestError;
use parley_storage::{email_changes, users};

/// How long a confirmation link works (the reference's one day).
pub const CONFIRMATION_VALID_SECONDS: i64 = 24 * 3600;

/// The link that confirms a change.
pub fn confirmation_url(realm_url: &str, token: &str) -> String {
    format!("{realm_url}/accounts/confirm_new_email/{token}")
}

/// Records a pending change and mails the link to the new address.
pub async fn request_email_change(ctx: &Context, user: User, raw: String) -> ActionResult<()> {
    let email = normalize_email(&raw, "email")?;
    if email == user.delivery_email {
        return Err(RequestError::invalid_param("email", "Email address already in use").into());
    }
    let token = secrets::generate_api_key();
    let token2 = token.clone();
    let email2 = email.clone();
    ctx.transaction(move |conn| {
        if users::by_delivery_email(conn, &email2)?.is_some() {
            return Err(RequestError::invalid_param(
                "email",
                format!("Email '{email2}' already in use"),
            )
            .into());
        }
        email_changes::create(conn, &token2, user.id, &email2, now())?;
        Ok::<_, ActionError>(())
    })
    .await?;
    let mail = Mail {
        to: email.clone(),
        subject: "Confirm your new email address".to_owned(),
        body: format!(
            "Someone (hopefully you) asked to change the email address of your account to {email}.\n\n\
             Follow this link within a day to confirm:\n{}\n\nIf it was not you, ignore this message.\n",
            confirmation_url(&ctx.realm.url, &token)
        ),
    };
    let mailer = ctx.mailer.clone();
    tokio::task::spawn_blocking(move || mailer.send(&mail))
        .await
        .map_err(|e| ActionError::Internal(e.to_string()))?
        .map_err(|e| ActionError::Internal(format!("cannot send the confirmation mail: {e}")))
}

/// Follows a confirmation link: the address changes, and those who may see it learn of it.
/// Returns the new address.
pub async fn do_confirm_email_change(ctx: &Context, token: String) -> ActionResult<String> {
    let host = ctx.realm.host.clone();
    ctx.write(move |conn, events| {
        let invalid = || {
            RequestError::bad_request("This confirmation link is invalid or has already been used.")
        };
        let (user_id, email, created) = email_changes::take(conn, &token)?.ok_or_else(invalid)?;
        if now() - created > CONFIRMATION_VALID_SECONDS {
            return Err(RequestError::bad_request("This confirmation link has expired.").into());
        }
        if users::by_delivery_email(conn, &email)?.is_some() {
            return Err(
                RequestError::bad_request(format!("Email '{email}' already in use")).into(),
            );
        }
        let before = users::by_id(conn, user_id)?.ok_or_else(invalid)?;
        email_changes::set_delivery_email(conn, user_id, &email)?;
        let after = users::by_id(conn, user_id)?.ok_or_else(invalid)?;
        let people = active_users(conn)?;
        let can_see: Vec<_> = people
            .iter()
            .filter(|viewer| can_access_delivery_email(Some(viewer), &after))
            .map(|viewer| viewer.id)
            .collect();
        // Built by the one constructor of every `realm_user` update form, which keeps to the
        // users who can access the changed user.
        if let Some(event) =
            crate::notify::users::delivery_email_changed(conn, &after, can_see, Some(&email))?
        {
            events.push(event);
        }
        if after.email_address_visibility == EmailAddressVisibility::Everyone
            && before.api_email(&host) != after.api_email(&host)
        {
            events.push(crate::notify::users::api_email_changed(
                conn,
                &after,
                &after.api_email(&host),
            )?);
        }
        Ok(email)
    })
    .await
}

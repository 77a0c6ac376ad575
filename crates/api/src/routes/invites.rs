//! Invitations: email invitations sent, revoked and resent; reusable invitation links created and
//! revoked; both listed, and accepted through the API (a Parley addition; the reference only has
//! the web form).

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Json, Params};
use actix_web::web;
use parley_actions::invites::{self, CreateInvite, SendInvites};
use parley_actions::signup::{self, Signup};
use parley_actions::Context;
use parley_domain::Role;

params! {
    /// `GET /invites` and `DELETE /invites/multiuse/{invite_id}`.
    pub struct NoParams {}
}

params! {
    /// `POST /invites/multiuse`.
    pub struct CreateMultiuseParams {
        invite_expires_in_minutes: Option<Json<Option<i64>>>,
        invite_as: Role = Role::Member,
        stream_ids: Json<Vec<i64>> = Json(Vec::new()),
        group_ids: Json<Vec<i64>> = Json(Vec::new()),
        include_realm_default_subscriptions: bool = false,
        welcome_message_custom_text: Option<String>,
    }
}

params! {
    /// `POST /invites`.
    pub struct SendInvitesParams {
        invitee_emails: String,
        invite_expires_in_minutes: Option<Json<Option<i64>>>,
        invite_as: Role = Role::Member,
        stream_ids: Json<Vec<i64>>,
        group_ids: Json<Vec<i64>> = Json(Vec::new()),
        include_realm_default_subscriptions: bool = false,
        notify_referrer_on_join: bool = true,
        welcome_message_custom_text: Option<String>,
    }
}

params! {
    /// `POST /invites/multiuse/{key}/accept`.
    pub struct AcceptParams {
        email: String,
        full_name: String,
        password: String,
    }
}

/// GET /invites — the unexpired invitations the caller manages.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let list = invites::get_invites(&ctx, me).await?;
    Ok(Success::empty().with("invites", list))
}

/// POST /invites — invite people by email; each is mailed a one-use sign-up link.
pub async fn send(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<SendInvitesParams>,
) -> ApiResult<Success> {
    let request = SendInvites {
        invitee_emails: p.invitee_emails,
        invite: CreateInvite {
            invite_expires_in_minutes: p.invite_expires_in_minutes.map(|Json(m)| m),
            invite_as: p.invite_as,
            stream_ids: p.stream_ids.0,
            group_ids: p.group_ids.0,
            include_realm_default_subscriptions: p.include_realm_default_subscriptions,
            welcome_message_custom_text: p.welcome_message_custom_text,
        },
        notify_referrer_on_join: p.notify_referrer_on_join,
    };
    invites::do_invite_users(&ctx, me, request).await?;
    Ok(Success::empty())
}

/// DELETE /invites/{invite_id} — revoke an email invitation.
pub async fn revoke(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("invite_id", &path)?;
    invites::do_revoke_email_invite(&ctx, me, id).await?;
    Ok(Success::empty())
}

/// POST /invites/{invite_id}/resend — mail an email invitation again.
pub async fn resend(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("invite_id", &path)?;
    invites::do_resend_email_invite(&ctx, me, id).await?;
    Ok(Success::empty())
}

/// POST /invites/multiuse — create a reusable invitation link; answers `invite_link`.
pub async fn create_multiuse(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<CreateMultiuseParams>,
) -> ApiResult<Success> {
    let request = CreateInvite {
        invite_expires_in_minutes: p.invite_expires_in_minutes.map(|Json(m)| m),
        invite_as: p.invite_as,
        stream_ids: p.stream_ids.0,
        group_ids: p.group_ids.0,
        include_realm_default_subscriptions: p.include_realm_default_subscriptions,
        welcome_message_custom_text: p.welcome_message_custom_text,
    };
    let link = invites::do_create_multiuse_invite(&ctx, me, request).await?;
    Ok(Success::empty().with("invite_link", link))
}

/// DELETE /invites/multiuse/{invite_id} — revoke a reusable invitation link.
pub async fn revoke_multiuse(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let id = path_param::<i64>("invite_id", &path)?;
    invites::do_revoke_multiuse_invite(&ctx, me, id).await?;
    Ok(Success::empty())
}

/// POST /invites/multiuse/{key}/accept — create an account through a reusable invitation link
/// (no authentication: the key is the credential); answers `user_id`, `api_key` and `email`.
pub async fn accept(
    ctx: web::Data<Context>,
    path: web::Path<String>,
    Params(p): Params<AcceptParams>,
) -> ApiResult<Success> {
    let signup = Signup {
        email: p.email,
        full_name: p.full_name,
        password: p.password,
    };
    let created = signup::do_accept_invitation(&ctx, path.into_inner(), signup).await?;
    let email = created.user.api_email(&ctx.realm.host);
    Ok(Success::empty()
        .with("user_id", created.user.id.0)
        .with("api_key", created.api_key)
        .with("email", email))
}

//! Invitations. Email invitations: `POST /invites` mails a one-use link to each address,
//! `DELETE /invites/{id}` revokes one, `POST /invites/{id}/resend` mails it again. Reusable
//! links: `POST /invites/multiuse` creates one, `DELETE /invites/multiuse/{invite_id}` revokes
//! one. `GET /invites` lists both kinds that the caller manages. Accepting either is in
//! [`crate::signup`].

use crate::access::access_channel_by_id;
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::mail::Mail;
use crate::notify::channels::active_users;
use crate::policy::{self, Policy};
use crate::secrets;
use crate::subscriptions::may_add_others;
use crate::time::now;
use parley_domain::email::normalize_email;
use parley_domain::groups::GroupId;
use parley_domain::invite::{
    check_invite_as, check_welcome_text, expiry_date, invitation_failed, join_url,
    parse_invitee_emails, LinkState, RefusedAddress, INVITES_MIN_USER_AGE_DAYS,
};
use parley_domain::user::User;
use parley_domain::{ChannelId, RequestError, Role, UserId};
use parley_events::Event;
use parley_storage::email_invites::{self, EmailInvite, NewEmailInvite};
use parley_storage::invites::{self, MultiuseInvite, NewInvite};
use parley_storage::{users, DbConn};
use serde_json::{json, Value};

/// `POST /invites/multiuse`, as parsed.
#[derive(Debug, Clone)]
pub struct CreateInvite {
    /// Lifetime in minutes: None for the server default, Some(None) never expires.
    pub invite_expires_in_minutes: Option<Option<i64>>,
    /// Role of the accounts created through the link.
    pub invite_as: Role,
    /// Channels new accounts join.
    pub stream_ids: Vec<i64>,
    /// Groups new accounts join.
    pub group_ids: Vec<i64>,
    /// Whether new accounts also join the default channels.
    pub include_realm_default_subscriptions: bool,
    /// The Welcome Bot's text (administrators only): None for the organization default, empty
    /// for no welcome message.
    pub welcome_message_custom_text: Option<String>,
}

/// `invites_changed`, to the administrators and the link's creator (as the reference does).
pub(crate) fn invites_changed(conn: &mut DbConn, creator: UserId) -> ActionResult<Event> {
    invites_changed_for(conn, &[creator])
}

/// `invites_changed`, to the administrators and the creators of the changed invitations.
fn invites_changed_for(conn: &mut DbConn, creators: &[UserId]) -> ActionResult<Event> {
    let mut audience: Vec<UserId> = active_users(conn)?
        .iter()
        .filter(|u| u.role.is_admin())
        .map(|u| u.id)
        .collect();
    for creator in creators {
        if !audience.contains(creator) {
            audience.push(*creator);
        }
    }
    Ok(crate::notify::to_users(
        audience,
        parley_wire::Event::InvitesChanged {},
    ))
}

/// Checks the channels of a new link: each must be visible to the caller ("Invalid channel ID"
/// otherwise), and be a default channel or one the caller may subscribe others to.
fn check_channels(
    conn: &mut DbConn,
    policy: &Policy,
    caller: &User,
    ids: &[i64],
) -> ActionResult<()> {
    let mut forbidden = false;
    for &id in ids {
        let (channel, _) =
            access_channel_by_id(conn, policy, caller, ChannelId(id)).map_err(|_| {
                RequestError::invalid_param(
                    "stream_ids",
                    format!("Invalid channel ID {id}. No invites were sent."),
                )
            })?;
        if channel.is_archived {
            return Err(RequestError::invalid_param(
                "stream_ids",
                format!("Invalid channel ID {id}. No invites were sent."),
            )
            .into());
        }
        if !channel.is_default && !may_add_others(policy, caller, &channel) {
            forbidden = true;
        }
    }
    if forbidden {
        return Err(RequestError::invalid_param(
            "stream_ids",
            "You do not have permission to subscribe other users to channels.",
        )
        .into());
    }
    Ok(())
}

/// Checks the groups of a new link: the caller must be allowed to add members to each.
fn check_groups(
    conn: &mut DbConn,
    policy: &Policy,
    caller: &User,
    ids: &[i64],
) -> ActionResult<()> {
    for &id in ids {
        if !crate::user_groups::may_add_members(conn, policy, caller, GroupId(id))? {
            if !policy.groups.members.contains_key(&GroupId(id))
                && !policy.groups.system.contains_key(&GroupId(id))
            {
                return Err(RequestError::invalid_param("group_ids", "Invalid user group").into());
            }
            return Err(RequestError::insufficient_permission()
                .with("var_name", "group_ids")
                .into());
        }
    }
    Ok(())
}

fn dedup(ids: Vec<i64>) -> Vec<i64> {
    let mut out = Vec::new();
    for id in ids {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// `POST /invites/multiuse`: creates a reusable link for whoever is in
/// `create_multiuse_invite_group`; returns its URL.
pub async fn do_create_multiuse_invite(
    ctx: &Context,
    caller: User,
    request: CreateInvite,
) -> ActionResult<String> {
    let minutes = request
        .invite_expires_in_minutes
        .unwrap_or(Some(ctx.invitation_link_validity_minutes));
    let created = now();
    let expiry = expiry_date(created, minutes)?;
    if let Some(text) = &request.welcome_message_custom_text {
        check_welcome_text(text)?;
    }
    let key = secrets::generate_api_key().to_lowercase();
    let url = join_url(&ctx.realm.url, &key);
    ctx.write(move |conn, events| {
        if caller.role.is_guest() {
            return Err(RequestError::guests_not_allowed().into());
        }
        let policy = policy::load(conn)?;
        if !policy
            .groups
            .setting_contains(&policy.realm.create_multiuse_invite_group, &caller)
        {
            return Err(RequestError::insufficient_permission().into());
        }
        check_invite_as(&caller, request.invite_as)?;
        let stream_ids = dedup(request.stream_ids);
        let group_ids = dedup(request.group_ids);
        check_channels(conn, &policy, &caller, &stream_ids)?;
        check_groups(conn, &policy, &caller, &group_ids)?;
        // Only administrators choose the welcome text; for others it is always the default.
        let welcome = request
            .welcome_message_custom_text
            .filter(|_| caller.role.is_admin());
        invites::insert(
            conn,
            &NewInvite {
                key: &key,
                referred_by: caller.id,
                invited_as: request.invite_as.code(),
                stream_ids: &stream_ids,
                group_ids: &group_ids,
                include_realm_default_subscriptions: request.include_realm_default_subscriptions,
                welcome_message_custom_text: welcome.as_deref(),
                date_created: created,
                expiry_date: expiry,
            },
        )?;
        events.push(invites_changed(conn, caller.id)?);
        Ok(())
    })
    .await?;
    Ok(url)
}

fn invite_json(ctx: &Context, invite: &MultiuseInvite) -> Value {
    json!({
        "id": invite.id,
        "invited_by_user_id": invite.referred_by.0,
        "invited": invite.date_created,
        "expiry_date": invite.expiry_date,
        "invited_as": invite.invited_as,
        "is_multiuse": true,
        "link_url": join_url(&ctx.realm.url, &invite.key),
    })
}

fn email_invite_json(invite: &EmailInvite) -> Value {
    json!({
        "id": invite.link.id,
        "invited_by_user_id": invite.link.referred_by.0,
        "invited": invite.link.date_created,
        "expiry_date": invite.link.expiry_date,
        "invited_as": invite.link.invited_as,
        "email": invite.email,
        "notify_referrer_on_join": invite.notify_referrer_on_join,
        "is_multiuse": false,
    })
}

/// `GET /invites`: the usable (pending, unexpired) email invitations, then the usable links,
/// that the caller manages: all of them for administrators, their own for others. Guests have
/// none to manage.
pub async fn get_invites(ctx: &Context, caller: User) -> ActionResult<Vec<Value>> {
    if caller.role.is_guest() {
        return Err(RequestError::guests_not_allowed().into());
    }
    let ctx2 = ctx.clone();
    ctx.run(move |conn| {
        let only = if caller.role.is_admin() {
            None
        } else {
            Some(caller.id)
        };
        let at = now();
        let mut list: Vec<Value> = email_invites::usable(conn, only, at)?
            .iter()
            .map(email_invite_json)
            .collect();
        list.extend(
            invites::usable(conn, only, at)?
                .iter()
                .map(|i| invite_json(&ctx2, i)),
        );
        Ok::<_, ActionError>(list)
    })
    .await
}

/// `POST /invites`, as parsed.
#[derive(Debug, Clone)]
pub struct SendInvites {
    /// The raw `invitee_emails`: addresses separated by commas or newlines.
    pub invitee_emails: String,
    /// The rest, as for a reusable link.
    pub invite: CreateInvite,
    /// Whether the inviter hears from the Notification Bot when an invitee joins.
    pub notify_referrer_on_join: bool,
}

/// Why an address cannot be invited, if it cannot: not an address, outside the organization's
/// domains, or an existing account's (deactivated or not).
fn refusal(conn: &mut DbConn, raw: &str, restricted: bool) -> ActionResult<Option<RefusedAddress>> {
    let refuse = |reason: &'static str, deactivated: bool| {
        Some(RefusedAddress {
            email: raw.to_owned(),
            reason,
            deactivated,
        })
    };
    let Ok(email) = normalize_email(raw, "invitee_emails") else {
        return Ok(refuse("Invalid address.", false));
    };
    // No organization domains can be configured yet, so a restricted organization accepts none.
    if restricted {
        return Ok(refuse("Outside your domain.", false));
    }
    Ok(match users::by_delivery_email(conn, &email)? {
        Some(user) if user.is_active => refuse("Already has an account.", false),
        Some(_) => refuse("Account has been deactivated.", true),
        None => None,
    })
}

/// The invitation mail for `email`, from `referrer`.
fn invitation_mail(
    ctx: &Context,
    realm_name: &str,
    referrer: &User,
    email: &str,
    key: &str,
    expiry: Option<i64>,
) -> Mail {
    let until = match expiry {
        Some(at) => format!("The link works until {}.", crate::time::iso8601(at)),
        None => "The link does not expire.".to_owned(),
    };
    Mail {
        to: email.to_owned(),
        subject: format!(
            "{} ({}) has invited you to join {realm_name}",
            referrer.full_name, referrer.delivery_email
        ),
        body: format!(
            "{} ({}) has invited you to join {realm_name} ({}).\n\n\
             Follow this link to create your account:\n{}\n\n{until}\n",
            referrer.full_name,
            referrer.delivery_email,
            ctx.realm.url,
            join_url(&ctx.realm.url, key)
        ),
    }
}

/// Sends mail off the executor; a failure is logged (the invitation stays listed and can be
/// resent) rather than undoing what was committed.
async fn send_mail(ctx: &Context, mails: Vec<Mail>) {
    let mailer = ctx.mailer.clone();
    let sent = tokio::task::spawn_blocking(move || {
        for mail in &mails {
            if let Err(e) = mailer.send(mail) {
                tracing::error!(to = %mail.to, error = %e, "cannot send an invitation mail");
            }
        }
    })
    .await;
    if let Err(e) = sent {
        tracing::error!(error = %e, "the invitation mailer task failed");
    }
}

async fn realm_name(ctx: &Context) -> ActionResult<String> {
    let realm = ctx
        .run(|conn| Ok::<_, ActionError>(parley_storage::realms::get(conn)?))
        .await?;
    Ok(realm.map(|r| r.name).unwrap_or_default())
}

/// `POST /invites`: whoever is in `can_invite_users_group` invites addresses (of a role no more
/// powerful than their own, to channels that are default ones or that they may add others to,
/// and to groups they may add members to), as the reference: if any address is invalid, none is
/// invited; addresses of existing accounts are skipped, and the answer is then
/// `INVITATION_FAILED` listing them (`sent_invitations` says whether anyone was invited). Each
/// invitee is mailed a one-use link.
pub async fn do_invite_users(
    ctx: &Context,
    caller: User,
    request: SendInvites,
) -> ActionResult<()> {
    if caller.role.is_guest() {
        return Err(RequestError::guests_not_allowed().into());
    }
    let minutes = request
        .invite
        .invite_expires_in_minutes
        .unwrap_or(Some(ctx.invitation_link_validity_minutes));
    let created = now();
    let expiry = expiry_date(created, minutes)?;
    if let Some(text) = &request.invite.welcome_message_custom_text {
        check_welcome_text(text)?;
    }
    let name = realm_name(ctx).await?;
    let ctx2 = ctx.clone();
    let (mails, skipped) = ctx
        .write(move |conn, events| {
            let policy = policy::load(conn)?;
            if !policy
                .groups
                .setting_contains(&policy.realm.can_invite_users_group, &caller)
            {
                return Err(RequestError::insufficient_permission().into());
            }
            check_invite_as(&caller, request.invite.invite_as)?;
            if request.invitee_emails.trim().is_empty() {
                return Err(RequestError::bad_request(
                    "You must specify at least one email address.",
                )
                .into());
            }
            let stream_ids = dedup(request.invite.stream_ids);
            let group_ids = dedup(request.invite.group_ids);
            check_channels(conn, &policy, &caller, &stream_ids)?;
            check_groups(conn, &policy, &caller, &group_ids)?;
            let stored = parley_storage::realms::permissions(conn)?;
            let setting =
                |name: &str| parley_domain::realm_settings::stored_or_default(name, &stored);
            let invite_required = setting("invite_required").as_bool().unwrap_or(true);
            if !invite_required
                && !caller.role.is_admin()
                && caller.date_joined > created - INVITES_MIN_USER_AGE_DAYS * 86_400
            {
                return Err(invitation_failed(
                    "Your account is too new to send invites for this organization. \
                     Ask an organization admin, or a more experienced user.",
                    &[],
                    false,
                )
                .into());
            }
            let restricted = setting("emails_restricted_to_domains")
                .as_bool()
                .unwrap_or(false);
            let emails = parse_invitee_emails(&request.invitee_emails);
            let mut invalid = Vec::new();
            let mut skipped = Vec::new();
            let mut good = Vec::new();
            for raw in &emails {
                match refusal(conn, raw, restricted)? {
                    Some(r) if r.reason == "Already has an account." || r.deactivated => {
                        skipped.push(r)
                    }
                    Some(r) => invalid.push(r),
                    None => good.push(normalize_email(raw, "invitee_emails")?),
                }
            }
            if !invalid.is_empty() {
                invalid.extend(skipped);
                return Err(invitation_failed(
                    "Some emails did not validate, so we didn't send any invitations.",
                    &invalid,
                    false,
                )
                .into());
            }
            if good.is_empty() {
                return Err(invitation_failed(
                    "We weren't able to invite anyone.",
                    &skipped,
                    false,
                )
                .into());
            }
            let welcome = request
                .invite
                .welcome_message_custom_text
                .filter(|_| caller.role.is_admin());
            let mut mails = Vec::new();
            for email in good {
                let key = secrets::generate_api_key().to_lowercase();
                email_invites::insert(
                    conn,
                    &NewEmailInvite {
                        key: &key,
                        email: &email,
                        referred_by: caller.id,
                        invited_as: request.invite.invite_as.code(),
                        stream_ids: &stream_ids,
                        group_ids: &group_ids,
                        include_realm_default_subscriptions: request
                            .invite
                            .include_realm_default_subscriptions,
                        welcome_message_custom_text: welcome.as_deref(),
                        notify_referrer_on_join: request.notify_referrer_on_join,
                        date_created: created,
                        expiry_date: expiry,
                    },
                )?;
                mails.push(invitation_mail(&ctx2, &name, &caller, &email, &key, expiry));
            }
            events.push(invites_changed(conn, caller.id)?);
            Ok((mails, skipped))
        })
        .await?;
    send_mail(ctx, mails).await;
    if !skipped.is_empty() {
        return Err(invitation_failed(
            "Some of those addresses are already using Zulip, so we didn't send them an \
             invitation. We did send invitations to everyone else!",
            &skipped,
            true,
        )
        .into());
    }
    Ok(())
}

/// The pending email invitation `id` that `caller` manages: its referrer, or an administrator
/// (an owner for invitations of owners). Anything else, or an invitation already used or
/// revoked, reads as "No such invitation".
fn managed_email_invite(conn: &mut DbConn, caller: &User, id: i64) -> ActionResult<EmailInvite> {
    let no_such = || RequestError::bad_request("No such invitation");
    let invite = email_invites::by_id(conn, id)?
        .filter(|i| i.status == email_invites::PENDING)
        .ok_or_else(no_such)?;
    if invite.link.referred_by != caller.id {
        if invite.link.invited_as == Role::Owner.code() && !caller.role.is_owner() {
            return Err(parley_domain::invite::owner_required().into());
        }
        if !caller.role.is_admin() {
            return Err(RequestError::bad_request("Must be an organization administrator").into());
        }
    }
    Ok(invite)
}

/// `DELETE /invites/{invite_id}`: revokes an email invitation; its link stops working.
pub async fn do_revoke_email_invite(ctx: &Context, caller: User, id: i64) -> ActionResult<()> {
    if caller.role.is_guest() {
        return Err(RequestError::guests_not_allowed().into());
    }
    ctx.write(move |conn, events| {
        let invite = managed_email_invite(conn, &caller, id)?;
        email_invites::set_status(conn, id, email_invites::REVOKED)?;
        events.push(invites_changed(conn, invite.link.referred_by)?);
        Ok(())
    })
    .await
}

/// `POST /invites/{invite_id}/resend`: mails a pending, unexpired email invitation again.
pub async fn do_resend_email_invite(ctx: &Context, caller: User, id: i64) -> ActionResult<()> {
    if caller.role.is_guest() {
        return Err(RequestError::guests_not_allowed().into());
    }
    let name = realm_name(ctx).await?;
    let ctx2 = ctx.clone();
    let mail = ctx
        .run(move |conn| {
            let invite = managed_email_invite(conn, &caller, id)?;
            if LinkState::of(false, invite.link.expiry_date, now()) != LinkState::Valid {
                return Err(ActionError::from(RequestError::bad_request(
                    "No such invitation",
                )));
            }
            let referrer = users::by_id(conn, invite.link.referred_by)?.unwrap_or(caller);
            Ok(invitation_mail(
                &ctx2,
                &name,
                &referrer,
                &invite.email,
                &invite.link.key,
                invite.link.expiry_date,
            ))
        })
        .await?;
    let mailer = ctx.mailer.clone();
    tokio::task::spawn_blocking(move || mailer.send(&mail))
        .await
        .map_err(|e| ActionError::Internal(e.to_string()))?
        .map_err(|e| ActionError::Internal(format!("cannot send the invitation mail: {e}")))
}

/// `DELETE /invites/multiuse/{invite_id}`: revokes a link; its creator or an administrator (an
/// owner for links that invite owners) may.
pub async fn do_revoke_multiuse_invite(ctx: &Context, caller: User, id: i64) -> ActionResult<()> {
    if caller.role.is_guest() {
        return Err(RequestError::guests_not_allowed().into());
    }
    ctx.write(move |conn, events| {
        let invite = invites::by_id(conn, id)?
            .ok_or_else(|| RequestError::bad_request("No such invitation"))?;
        if invite.referred_by != caller.id {
            if invite.invited_as == Role::Owner.code() && !caller.role.is_owner() {
                return Err(parley_domain::invite::owner_required().into());
            }
            if !caller.role.is_admin() {
                return Err(
                    RequestError::bad_request("Must be an organization administrator").into(),
                );
            }
        }
        if invite.revoked {
            return Err(RequestError::bad_request("Invitation has already been revoked").into());
        }
        invites::revoke(conn, id)?;
        events.push(invites_changed(conn, invite.referred_by)?);
        Ok(())
    })
    .await
}

/// An account now has `email`: its pending email invitations are revoked (as the reference does
/// whenever an account is created), with `invites_changed` when there were any.
pub(crate) fn revoke_pending_for(
    conn: &mut DbConn,
    events: &mut crate::publish::Events,
    email: &str,
) -> ActionResult<()> {
    let referrers = email_invites::revoke_pending_for(conn, email)?;
    if !referrers.is_empty() {
        events.push(invites_changed_for(conn, &referrers)?);
    }
    Ok(())
}

/// A deactivated account's invitations (email invitations and links) stop working, as the
/// reference's `revoke_invites_generated_by_user`; administrators get `invites_changed`.
pub(crate) fn revoke_invites_by(
    conn: &mut DbConn,
    events: &mut crate::publish::Events,
    referrer: UserId,
) -> ActionResult<()> {
    let revoked =
        email_invites::revoke_pending_by(conn, referrer)? + invites::revoke_by(conn, referrer)?;
    if revoked > 0 {
        events.push(invites_changed_for(conn, &[])?);
    }
    Ok(())
}

/// An invitation found by its key: a reusable link, or an email invitation (whose `link` part
/// holds what the two kinds share).
#[derive(Debug, Clone)]
pub(crate) enum Invitation {
    /// A reusable link.
    Link(MultiuseInvite),
    /// An email invitation.
    Email(EmailInvite),
}

impl Invitation {
    /// What both kinds hold: role, channels, groups, welcome text, referrer.
    pub(crate) fn link(&self) -> &MultiuseInvite {
        match self {
            Invitation::Link(link) => link,
            Invitation::Email(invite) => &invite.link,
        }
    }
}

/// The invitation (reusable link or email invitation) with this key, with whether it may be
/// used now. A used email invitation reads as revoked.
pub(crate) fn link_by_key(
    conn: &mut DbConn,
    key: &str,
) -> ActionResult<Option<(Invitation, LinkState)>> {
    let found = match invites::by_key(conn, key)? {
        Some(link) => Some(Invitation::Link(link)),
        None => email_invites::by_key(conn, key)?.map(Invitation::Email),
    };
    Ok(found.map(|invitation| {
        let link = invitation.link();
        let state = LinkState::of(link.revoked, link.expiry_date, now());
        (invitation, state)
    }))
}

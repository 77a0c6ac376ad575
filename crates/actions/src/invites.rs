//! Reusable invitation links: `POST /invites/multiuse` creates one, `GET /invites` lists the
//! links the caller manages, `DELETE /invites/multiuse/{invite_id}` revokes one. Accepting a
//! link is in [`crate::signup`].

use crate::access::access_channel_by_id;
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::channels::active_users;
use crate::policy::{self, Policy};
use crate::secrets;
use crate::subscriptions::may_add_others;
use crate::time::now;
use parley_domain::groups::GroupId;
use parley_domain::invite::{
    check_invite_as, check_welcome_text, expiry_date, join_url, LinkState,
};
use parley_domain::user::User;
use parley_domain::{ChannelId, RequestError, Role, UserId};
use parley_events::Event;
use parley_storage::invites::{self, MultiuseInvite, NewInvite};
use parley_storage::DbConn;
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
    let mut audience: Vec<UserId> = active_users(conn)?
        .iter()
        .filter(|u| u.role.is_admin())
        .map(|u| u.id)
        .collect();
    if !audience.contains(&creator) {
        audience.push(creator);
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

/// `GET /invites`: the usable (unexpired, unrevoked) links the caller manages: all of them for
/// administrators, their own for others. Guests have none to manage.
pub async fn get_invites(ctx: &Context, caller: User) -> ActionResult<Vec<Value>> {
    if caller.role.is_guest() {
        return Err(RequestError::guests_not_allowed().into());
    }
    let ctx2 = ctx.clone();
    ctx.db
        .run(move |conn| {
            let only = if caller.role.is_admin() {
                None
            } else {
                Some(caller.id)
            };
            let list = invites::usable(conn, only, now())?;
            Ok::<_, ActionError>(list.iter().map(|i| invite_json(&ctx2, i)).collect())
        })
        .await
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

/// A link by its key, with whether it may be used now.
pub(crate) fn link_by_key(
    conn: &mut DbConn,
    key: &str,
) -> ActionResult<Option<(MultiuseInvite, LinkState)>> {
    Ok(invites::by_key(conn, key)?.map(|invite| {
        let state = LinkState::of(invite.revoked, invite.expiry_date, now());
        (invite, state)
    }))
}

//! Signing up through an invitation (`/join/{key}/` and its API twin), a reusable link or a
//! mailed one-use link: the account is created by the ordinary user-creation action, then joins
//! the invitation's channels and groups and receives the Welcome Bot's message; the referrer of
//! an email invitation hears from the Notification Bot when they asked to.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::invites::{invites_changed, link_by_key, Invitation};
use crate::messages_send::{do_send_message, Destination, SendMessage};
use crate::new_subscriptions::subscribe_in_transaction;
use crate::notify::channels::{active_users, People, SubscribeEvents};
use crate::notify::groups::members_changed;
use crate::policy;
use crate::users::{create_user_in, prepare_user, CreateUser, CreatedUser, PreparedUser};
use parley_domain::groups::GroupId;
use parley_domain::invite::{
    welcome_text, LinkState, DEFAULT_WELCOME_TEXT, WELCOME_BOT_EMAIL, WELCOME_BOT_NAME,
};
use parley_domain::message::MessageKind;
use parley_domain::narrow::UserOperand;
use parley_domain::user::User;
use parley_domain::{ChannelId, RequestError, Role, UserId};
use parley_storage::invites::MultiuseInvite;
use parley_storage::{channels, email_invites, groups};

/// What a person types into the sign-up form.
#[derive(Debug, Clone)]
pub struct Signup {
    /// Their email address.
    pub email: String,
    /// Their name.
    pub full_name: String,
    /// Their password.
    pub password: String,
}

fn no_such_link() -> RequestError {
    RequestError::bad_request("Invalid invitation link.")
}

/// The usable link with this key, or why it cannot be used: `BAD_REQUEST` saying the link does
/// not exist, has expired or was revoked.
pub async fn access_invitation_by_key(ctx: &Context, key: String) -> ActionResult<LinkState> {
    ctx.run(move |conn| {
        let (_, state) = link_by_key(conn, &key)?.ok_or_else(no_such_link)?;
        Ok::<_, ActionError>(state)
    })
    .await
}

/// The organization's default welcome text: its `welcome_message_custom_text` setting when the
/// organization has one (a newer reference setting), else the standard greeting.
fn organization_welcome_text(conn: &mut parley_storage::DbConn) -> ActionResult<String> {
    let stored = parley_storage::realms::permissions(conn)?;
    Ok(stored
        .get("welcome_message_custom_text")
        .and_then(|text| serde_json::from_str::<String>(text).ok())
        .filter(|text| !text.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_WELCOME_TEXT.to_owned()))
}

/// Accepts a link: in one transaction, checks the link is still usable, creates the account
/// with the link's role (through [`crate::users::create_user_in`], so it is announced and set up
/// as every new account), subscribed to the default channels only when the link includes them,
/// then gives it the link's channels and groups; afterwards the Welcome Bot's message. A taken
/// address, an expired or revoked link are `BAD_REQUEST`.
pub async fn do_accept_invitation(
    ctx: &Context,
    key: String,
    signup: Signup,
) -> ActionResult<CreatedUser> {
    let PreparedUser { mut new, api_key } = prepare_user(CreateUser {
        email: signup.email,
        full_name: signup.full_name,
        password: Some(signup.password),
        role: Role::Member,
    })?;
    let ctx2 = ctx.clone();
    let (user, invitation, default_text) = ctx
        .write(move |conn, events| {
            let (invitation, state) = link_by_key(conn, &key)?.ok_or_else(no_such_link)?;
            if let Some(msg) = state.message() {
                return Err(ActionError::from(RequestError::bad_request(msg)));
            }
            if let Invitation::Email(invite) = &invitation {
                // The mailed link is for its address only.
                if new.delivery_email != invite.email {
                    return Err(RequestError::invalid_param(
                        "email",
                        format!("This invitation is for {}.", invite.email),
                    )
                    .into());
                }
                email_invites::set_status(conn, invite.link.id, email_invites::USED)?;
                events.push(invites_changed(conn, invite.link.referred_by)?);
            }
            let invite = invitation.link();
            new.role = Role::from_code(invite.invited_as).unwrap_or(Role::Member);
            let user = create_user_in(
                &ctx2,
                conn,
                events,
                &new,
                invite.include_realm_default_subscriptions,
            )?;
            join_channels_and_groups(conn, events, &user, invite)?;
            Ok((user, invitation, organization_welcome_text(conn)?))
        })
        .await?;
    let invite = invitation.link();
    if let Some(text) = welcome_text(invite.welcome_message_custom_text.as_deref(), &default_text) {
        send_welcome(ctx, user.id, text).await?;
    }
    if let Invitation::Email(email_invite) = &invitation {
        if email_invite.notify_referrer_on_join {
            notify_referrer(ctx, invite.referred_by, &user).await?;
        }
    }
    tracing::info!(user_id = %user.id, invite_id = invite.id, "joined through an invitation");
    Ok(CreatedUser { user, api_key })
}

/// The Notification Bot tells the referrer (when still active) that `joined` accepted their
/// invitation, as the reference does.
async fn notify_referrer(ctx: &Context, referrer: UserId, joined: &User) -> ActionResult<()> {
    let (bot, active) = ctx
        .transaction(move |conn| {
            let bot = crate::notices::notification_bot(conn)?;
            let active = parley_storage::users::by_id(conn, referrer)?.is_some_and(|u| u.is_active);
            Ok::<_, ActionError>((bot, active))
        })
        .await?;
    if !active {
        return Ok(());
    }
    do_send_message(
        ctx,
        bot,
        SendMessage {
            kind: MessageKind::Direct,
            to: Destination::Users(vec![UserOperand::Id(referrer.0)]),
            topic: None,
            content: format!(
                "{} accepted your invitation to join Zulip!",
                crate::notices::silent_mention(joined)
            ),
            read_by_sender: Some(true),
            client: "Internal".to_owned(),
            local_echo: None,
        },
    )
    .await?;
    Ok(())
}

/// Adds a new account to the link's channels and groups.
fn join_channels_and_groups(
    conn: &mut parley_storage::DbConn,
    events: &mut crate::publish::Events,
    user: &User,
    invite: &MultiuseInvite,
) -> ActionResult<()> {
    let policy = policy::load(conn)?;
    let people_list = active_users(conn)?;
    let people = People {
        users: &people_list,
        groups: &policy.groups,
    };
    let wanted: Vec<ChannelId> = invite.stream_ids.iter().map(|&id| ChannelId(id)).collect();
    let mut joined = SubscribeEvents::default();
    for channel in channels::by_ids(conn, &wanted)?
        .into_iter()
        .filter(|c| !c.is_archived)
    {
        let added = subscribe_in_transaction(conn, channel.id, std::slice::from_ref(user))?;
        joined.record(conn, people, &channel, &added, false, false)?;
    }
    joined.finish(events);
    // Groups deactivated since the link was made are skipped; the account is new, so it is in
    // none of the groups yet.
    let joined_groups: Vec<i64> = invite
        .group_ids
        .iter()
        .copied()
        .filter(|&id| {
            policy.groups.members.contains_key(&GroupId(id))
                && !policy.groups.deactivated.contains(&GroupId(id))
        })
        .collect();
    for group in joined_groups {
        crate::realm_cache::changing();
        groups::add_members(conn, GroupId(group), &[user.id])?;
        events.push(members_changed(GroupId(group), true, &[user.id]));
    }
    Ok(())
}

/// The Welcome Bot (a system bot, created on first use) sends `text` to the new account.
pub(crate) async fn send_welcome(
    ctx: &Context,
    to: UserId,
    text: String,
) -> ActionResult<parley_domain::MessageId> {
    let bot = ctx
        .transaction(|conn| crate::notices::system_bot(conn, WELCOME_BOT_EMAIL, WELCOME_BOT_NAME))
        .await?;
    let sent = do_send_message(
        ctx,
        bot,
        SendMessage {
            kind: MessageKind::Direct,
            to: Destination::Users(vec![UserOperand::Id(to.0)]),
            topic: None,
            content: text,
            read_by_sender: Some(true),
            client: "Internal".to_owned(),
            local_echo: None,
        },
    )
    .await?;
    Ok(sent.id)
}

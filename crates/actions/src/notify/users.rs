//! Events about people: `realm_user` (a new account and every form of `update`),
//! `custom_profile_fields` (the field definitions), `realm_bot` (bot administration) and the
//! `user_group` membership events that follow role changes and reactivations.
//!
//! Every `realm_user` `update` goes through [`person_update`], which sends it only to the users
//! who can access the changed user ([`users_who_can_access`]).

use super::emit::{to_everyone, to_users};
use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::channels::active_users;
use crate::present;
use parley_domain::groups::GroupId;
use parley_domain::user::{AvatarSource, User};
use parley_domain::{ProfileFieldId, Role, UserId};
use parley_events::Event;
use parley_storage::{users, DbConn};
use parley_wire as wire;
use parley_wire::event::{
    BotId, PersonUpdate, ProfileFieldUpdate, RealmBotEvent, RealmUserEvent, UserGroupEvent,
};
use parley_wire::user::{ProfileData, UserOptions};
use parley_wire::Object;
use std::collections::{BTreeMap, HashSet};

/// `realm_user` `add` for a new account, to every active user: the person as each viewer may
/// see it (the address differs) for those who can access the new user
/// ([`users_who_can_access`]), an "Unknown user" for the others (as the register snapshot shows
/// them), viewers who see the same object sharing one event. As in the reference, `avatar_url` is always filled in (the event cannot know which
/// clients compute Gravatar URLs themselves) and `profile_data` is empty.
pub fn user_created(
    ctx: &Context,
    conn: &mut DbConn,
    created: &User,
    people: &[User],
) -> ActionResult<Vec<Event>> {
    let options = UserOptions {
        client_gravatar: false,
        include_custom_profile_fields: true,
    };
    let with_access: HashSet<UserId> = users_who_can_access(conn, created)?.into_iter().collect();
    // Viewers who may see the address and those who may not each share one event; viewers who
    // cannot access the new user learn only that an unknown user exists (as the reference).
    let mut groups: BTreeMap<u8, (wire::User, Vec<UserId>)> = BTreeMap::new();
    for viewer in people {
        let (key, person) = if with_access.contains(&viewer.id) {
            let person = wire::User::build(
                created,
                Some(viewer),
                options,
                &ctx.realm.host,
                &ctx.realm.url,
                Some(ProfileData::new()),
            );
            (u8::from(person.delivery_email.is_some()), person)
        } else {
            let person =
                wire::User::inaccessible(created, options, &ctx.realm.host, &ctx.realm.url);
            (2, person)
        };
        groups
            .entry(key)
            .or_insert_with(|| (person, Vec::new()))
            .1
            .push(viewer.id);
    }
    Ok(groups
        .into_values()
        .map(|(person, viewers)| {
            to_users(
                viewers,
                wire::Event::RealmUser(RealmUserEvent::Add { person }),
            )
        })
        .collect())
}

/// The active users who can access `target` (the audience of its `realm_user` updates): with
/// `can_access_all_users_group` at its default everyone, and everyone for bots; otherwise the
/// members of that group, the target itself, and the users who share a channel subscription or
/// a direct-message conversation with the target (as the reference decides).
pub fn users_who_can_access(conn: &mut DbConn, target: &User) -> ActionResult<Vec<UserId>> {
    let people = active_users(conn)?;
    let policy = crate::policy::load(conn)?;
    let setting = &policy.realm.can_access_all_users_group;
    let unrestricted = |u: &User| policy.groups.setting_contains(setting, u);
    if target.is_bot() || people.iter().all(unrestricted) {
        return Ok(people.iter().map(|u| u.id).collect());
    }
    let sharing = users::sharing_with(conn, target.id)?;
    Ok(people
        .iter()
        .filter(|u| u.id == target.id || unrestricted(u) || sharing.contains(&u.id))
        .map(|u| u.id)
        .collect())
}

/// `realm_user` `update` with this `person` object (which must hold `user_id` plus the changed
/// fields), to the users who can access `target`. Every form of the update is built here.
pub fn person_update(
    conn: &mut DbConn,
    target: &User,
    person: PersonUpdate,
) -> ActionResult<Event> {
    let audience = users_who_can_access(conn, target)?;
    Ok(to_users(
        audience,
        wire::Event::RealmUser(RealmUserEvent::Update { person }),
    ))
}

/// Full name form: `{user_id, full_name}`.
pub fn full_name_changed(conn: &mut DbConn, target: &User, name: &str) -> ActionResult<Event> {
    person_update(
        conn,
        target,
        PersonUpdate::FullName {
            user_id: target.id,
            full_name: name.to_owned(),
        },
    )
}

/// Avatar form: `{user_id, avatar_url, avatar_source, avatar_url_medium, avatar_version}`, for
/// `target` as it is after the change (new `avatar_source` and `avatar_version`). Avatar upload
/// calls this after storing the new avatar.
pub fn avatar_changed(ctx: &Context, conn: &mut DbConn, target: &User) -> ActionResult<Event> {
    let url = present::users::public_record(ctx, target)
        .avatar_url
        .unwrap_or_default();
    let medium = match target.avatar_source {
        AvatarSource::Uploaded => url.replacen(".png?", "-medium.png?", 1),
        AvatarSource::Gravatar => format!("{url}&s=500"),
    };
    person_update(
        conn,
        target,
        PersonUpdate::Avatar {
            user_id: target.id,
            avatar_source: target.avatar_source.code(),
            avatar_url: url,
            avatar_url_medium: medium,
            avatar_version: target.avatar_version,
        },
    )
}

/// Time zone form: `{user_id, email, timezone}` (`email` is the API address, deprecated).
pub fn timezone_changed(
    ctx: &Context,
    conn: &mut DbConn,
    target: &User,
    zone: &str,
) -> ActionResult<Event> {
    person_update(
        conn,
        target,
        PersonUpdate::Timezone {
            user_id: target.id,
            email: target.api_email(&ctx.realm.host),
            timezone: zone.to_owned(),
        },
    )
}

/// Bot owner form: `{user_id, bot_owner_id}`.
pub fn bot_owner_changed(conn: &mut DbConn, bot: &User, owner: UserId) -> ActionResult<Event> {
    person_update(
        conn,
        bot,
        PersonUpdate::BotOwner {
            user_id: bot.id,
            bot_owner_id: owner,
        },
    )
}

/// Role form: `{user_id, role}`.
pub fn role_changed(conn: &mut DbConn, target: &User, role: Role) -> ActionResult<Event> {
    person_update(
        conn,
        target,
        PersonUpdate::Role {
            user_id: target.id,
            role: role.code(),
        },
    )
}

/// API email form: `{user_id, new_email}`.
pub fn api_email_changed(conn: &mut DbConn, target: &User, email: &str) -> ActionResult<Event> {
    person_update(
        conn,
        target,
        PersonUpdate::Email {
            user_id: target.id,
            new_email: email.to_owned(),
        },
    )
}

/// Activation form: `{user_id, is_active}`.
pub fn activation_changed(
    conn: &mut DbConn,
    target: &User,
    is_active: bool,
) -> ActionResult<Event> {
    person_update(
        conn,
        target,
        PersonUpdate::Activation {
            user_id: target.id,
            is_active,
        },
    )
}

/// Delivery email form, `{user_id, delivery_email}`, to `viewers` only: those who gained access
/// get the address, those who lost it get null. Viewers who cannot access the user are dropped.
pub fn delivery_email_changed(
    conn: &mut DbConn,
    target: &User,
    viewers: Vec<UserId>,
    email: Option<&str>,
) -> ActionResult<Option<Event>> {
    let can_access = users_who_can_access(conn, target)?;
    let viewers: Vec<UserId> = viewers
        .into_iter()
        .filter(|v| can_access.contains(v))
        .collect();
    if viewers.is_empty() {
        return Ok(None);
    }
    let person = PersonUpdate::DeliveryEmail {
        user_id: target.id,
        delivery_email: email.map(str::to_owned),
    };
    Ok(Some(to_users(
        viewers,
        wire::Event::RealmUser(RealmUserEvent::Update { person }),
    )))
}

/// Custom profile field form: `{user_id, custom_profile_field: {id, value, rendered_value?}}`
/// (`rendered_value` only for Markdown-capable types; `value` null when cleared).
pub fn profile_value_changed(
    conn: &mut DbConn,
    target: &User,
    field: ProfileFieldId,
    value: Option<&str>,
    rendered_value: Option<&str>,
) -> ActionResult<Event> {
    person_update(
        conn,
        target,
        PersonUpdate::ProfileField {
            user_id: target.id,
            custom_profile_field: ProfileFieldUpdate {
                id: field,
                value: value.map(str::to_owned),
                rendered_value: rendered_value.map(str::to_owned),
            },
        },
    )
}

/// `custom_profile_fields` with every definition, in display order, to everyone.
pub fn profile_fields_changed(conn: &mut DbConn) -> ActionResult<Event> {
    let fields = present::realm::profile_fields(conn)?;
    Ok(to_everyone(wire::Event::CustomProfileFields { fields }))
}

/// `user_group` `add_members` or `remove_members` of these users, to everyone.
pub fn group_members_changed(group: GroupId, add: bool, user_ids: &[UserId]) -> Event {
    let user_ids = user_ids.to_vec();
    let event = if add {
        UserGroupEvent::AddMembers {
            group_id: group,
            user_ids,
        }
    } else {
        UserGroupEvent::RemoveMembers {
            group_id: group,
            user_ids,
        }
    };
    to_everyone(wire::Event::UserGroup(event))
}

/// The active users who administer a bot: its owner and the organization administrators (the
/// audience of `realm_bot` events).
pub fn bot_administrators(conn: &mut DbConn, bot: &User) -> ActionResult<Vec<UserId>> {
    Ok(active_users(conn)?
        .into_iter()
        .filter(|u| u.role.is_admin() || Some(u.id) == bot.bot_owner_id)
        .map(|u| u.id)
        .collect())
}

/// `realm_bot` `add` with the bot object, to the bot's administrators.
pub fn bot_added(conn: &mut DbConn, bot: &User, object: wire::user::Bot) -> ActionResult<Event> {
    realm_bot_event(conn, bot, RealmBotEvent::Add { bot: object })
}

/// `realm_bot` `update` with `user_id` and the changed properties, to the bot's
/// administrators.
pub fn bot_updated(conn: &mut DbConn, bot: &User, changes: Object) -> ActionResult<Event> {
    realm_bot_event(conn, bot, RealmBotEvent::Update { bot: changes })
}

/// `realm_bot` `delete` (a deactivated bot), to the bot's administrators.
pub fn bot_deleted(conn: &mut DbConn, bot: &User) -> ActionResult<Event> {
    realm_bot_event(
        conn,
        bot,
        RealmBotEvent::Delete {
            bot: BotId { user_id: bot.id },
        },
    )
}

fn realm_bot_event(conn: &mut DbConn, bot: &User, event: RealmBotEvent) -> ActionResult<Event> {
    let audience = bot_administrators(conn, bot)?;
    Ok(to_users(audience, wire::Event::RealmBot(event)))
}

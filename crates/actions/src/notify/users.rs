//! Events about people: `realm_user` (a new account and every form of `update`),
//! `custom_profile_fields` (the field definitions), `realm_bot` (bot administration) and the
//! `user_group` membership events that follow role changes and reactivations.
//!
//! Every `realm_user` `update` goes through [`person_update`], which sends it only to the users
//! who can access the changed user ([`users_who_can_access`]).

use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::channels::active_users;
use parley_domain::groups::{GroupId, SystemGroup};
use parley_domain::user::{AvatarSource, User, UserRecord, UserRecordOptions};
use parley_domain::{ProfileFieldId, Role, UserId};
use parley_events::{Body, Event};
use parley_storage::{profile_fields, users, DbConn};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// `realm_user` `add` for a new account, to every active user. The person is built for each
/// viewer (what they may see of the address differs) and viewers who see the same object share
/// one event. As in the reference, `avatar_url` is always filled in (the event cannot know which
/// clients compute Gravatar URLs themselves) and `profile_data` is empty.
pub fn user_created(ctx: &Context, created: &User, people: &[User]) -> Vec<Event> {
    let options = UserRecordOptions {
        client_gravatar: false,
        include_custom_profile_fields: true,
    };
    let mut groups: BTreeMap<String, (Value, Vec<UserId>)> = BTreeMap::new();
    for viewer in people {
        let record = UserRecord::build(
            created,
            Some(viewer),
            options,
            &ctx.realm.host,
            &ctx.realm.url,
            Some(Map::new()),
        );
        let person = serde_json::to_value(record).unwrap_or(Value::Null);
        let key = person.to_string();
        groups
            .entry(key)
            .or_insert_with(|| (person, Vec::new()))
            .1
            .push(viewer.id);
    }
    groups
        .into_values()
        .map(|(person, viewers)| {
            Event::json(
                viewers,
                json!({"type": "realm_user", "op": "add", "person": person}),
            )
        })
        .collect()
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
pub fn person_update(conn: &mut DbConn, target: &User, person: Value) -> ActionResult<Event> {
    let audience = users_who_can_access(conn, target)?;
    Ok(Event::json(
        audience,
        json!({"type": "realm_user", "op": "update", "person": person}),
    ))
}

/// Full name form: `{user_id, full_name}`.
pub fn full_name_changed(conn: &mut DbConn, target: &User, name: &str) -> ActionResult<Event> {
    person_update(
        conn,
        target,
        json!({"user_id": target.id, "full_name": name}),
    )
}

/// Avatar form: `{user_id, avatar_url, avatar_source, avatar_url_medium, avatar_version}`, for
/// `target` as it is after the change (new `avatar_source` and `avatar_version`). Avatar upload
/// calls this after storing the new avatar.
pub fn avatar_changed(ctx: &Context, conn: &mut DbConn, target: &User) -> ActionResult<Event> {
    let record = UserRecord::build(
        target,
        None,
        UserRecordOptions::default(),
        &ctx.realm.host,
        &ctx.realm.url,
        None,
    );
    let url = record.avatar_url.unwrap_or_default();
    let medium = match target.avatar_source {
        AvatarSource::Uploaded => url.replacen(".png?", "-medium.png?", 1),
        AvatarSource::Gravatar => format!("{url}&s=500"),
    };
    person_update(
        conn,
        target,
        json!({
            "user_id": target.id,
            "avatar_source": target.avatar_source.code(),
            "avatar_url": url,
            "avatar_url_medium": medium,
            "avatar_version": target.avatar_version,
        }),
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
        json!({"user_id": target.id, "email": target.api_email(&ctx.realm.host), "timezone": zone}),
    )
}

/// Bot owner form: `{user_id, bot_owner_id}`.
pub fn bot_owner_changed(conn: &mut DbConn, bot: &User, owner: UserId) -> ActionResult<Event> {
    person_update(conn, bot, json!({"user_id": bot.id, "bot_owner_id": owner}))
}

/// Role form: `{user_id, role}`.
pub fn role_changed(conn: &mut DbConn, target: &User, role: Role) -> ActionResult<Event> {
    person_update(
        conn,
        target,
        json!({"user_id": target.id, "role": role.code()}),
    )
}

/// API email form: `{user_id, new_email}`.
pub fn api_email_changed(conn: &mut DbConn, target: &User, email: &str) -> ActionResult<Event> {
    person_update(
        conn,
        target,
        json!({"user_id": target.id, "new_email": email}),
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
        json!({"user_id": target.id, "is_active": is_active}),
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
    Ok(Some(Event::json(
        viewers,
        json!({"type": "realm_user", "op": "update",
               "person": {"user_id": target.id, "delivery_email": email}}),
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
    let mut data = Map::new();
    data.insert("id".into(), field.0.into());
    data.insert("value".into(), value.into());
    if let Some(rendered) = rendered_value {
        data.insert("rendered_value".into(), rendered.into());
    }
    person_update(
        conn,
        target,
        json!({"user_id": target.id, "custom_profile_field": data}),
    )
}

/// `custom_profile_fields` with every definition, in display order, to everyone.
pub fn profile_fields_changed(conn: &mut DbConn) -> ActionResult<Event> {
    let fields = profile_fields::all(conn)?;
    let fields = serde_json::to_value(&fields).unwrap_or(Value::Array(Vec::new()));
    Ok(Event::everyone(Body::json(json!({
        "type": "custom_profile_fields",
        "fields": fields,
    }))))
}

/// The system group whose direct member a user of this role is, as the register snapshot lists
/// system groups (members are direct members of `role:fullmembers`).
pub fn role_system_group(role: Role) -> SystemGroup {
    match role {
        Role::Member => SystemGroup::FullMembers,
        other => SystemGroup::for_role(other),
    }
}

/// `user_group` `add_members` or `remove_members` of these users, to everyone.
pub fn group_members_changed(group: GroupId, add: bool, user_ids: &[UserId]) -> Event {
    let op = if add { "add_members" } else { "remove_members" };
    Event::everyone(Body::json(json!({
        "type": "user_group", "op": op, "group_id": group, "user_ids": user_ids,
    })))
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

/// `realm_bot` with this op and `bot` object, to the bot's administrators.
pub fn realm_bot_event(
    conn: &mut DbConn,
    bot: &User,
    op: &str,
    body: Value,
) -> ActionResult<Event> {
    let audience = bot_administrators(conn, bot)?;
    Ok(Event::json(
        audience,
        json!({"type": "realm_bot", "op": op, "bot": body}),
    ))
}

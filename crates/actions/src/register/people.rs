//! The people part of a snapshot: users, the caller's own account, groups, bots and profile
//! fields.

use super::input::{put, Snapshot, SnapshotInput, Wanted};
use crate::error::ActionResult;
use crate::present;
use crate::present::users::records;
use parley_domain::user::User;
use parley_domain::Role;
use parley_storage::{users, DbConn};
use parley_wire as wire;
use parley_wire::user::{CrossRealmBot, UserOptions};
use serde_json::json;

/// Fills `realm_users` and the caller's own fields (`realm_user`), `realm_user_groups` and
/// `custom_profile_fields`.
pub(super) fn fill(
    input: &SnapshotInput<'_>,
    wanted: &Wanted,
    conn: &mut DbConn,
    out: &mut Snapshot,
) -> ActionResult<()> {
    if wanted.wants("realm_user") {
        let everyone = input.everyone(conn)?;
        realm_users(input, conn, everyone, out)?;
    }
    if wanted.wants("realm_user_groups") {
        let everyone = input.everyone(conn)?;
        let mut list = present::groups::group_objects(conn, &input.policy.groups, everyone)?;
        if !input.request.client_capabilities.include_deactivated_groups {
            list.retain(|g| !g.deactivated);
        }
        put(out, "realm_user_groups", list);
    }
    if wanted.wants("realm_bot") {
        let everyone = input.everyone(conn)?;
        let bots = crate::bots::realm_bots(input.ctx, conn, input.user, everyone)?;
        put(out, "realm_bots", bots);
    }
    if wanted.wants("custom_profile_fields") {
        put(
            out,
            "custom_profile_fields",
            present::realm::profile_fields(conn)?,
        );
        put(
            out,
            "custom_profile_field_types",
            wire::realm::profile_field_types(),
        );
    }
    Ok(())
}

fn realm_users(
    input: &SnapshotInput<'_>,
    conn: &mut DbConn,
    everyone: &[User],
    out: &mut Snapshot,
) -> ActionResult<()> {
    let me = input.user;
    let options = UserOptions {
        client_gravatar: input.request.client_gravatar,
        include_custom_profile_fields: true,
    };
    let all = records(input.ctx, conn, input.policy, me, everyone, options)?;
    let (active, inactive): (Vec<_>, Vec<_>) = all.into_iter().partition(|r| r.is_active);
    put(out, "realm_users", active);
    put(out, "realm_non_active_users", inactive);
    let bots = users::system_bots(conn)?;
    let bot_options = UserOptions {
        client_gravatar: input.request.client_gravatar,
        include_custom_profile_fields: false,
    };
    let (host, url) = (&input.ctx.realm.host, &input.ctx.realm.url);
    let bot_records: Vec<CrossRealmBot> = bots
        .iter()
        .map(|bot| CrossRealmBot {
            user: wire::User::build(bot, Some(me), bot_options, host, url, None),
            is_system_bot: true,
        })
        .collect();
    put(out, "cross_realm_bots", bot_records);
    let own = wire::User::build(me, Some(me), UserOptions::default(), host, url, None);
    let groups = &input.policy.groups;
    let realm = &input.policy.realm;
    let can = |setting| groups.setting_contains(setting, me);
    let avatar = own.avatar_url.clone();
    let fields = [
        ("user_id", json!(me.id)),
        ("email", json!(own.email)),
        ("delivery_email", json!(me.delivery_email)),
        ("full_name", json!(me.full_name)),
        ("avatar_source", json!(me.avatar_source.code())),
        ("avatar_url", json!(avatar)),
        ("avatar_url_medium", json!(avatar)),
        ("is_admin", json!(me.role.is_admin())),
        ("is_owner", json!(me.role.is_owner())),
        ("is_moderator", json!(me.role == Role::Moderator)),
        ("is_guest", json!(me.role.is_guest())),
        (
            "can_create_public_streams",
            json!(can(&realm.can_create_public_channel_group)),
        ),
        (
            "can_create_private_streams",
            json!(can(&realm.can_create_private_channel_group)),
        ),
        (
            "can_create_web_public_streams",
            json!(can(&realm.can_create_web_public_channel_group)),
        ),
        (
            "can_create_streams",
            json!(
                can(&realm.can_create_public_channel_group)
                    || can(&realm.can_create_private_channel_group)
            ),
        ),
        (
            "can_subscribe_other_users",
            json!(can(&realm.can_add_subscribers_group)),
        ),
        ("can_invite_others_to_realm", json!(me.role.is_admin())),
    ];
    for (key, value) in fields {
        out.insert(key.into(), value);
    }
    Ok(())
}

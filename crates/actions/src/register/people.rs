//! The people part of a snapshot: users, the caller's own account, groups, bots and profile
//! fields.

use super::{SnapshotInput, Wanted};
use crate::error::ActionResult;
use crate::users::records;
use parley_domain::user::{User, UserRecordOptions};
use parley_domain::Role;
use parley_storage::{users, DbConn};
use serde_json::{json, Map, Value};

/// Fills `realm_users` and the caller's own fields (`realm_user`), `realm_user_groups` and
/// `custom_profile_fields`.
pub(super) fn fill(
    input: &SnapshotInput<'_>,
    wanted: &Wanted,
    conn: &mut DbConn,
    out: &mut Map<String, Value>,
) -> ActionResult<()> {
    let everyone = users::all(conn)?;
    if wanted.wants("realm_user") {
        realm_users(input, conn, &everyone, out)?;
    }
    if wanted.wants("realm_user_groups") {
        let mut list = super::groups_state::group_objects(conn, &input.policy.groups, &everyone)?;
        if !input.request.client_capabilities.include_deactivated_groups {
            list.retain(|g| g["deactivated"] != true);
        }
        out.insert("realm_user_groups".into(), Value::Array(list));
    }
    if wanted.wants("realm_bot") {
        let bots = crate::bots::realm_bots(input.ctx, conn, input.user)?;
        out.insert("realm_bots".into(), bots);
    }
    if wanted.wants("custom_profile_fields") {
        let fields = parley_storage::profile_fields::all(conn)?;
        out.insert(
            "custom_profile_fields".into(),
            serde_json::to_value(&fields).unwrap_or(Value::Array(Vec::new())),
        );
        out.insert(
            "custom_profile_field_types".into(),
            parley_domain::profile_field::field_types_json(),
        );
    }
    Ok(())
}

fn realm_users(
    input: &SnapshotInput<'_>,
    conn: &mut DbConn,
    everyone: &[User],
    out: &mut Map<String, Value>,
) -> ActionResult<()> {
    let me = input.user;
    let options = UserRecordOptions {
        client_gravatar: input.request.client_gravatar,
        include_custom_profile_fields: true,
    };
    let all = records(input.ctx, conn, me, everyone.to_vec(), options)?;
    let (active, inactive): (Vec<_>, Vec<_>) = all.into_iter().partition(|r| r.is_active);
    let to_json = |list: Vec<parley_domain::user::UserRecord>| {
        serde_json::to_value(list).unwrap_or(Value::Array(Vec::new()))
    };
    out.insert("realm_users".into(), to_json(active));
    out.insert("realm_non_active_users".into(), to_json(inactive));
    let bots = users::system_bots(conn)?;
    let bot_records: Vec<Value> = bots
        .iter()
        .map(|bot| {
            let mut record = serde_json::to_value(parley_domain::user::UserRecord::build(
                bot,
                Some(me),
                UserRecordOptions {
                    client_gravatar: input.request.client_gravatar,
                    include_custom_profile_fields: false,
                },
                &input.ctx.realm.host,
                &input.ctx.realm.url,
                None,
            ))
            .unwrap_or(Value::Null);
            if let Value::Object(map) = &mut record {
                map.insert("is_system_bot".into(), true.into());
            }
            record
        })
        .collect();
    out.insert("cross_realm_bots".into(), Value::Array(bot_records));
    let own = parley_domain::user::UserRecord::build(
        me,
        Some(me),
        UserRecordOptions {
            client_gravatar: false,
            include_custom_profile_fields: false,
        },
        &input.ctx.realm.host,
        &input.ctx.realm.url,
        None,
    );
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
        ("is_billing_admin", json!(false)),
        ("user_role", json!(me.role.code())),
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

//! Users as a viewer sees them: their User objects, with profile data and the rules for users
//! the viewer may not access.

use crate::context::Context;
use crate::policy::Policy;
use parley_domain::user::User;
use parley_domain::UserId;
use parley_storage::{profile_fields, users, DbConn, StorageError};
use parley_wire as wire;
use parley_wire::user::{ProfileData, ProfileValue, UserOptions};
use std::collections::{HashMap, HashSet};

/// The `profile_data` of these users (all when None), keyed by user then by field ID.
pub fn profile_data_of(
    conn: &mut DbConn,
    ids: Option<&[UserId]>,
) -> Result<HashMap<UserId, ProfileData>, StorageError> {
    let mut data: HashMap<UserId, ProfileData> = HashMap::new();
    for value in profile_fields::values_of(conn, ids)? {
        data.entry(value.user_id).or_default().insert(
            value.field_id.0.to_string(),
            ProfileValue {
                value: value.value,
                rendered_value: value.rendered_value,
            },
        );
    }
    Ok(data)
}

/// `targets` as `viewer` sees them under `policy`; users the viewer may not access are
/// "Unknown user".
pub fn records(
    ctx: &Context,
    conn: &mut DbConn,
    policy: &Policy,
    viewer: &User,
    targets: &[User],
    options: UserOptions,
) -> Result<Vec<wire::User>, StorageError> {
    let mut profile_data = if options.include_custom_profile_fields {
        let ids: Vec<UserId> = targets.iter().map(|u| u.id).collect();
        profile_data_of(conn, Some(&ids))?
    } else {
        HashMap::new()
    };
    let accessible = accessible_users(conn, policy, viewer)?;
    let (host, url) = (&ctx.realm.host, &ctx.realm.url);
    Ok(targets
        .iter()
        .map(|target| {
            if accessible
                .as_ref()
                .is_some_and(|set| !target.is_bot() && !set.contains(&target.id))
            {
                return wire::User::inaccessible(target, options, host, url);
            }
            wire::User::build(
                target,
                Some(viewer),
                options,
                host,
                url,
                profile_data.remove(&target.id),
            )
        })
        .collect())
}

/// The users `viewer` may know about when `can_access_all_users_group` does not hold them
/// (themselves and those sharing a channel or a direct-message conversation with them; bots are
/// always accessible), or None when they may know about everyone.
fn accessible_users(
    conn: &mut DbConn,
    policy: &Policy,
    viewer: &User,
) -> Result<Option<HashSet<UserId>>, StorageError> {
    if policy
        .groups
        .setting_contains(&policy.realm.can_access_all_users_group, viewer)
    {
        return Ok(None);
    }
    let mut set = users::sharing_with(conn, viewer.id)?;
    set.insert(viewer.id);
    Ok(Some(set))
}

/// A user as everyone sees them without profile data and with Gravatar URLs filled in (events
/// cannot know which clients compute Gravatar URLs themselves).
pub fn public_record(ctx: &Context, target: &User) -> wire::User {
    wire::User::build(
        target,
        None,
        UserOptions::default(),
        &ctx.realm.host,
        &ctx.realm.url,
        None,
    )
}

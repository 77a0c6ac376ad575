//! Full membership over time: members whose account is older than the organization's
//! `waiting_period_threshold` (days) are in `role:fullmembers`, newer ones only in
//! `role:members`. The reference recomputes this; Parley keeps the cutoff last announced
//! (`storage::groups::FULL_MEMBER_CUTOFF`), which every permission check and snapshot uses, and
//! moves it forward from the scheduler (every [`CHECK_EVERY_TICKS`] ticks) and when
//! `PATCH /realm` changes the threshold, announcing who moved with `user_group` events.

use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::channels::active_users;
use crate::notify::users::group_members_changed;
use crate::publish::Events;
use parley_domain::groups::{full_member_cutoff, GroupGraph, SystemGroup};
use parley_domain::UserId;
use parley_storage::groups::{self, FULL_MEMBER_CUTOFF};
use parley_storage::{realms, DbConn};

/// The scheduler moves the cutoff every this many of its ticks (about a minute).
pub const CHECK_EVERY_TICKS: u32 = 12;

/// Moves the full-membership cutoff to what `now` and the stored threshold give: members who
/// became full members (or, after the threshold grew, stopped being) leave one system group for
/// the other, announced to everyone as `remove_members` then `add_members`. Inside an action's
/// transaction; `before` is the graph as clients last learned it.
pub(crate) fn move_cutoff(
    conn: &mut DbConn,
    events: &mut Events,
    before: &GroupGraph,
    now: i64,
) -> ActionResult<usize> {
    let threshold = groups::waiting_period_threshold(conn)?;
    let cutoff = full_member_cutoff(threshold, now);
    crate::realm_cache::changing();
    match cutoff {
        Some(at) => realms::set_permission(conn, FULL_MEMBER_CUTOFF, &at.to_string())?,
        None => realms::set_permission(conn, FULL_MEMBER_CUTOFF, "")?,
    }
    let after = GroupGraph {
        full_member_cutoff: cutoff,
        ..before.clone()
    };
    let people = active_users(conn)?;
    let (mut promoted, mut demoted): (Vec<UserId>, Vec<UserId>) = (Vec::new(), Vec::new());
    for user in &people {
        match (before.is_full_member(user), after.is_full_member(user)) {
            (false, true) => promoted.push(user.id),
            (true, false) => demoted.push(user.id),
            _ => {}
        }
    }
    let (Some(members), Some(full)) = (
        before.system_id(SystemGroup::Members),
        before.system_id(SystemGroup::FullMembers),
    ) else {
        return Ok(0);
    };
    if !promoted.is_empty() {
        events.push(group_members_changed(members, false, &promoted));
        events.push(group_members_changed(full, true, &promoted));
        tracing::info!(count = promoted.len(), "members became full members");
    }
    if !demoted.is_empty() {
        events.push(group_members_changed(full, false, &demoted));
        events.push(group_members_changed(members, true, &demoted));
    }
    Ok(promoted.len() + demoted.len())
}

/// Moves the cutoff to `now` (see [`move_cutoff`]); returns how many members changed group.
/// Nothing is written while the organization has no waiting period and none was announced.
pub async fn do_update_full_members(ctx: &Context, now: i64) -> ActionResult<usize> {
    ctx.write(move |conn, events| {
        let before = groups::graph(conn)?;
        if before.full_member_cutoff.is_none() && groups::waiting_period_threshold(conn)? <= 0 {
            return Ok(0);
        }
        move_cutoff(conn, events, &before, now)
    })
    .await
}

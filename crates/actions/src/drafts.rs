//! Drafts synchronized between a person's clients (`/drafts`). Only their owner sees them, and
//! only while the owner's `enable_drafts_synchronization` setting is on: turning it off deletes
//! them ([`delete_all_drafts`]) and refuses every draft endpoint.

use crate::access::{access_channel_by_id, users_by_ids};
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::personal::{draft_removed, draft_updated, drafts_added};
use crate::policy::{self, Policy};
use crate::present::personal::draft as draft_object;
use crate::time::now;
use crate::user_settings;
use parley_domain::draft::{parse_draft, DraftInput, DraftType};
use parley_domain::user::User;
use parley_domain::{ChannelId, RequestError, UserId};
use parley_storage::drafts::{self, DraftFields};
use parley_storage::{DbConn, StorageError};
use serde_json::Value;

/// The most drafts a register snapshot carries (the most recently edited ones).
pub const MAX_DRAFTS_IN_SNAPSHOT: i64 = 1000;

const SETTING: &str = "enable_drafts_synchronization";

fn not_found() -> RequestError {
    RequestError::bad_request("Draft does not exist").with_status(404)
}

/// Refuses drafts of a person who turned synchronization off.
fn check_enabled(conn: &mut DbConn, user: &User) -> ActionResult<()> {
    if user_settings::flag(conn, user, SETTING)? {
        Ok(())
    } else {
        Err(RequestError::bad_request("User has disabled synchronizing drafts.").into())
    }
}

/// Checks a draft's recipients against the database: the channel of a channel draft must be
/// one the author may access, the users of a direct draft active users. Returns what to store.
fn validate(
    conn: &mut DbConn,
    policy: &mut Option<std::sync::Arc<Policy>>,
    user: &User,
    input: DraftInput,
    var_name: &str,
    now: i64,
) -> ActionResult<DraftFields> {
    match input.draft_type {
        DraftType::Channel => {
            let policy = match policy {
                Some(policy) => policy,
                None => policy.insert(policy::load(conn)?),
            };
            let channel = ChannelId(input.to[0]);
            access_channel_by_id(conn, policy, user, channel).map_err(|err| match err {
                ActionError::Request(_) => {
                    RequestError::invalid_param(var_name, "Invalid channel ID").into()
                }
                other => other,
            })?;
        }
        DraftType::Direct => {
            let ids: Vec<UserId> = input.to.iter().copied().map(UserId).collect();
            users_by_ids(conn, &ids, var_name)?;
        }
        DraftType::Unaddressed => {}
    }
    Ok(DraftFields {
        draft_type: input.draft_type.api_name().to_owned(),
        to: input.to,
        topic: input.topic,
        content: input.content,
        last_edit_time: input.timestamp.unwrap_or(now),
    })
}

/// `GET /drafts`: the caller's drafts, least recently edited first.
pub async fn get_drafts(
    ctx: &Context,
    user: User,
) -> ActionResult<Vec<parley_wire::personal::Draft>> {
    ctx.run(move |conn| {
        check_enabled(conn, &user)?;
        Ok(drafts::of_user(conn, user.id, false, i64::MAX)?
            .iter()
            .map(draft_object)
            .collect())
    })
    .await
}

/// `POST /drafts`: creates drafts, all or none; returns their IDs in the order sent.
pub async fn do_create_drafts(
    ctx: &Context,
    user: User,
    list: Vec<Value>,
) -> ActionResult<Vec<i64>> {
    ctx.write(move |conn, events| {
        check_enabled(conn, &user)?;
        let now = now();
        let mut policy = None;
        let mut fields = Vec::with_capacity(list.len());
        for (i, value) in list.iter().enumerate() {
            let input = parse_draft(value, "drafts", &format!("drafts[{i}]"), user.id)?;
            fields.push(validate(conn, &mut policy, &user, input, "drafts", now)?);
        }
        let created = fields
            .iter()
            .map(|f| drafts::insert(conn, user.id, f))
            .collect::<Result<Vec<_>, StorageError>>()?;
        if !created.is_empty() {
            events.push(drafts_added(user.id, &created));
        }
        Ok(created.iter().map(|d| d.id).collect())
    })
    .await
}

/// `PATCH /drafts/{draft_id}`: replaces a draft of the caller.
pub async fn do_edit_draft(
    ctx: &Context,
    user: User,
    draft_id: i64,
    draft: Value,
) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        check_enabled(conn, &user)?;
        if drafts::get(conn, user.id, draft_id)?.is_none() {
            return Err(not_found().into());
        }
        let input = parse_draft(&draft, "draft", "draft", user.id)?;
        let fields = validate(conn, &mut None, &user, input, "draft", now())?;
        drafts::update(conn, user.id, draft_id, &fields)?;
        let stored = drafts::get(conn, user.id, draft_id)?.ok_or_else(not_found)?;
        events.push(draft_updated(user.id, &stored));
        Ok(())
    })
    .await
}

/// `DELETE /drafts/{draft_id}`: deletes a draft of the caller.
pub async fn do_delete_draft(ctx: &Context, user: User, draft_id: i64) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        check_enabled(conn, &user)?;
        if !drafts::delete(conn, user.id, draft_id)? {
            return Err(not_found().into());
        }
        events.push(draft_removed(user.id, draft_id));
        Ok(())
    })
    .await
}

/// Deletes every draft of a person, without events: called in the settings transaction when
/// `enable_drafts_synchronization` turns off (clients keep their drafts locally then).
pub fn delete_all_drafts(conn: &mut DbConn, user: UserId) -> Result<(), StorageError> {
    drafts::delete_all(conn, user)?;
    Ok(())
}

/// The snapshot's `drafts`: the most recently edited first, none while synchronization is off.
pub(crate) fn snapshot(
    conn: &mut DbConn,
    user: &User,
) -> ActionResult<Vec<parley_wire::personal::Draft>> {
    if !user_settings::flag(conn, user, SETTING)? {
        return Ok(Vec::new());
    }
    Ok(
        drafts::of_user(conn, user.id, true, MAX_DRAFTS_IN_SNAPSHOT)?
            .iter()
            .map(draft_object)
            .collect(),
    )
}

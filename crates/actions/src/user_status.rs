//! People's statuses: setting one's own (`POST /users/me/status`), an administrator setting
//! someone else's (`POST /users/{user_id}/status`), reading one (`GET /users/{user_id}/status`),
//! and the snapshot's `user_status`.

use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::people::status_changed;
use crate::time::now;
use parley_domain::user::User;
use parley_domain::user_status::{check_status_request, EmojiSet, StatusChange, StatusRequest};
use parley_domain::{RequestError, UserId};
use parley_storage::user_status::{self as stored, StatusUpdate, UserStatus};
use parley_storage::{users, DbConn};
use serde_json::{Map, Value};

/// The Unicode emoji the Markdown renderer knows.
struct UnicodeEmoji;

impl EmojiSet for UnicodeEmoji {
    fn code_for_name(&self, name: &str) -> Option<String> {
        parley_markdown::emoji_code_for_name(name)
    }

    fn is_code(&self, code: &str) -> bool {
        parley_markdown::is_emoji_code(code)
    }
}

/// A status as the API shows it: only the parts that are set.
fn status_object(status: &UserStatus) -> Map<String, Value> {
    let mut out = Map::new();
    if !status.status_text.is_empty() {
        out.insert("status_text".into(), status.status_text.clone().into());
    }
    if !status.emoji_name.is_empty() {
        out.insert("emoji_name".into(), status.emoji_name.clone().into());
        out.insert("emoji_code".into(), status.emoji_code.clone().into());
        out.insert("reaction_type".into(), status.reaction_type.clone().into());
    }
    out
}

fn human_only(user: &User) -> Result<(), RequestError> {
    if user.is_bot() {
        return Err(RequestError::bad_request(
            "This endpoint does not accept bot requests.",
        ));
    }
    Ok(())
}

/// Finds a person whose status may be read or set: an active human of the organization.
fn access_target(conn: &mut DbConn, id: UserId) -> ActionResult<User> {
    let target = users::by_id(conn, id)?
        .filter(|u| !u.is_bot())
        .ok_or_else(|| RequestError::bad_request("No such user"))?;
    if !target.is_active {
        return Err(RequestError::bad_request("User is deactivated").into());
    }
    Ok(target)
}

/// Checks and stores a change of `target`'s status, and tells every active user.
async fn update_status(
    ctx: &Context,
    actor: User,
    target: Option<UserId>,
    request: StatusRequest,
) -> ActionResult<()> {
    human_only(&actor)?;
    ctx.write(move |conn, events| {
        let target = match target {
            None => actor.id,
            Some(id) => {
                let target = access_target(conn, id)?;
                if !actor.role.is_admin() {
                    return Err(RequestError::insufficient_permission().into());
                }
                target.id
            }
        };
        let emoji = crate::realm_emoji::EmojiWithCustom::load(conn, &UnicodeEmoji)?;
        let change = check_status_request(&emoji, request)?;
        if change.is_empty() {
            // Only the deprecated `away` was sent: nothing Parley stores changes.
            return Ok(());
        }
        stored::update(conn, target, &to_update(&change), now())?;
        let audience: Vec<UserId> = users::all(conn)?
            .into_iter()
            .filter(|u| u.is_active)
            .map(|u| u.id)
            .collect();
        events.push(status_changed(target, &change, audience));
        Ok(())
    })
    .await
}

fn to_update(change: &StatusChange) -> StatusUpdate {
    StatusUpdate {
        status_text: change.status_text.clone(),
        emoji: change
            .emoji
            .as_ref()
            .map(|e| (e.name.clone(), e.code.clone(), e.reaction_type.clone())),
    }
}

/// `POST /users/me/status`: changes the parts of the caller's status that were sent.
pub async fn do_update_own_status(
    ctx: &Context,
    user: User,
    request: StatusRequest,
) -> ActionResult<()> {
    update_status(ctx, user, None, request).await
}

/// `POST /users/{user_id}/status`: an administrator changes someone's status. Others get
/// "Insufficient permission"; bots and unknown people are "No such user".
pub async fn do_update_user_status(
    ctx: &Context,
    actor: User,
    target: UserId,
    request: StatusRequest,
) -> ActionResult<()> {
    update_status(ctx, actor, Some(target), request).await
}

/// `GET /users/{user_id}/status`: a person's status (`{}` when none is set).
pub async fn get_user_status(
    ctx: &Context,
    _viewer: User,
    target: UserId,
) -> ActionResult<Map<String, Value>> {
    ctx.run(move |conn| {
        let target = access_target(conn, target)?;
        Ok(stored::get(conn, target.id)?
            .map(|s| status_object(&s))
            .unwrap_or_default())
    })
    .await
}

/// The snapshot's `user_status`: user ID (as a string) → status, for active people with one.
pub(crate) fn snapshot(conn: &mut DbConn) -> ActionResult<Value> {
    let mut out = Map::new();
    for status in stored::all_active(conn)? {
        out.insert(
            status.user_id.to_string(),
            Value::Object(status_object(&status)),
        );
    }
    Ok(Value::Object(out))
}

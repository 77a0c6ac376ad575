//! Deleting messages.

use crate::context::Context;
use crate::error::ActionResult;
use crate::messages_read::{accessible_message, invalid_message};
use crate::policy;
use crate::time::now;
use parley_domain::user::User;
use parley_domain::{ChannelId, MessageId, RequestError};
use parley_storage::{channels, messages};

/// Grace the reference adds to time limits, for clients whose clocks lag.
pub const TIME_LIMIT_GRACE_SECONDS: i64 = 20;

/// `DELETE /messages/{message_id}`: whoever may delete any message (organization or channel
/// setting) always may; others only their own messages, with the own-message permission, within
/// the organization's time limit.
pub async fn delete_message(ctx: &Context, user: User, id: MessageId) -> ActionResult<()> {
    ctx.db
        .transaction(move |conn| {
            let policy = policy::load(conn)?;
            let message =
                accessible_message(conn, &policy, &user, id)?.ok_or_else(invalid_message)?;
            let channel = match message.row.channel_id {
                Some(c) => channels::by_id(conn, ChannelId(c))?,
                None => None,
            };
            let groups = &policy.groups;
            let any = groups.setting_contains(&policy.realm.can_delete_any_message_group, &user)
                || channel.as_ref().is_some_and(|c| {
                    groups.setting_contains(&c.permissions.can_delete_any_message_group, &user)
                });
            if !any {
                let denied = || {
                    RequestError::bad_request("You don't have permission to delete this message")
                };
                if message.row.sender_id != user.id.0 {
                    return Err(denied().into());
                }
                let own = groups
                    .setting_contains(&policy.realm.can_delete_own_message_group, &user)
                    || channel.as_ref().is_some_and(|c| {
                        groups.setting_contains(&c.permissions.can_delete_own_message_group, &user)
                    });
                if !own {
                    return Err(denied().into());
                }
                if let Some(limit) = policy.realm.message_content_delete_limit_seconds {
                    if now() - message.row.date_sent > limit + TIME_LIMIT_GRACE_SECONDS {
                        return Err(RequestError::bad_request(
                            "The time limit for deleting this message has passed",
                        )
                        .into());
                    }
                }
            }
            if messages::delete(conn, &[id])? == 0 {
                return Err(RequestError::bad_request("Message already deleted").into());
            }
            Ok(())
        })
        .await
}

//! A channel's incoming-email address (`GET /streams/{stream_id}/email_address`). Parley runs no
//! incoming-email gateway, so, like a reference server without `EMAIL_GATEWAY_PATTERN`, it
//! answers an empty address after the same access checks.

use crate::access::access_channel_by_id;
use crate::bots::access_bot;
use crate::context::Context;
use crate::error::ActionResult;
use crate::policy;
use parley_domain::user::User;
use parley_domain::{ChannelId, UserId};

/// `GET /streams/{stream_id}/email_address`: the address messages mailed to `channel` would
/// arrive through, as `sender` (the caller, or a bot the caller administers; by default the
/// email gateway bot). Channels the caller may not see fail as "Invalid channel ID". Always
/// `""`: no gateway is configured.
pub async fn channel_email_address(
    ctx: &Context,
    caller: User,
    channel: ChannelId,
    sender: Option<UserId>,
) -> ActionResult<String> {
    ctx.run(move |conn| {
        let policy = policy::load(conn)?;
        access_channel_by_id(conn, &policy, &caller, channel)?;
        if let Some(sender) = sender.filter(|id| *id != caller.id) {
            access_bot(conn, &caller, sender)?;
        }
        Ok::<_, crate::error::ActionError>(String::new())
    })
    .await
}

//! Trying out the organization's Welcome Bot message
//! (`POST /realm/test_welcome_bot_custom_message`): an administrator receives the text they are
//! drafting from the Welcome Bot, exactly as a new member would.

use crate::context::Context;
use crate::error::ActionResult;
use parley_domain::invite::check_welcome_text;
use parley_domain::user::User;
use parley_domain::{MessageId, RequestError};

/// `POST /realm/test_welcome_bot_custom_message`: the Welcome Bot sends `text` to `caller` as a
/// direct message; answers its ID. Administrators only; the text may not be empty or longer
/// than 8000 characters.
pub async fn send_test_welcome_message(
    ctx: &Context,
    caller: User,
    text: String,
) -> ActionResult<MessageId> {
    if !caller.role.is_admin() {
        return Err(RequestError::admin_required().into());
    }
    check_welcome_text(&text)?;
    if text.is_empty() {
        return Err(RequestError::bad_request("Message must not be empty").into());
    }
    crate::signup::send_welcome(ctx, caller.id, text).await
}

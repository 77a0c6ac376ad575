//! Push device registration (`POST /mobile_push/register`). Registrations are kept for the push
//! notification service the server is configured with; without one the endpoint answers
//! `PUSH_SERVICE_NOT_CONFIGURED`, as the reference does. Parley sends no pushes itself.

use crate::context::Context;
use crate::error::ActionResult;
use crate::time::now;
use parley_domain::push::{check_registration, PushDevice};
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError};
use parley_storage::push_devices;

pub use crate::context::PushConfig;

/// `PUSH_SERVICE_NOT_CONFIGURED` (400).
pub fn not_configured() -> RequestError {
    RequestError::new(
        ErrorCode::PushServiceNotConfigured,
        "Server is not configured to use push notification service.",
    )
}

/// Whether push notifications are available (`push_notifications_enabled`).
pub fn push_enabled(ctx: &Context) -> bool {
    ctx.push.is_some()
}

/// `POST /mobile_push/register`: stores `user`'s device registration, replacing an earlier one
/// with the same `push_account_id`. Fails when no push service is configured or a key or the
/// payload is not standard base64.
pub async fn do_register_push_device(
    ctx: &Context,
    user: User,
    device: PushDevice,
) -> ActionResult<()> {
    if ctx.push.is_none() {
        return Err(not_configured().into());
    }
    check_registration(&device)?;
    let device = PushDevice {
        user_id: user.id,
        ..device
    };
    ctx.write(move |conn, _events| {
        push_devices::replace(conn, &device, now())?;
        Ok(())
    })
    .await
}

/// A user's stored registrations (for the push service and tests).
pub async fn get_push_devices(ctx: &Context, user: User) -> ActionResult<Vec<PushDevice>> {
    let id = user.id;
    ctx.db
        .run(move |conn| Ok(push_devices::of_user(conn, id)?))
        .await
}

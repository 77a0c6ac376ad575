//! Push notification devices: `POST /mobile_push/register`.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::Params;
use actix_web::web;
use parley_actions::push_devices;
use parley_actions::Context;
use parley_domain::push::{PushDevice, TokenKind};

params! {
    /// `POST /mobile_push/register`: every parameter is required.
    pub struct RegisterPushParams {
        token_kind: String,
        push_account_id: i64,
        push_public_key: String,
        bouncer_public_key: String,
        encrypted_push_registration: String,
    }
}

/// POST /mobile_push/register — register a device for end-to-end encrypted push notifications.
pub async fn register(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<RegisterPushParams>,
) -> ApiResult<Success> {
    let device = PushDevice {
        user_id: me.id,
        push_account_id: p.push_account_id,
        token_kind: TokenKind::parse(&p.token_kind)?,
        push_public_key: p.push_public_key,
        bouncer_public_key: p.bouncer_public_key,
        encrypted_push_registration: p.encrypted_push_registration,
    };
    push_devices::do_register_push_device(&ctx, me, device).await?;
    Ok(Success::empty())
}

//! Push notification devices: registration (`POST /mobile_push/register`, the legacy token
//! endpoints) and test notifications.

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

params! {
    /// `POST /users/me/apns_device_token`.
    pub struct AddApnsParams {
        token: String,
        appid: String,
    }
}

/// POST /users/me/apns_device_token — register an iOS device's APNs token.
pub async fn add_apns_token(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<AddApnsParams>,
) -> ApiResult<Success> {
    push_devices::do_add_push_token(&ctx, me, TokenKind::Apns, p.token, Some(p.appid)).await?;
    Ok(Success::empty())
}

params! {
    /// A legacy push token: `DELETE /users/me/apns_device_token` and both
    /// `/users/me/android_gcm_reg_id` methods.
    pub struct TokenParams {
        token: String,
    }
}

/// DELETE /users/me/apns_device_token — forget an APNs token.
pub async fn remove_apns_token(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<TokenParams>,
) -> ApiResult<Success> {
    push_devices::do_remove_push_token(&ctx, me, TokenKind::Apns, p.token).await?;
    Ok(Success::empty())
}

/// POST /users/me/android_gcm_reg_id — register an Android device's FCM token.
pub async fn add_fcm_token(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<TokenParams>,
) -> ApiResult<Success> {
    push_devices::do_add_push_token(&ctx, me, TokenKind::Fcm, p.token, None).await?;
    Ok(Success::empty())
}

/// DELETE /users/me/android_gcm_reg_id — forget an FCM token.
pub async fn remove_fcm_token(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<TokenParams>,
) -> ApiResult<Success> {
    push_devices::do_remove_push_token(&ctx, me, TokenKind::Fcm, p.token).await?;
    Ok(Success::empty())
}

params! {
    /// `POST /mobile_push/test_notification`.
    pub struct TestNotificationParams {
        token: Option<String>,
    }
}

/// POST /mobile_push/test_notification — a test push to one or all of one's devices.
pub async fn test_notification(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<TestNotificationParams>,
) -> ApiResult<Success> {
    push_devices::send_test_notification(&ctx, me, p.token).await?;
    Ok(Success::empty())
}

params! {
    /// `POST /mobile_push/e2ee/test_notification`.
    pub struct E2eeTestNotificationParams {
        push_account_id: Option<i64>,
    }
}

/// POST /mobile_push/e2ee/test_notification — an encrypted test push to one or all devices.
pub async fn e2ee_test_notification(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<E2eeTestNotificationParams>,
) -> ApiResult<Success> {
    push_devices::send_e2ee_test_notification(&ctx, me, p.push_account_id).await?;
    Ok(Success::empty())
}

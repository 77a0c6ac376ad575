//! Push devices: end-to-end encrypted registrations (`POST /mobile_push/register`), the legacy
//! tokens (`/users/me/apns_device_token`, `/users/me/android_gcm_reg_id`) and test
//! notifications sent through the configured push notification service. Without a service,
//! registration and tests answer `PUSH_SERVICE_NOT_CONFIGURED`, as the reference does.

use crate::context::Context;
use crate::error::ActionResult;
use crate::time::now;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use parley_domain::push::{
    check_ios_app_id, check_legacy_token, check_registration, legacy_kind_number, PushDevice,
    TokenKind,
};
use parley_domain::user::User;
use parley_domain::{ErrorCode, RequestError};
use parley_storage::push_devices::{self, PushToken};
use serde_json::{json, Value};

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
    ctx.run(move |conn| Ok(push_devices::of_user(conn, id)?))
        .await
}

/// "This endpoint does not accept bot requests.": push devices belong to people.
fn human_only(user: &User) -> Result<(), RequestError> {
    if user.is_bot() {
        return Err(RequestError::bad_request(
            "This endpoint does not accept bot requests.",
        ));
    }
    Ok(())
}

/// `POST /users/me/apns_device_token` and `POST /users/me/android_gcm_reg_id`: stores a legacy
/// push token for `user` (refreshing it when it is stored already). Tokens are kept whether or
/// not a push service is configured, as the reference keeps them.
pub async fn do_add_push_token(
    ctx: &Context,
    user: User,
    kind: TokenKind,
    token: String,
    ios_app_id: Option<String>,
) -> ActionResult<()> {
    human_only(&user)?;
    if let Some(app) = &ios_app_id {
        check_ios_app_id(app)?;
    }
    check_legacy_token(&token, kind)?;
    let token = PushToken {
        kind,
        token,
        ios_app_id,
    };
    ctx.write(move |conn, _events| {
        push_devices::add_token(conn, user.id, &token, now())?;
        Ok(())
    })
    .await
}

/// `DELETE /users/me/apns_device_token` and `DELETE /users/me/android_gcm_reg_id`: removes one of
/// `user`'s legacy tokens; "Token does not exist" when it is not theirs.
pub async fn do_remove_push_token(
    ctx: &Context,
    user: User,
    kind: TokenKind,
    token: String,
) -> ActionResult<()> {
    human_only(&user)?;
    check_legacy_token(&token, kind)?;
    ctx.write(move |conn, _events| {
        if push_devices::remove_token(conn, user.id, kind, &token)? {
            Ok(())
        } else {
            Err(RequestError::bad_request("Token does not exist").into())
        }
    })
    .await
}

/// A user's legacy push tokens (for tests and the push service).
pub async fn get_push_tokens(ctx: &Context, user: User) -> ActionResult<Vec<PushToken>> {
    let id = user.id;
    ctx.run(move |conn| Ok(push_devices::tokens_of(conn, id, None)?))
        .await
}

/// What every notification says about whom it is for: the reference's `get_base_payload`.
fn base_payload(ctx: &Context, realm_id: i64, realm_name: &str, user: &User) -> Value {
    json!({
        "server": ctx.realm.host,
        "realm_id": realm_id,
        "realm_name": realm_name,
        "realm_uri": ctx.realm.url,
        "realm_url": ctx.realm.url,
        "user_id": user.id.0,
    })
}

/// The organization's ID and name.
async fn realm_identity(ctx: &Context) -> ActionResult<(i64, String)> {
    let realm = ctx
        .run(|conn| Ok::<_, crate::error::ActionError>(parley_storage::realms::get(conn)?))
        .await?;
    Ok(realm.map(|r| (r.id, r.name)).unwrap_or_default())
}

/// `POST /mobile_push/test_notification`: a test notification to the device with `token`, or
/// to every legacy token of `user`, through the push service
/// (`POST <service>/api/v1/remotes/push/test_notification`, one request per device, as the
/// reference's bouncer protocol). `PUSH_SERVICE_NOT_CONFIGURED` without a service;
/// `INVALID_PUSH_DEVICE_TOKEN` for a token `user` did not register.
pub async fn send_test_notification(
    ctx: &Context,
    user: User,
    token: Option<String>,
) -> ActionResult<()> {
    human_only(&user)?;
    let Some(push) = ctx.push.clone() else {
        return Err(not_configured().into());
    };
    let id = user.id;
    let wanted = token.clone();
    let devices = ctx
        .run(move |conn| {
            Ok::<_, crate::error::ActionError>(push_devices::tokens_of(
                conn,
                id,
                wanted.as_deref(),
            )?)
        })
        .await?;
    if token.is_some() && devices.is_empty() {
        return Err(
            RequestError::new(ErrorCode::InvalidPushDeviceToken, "Device not recognized").into(),
        );
    }
    let (realm_id, realm_name) = realm_identity(ctx).await?;
    let base = base_payload(ctx, realm_id, &realm_name, &user);
    for device in devices {
        let body = json!({
            "user_id": user.id.0,
            "token": device.token,
            "token_kind": legacy_kind_number(device.kind),
            "base_payload": base,
        });
        post_to_service(&push, "push/test_notification", &body).await?;
    }
    Ok(())
}

/// `POST /mobile_push/e2ee/test_notification`: an end-to-end encrypted test notification to the
/// registration `push_account_id`, or to every registration of `user`. Each payload is sealed
/// (NaCl `crypto_box_seal`) to the device's `push_public_key`, so the push service carries it
/// without reading it, and sent with the device's registration to
/// `POST <service>/api/v1/remotes/push/e2ee/notify`. `PUSH_SERVICE_NOT_CONFIGURED` without a
/// service; `NO_ACTIVE_PUSH_DEVICE` when no registration matches.
pub async fn send_e2ee_test_notification(
    ctx: &Context,
    user: User,
    push_account_id: Option<i64>,
) -> ActionResult<()> {
    human_only(&user)?;
    let Some(push) = ctx.push.clone() else {
        return Err(not_configured().into());
    };
    let devices: Vec<PushDevice> = get_push_devices(ctx, user.clone())
        .await?
        .into_iter()
        .filter(|d| push_account_id.is_none_or(|id| d.push_account_id == id))
        .collect();
    if devices.is_empty() {
        return Err(RequestError::new(
            ErrorCode::NoActivePushDevice,
            "No active registered push device",
        )
        .into());
    }
    let (_, realm_name) = realm_identity(ctx).await?;
    let payload = json!({
        "type": "test",
        "realm_url": ctx.realm.url,
        "realm_name": realm_name,
        "user_id": user.id.0,
        "time": now(),
    })
    .to_string();
    let mut requests = Vec::new();
    for device in &devices {
        let encrypted = seal(&device.push_public_key, payload.as_bytes()).ok_or_else(|| {
            RequestError::bad_request(format!(
                "The push_public_key of device {} is not a NaCl public key",
                device.push_account_id
            ))
        })?;
        requests.push(json!({
            "push_account_id": device.push_account_id,
            "token_kind": device.token_kind.name(),
            "bouncer_public_key": device.bouncer_public_key,
            "encrypted_push_registration": device.encrypted_push_registration,
            "encrypted_data": encrypted,
        }));
    }
    let body = json!({
        "realm_url": ctx.realm.url,
        "user_id": user.id.0,
        "push_requests": requests,
    });
    post_to_service(&push, "push/e2ee/notify", &body).await
}

/// `plaintext` sealed to a base64 X25519 public key, base64 again; None when the key is not 32
/// bytes of standard base64.
fn seal(public_key: &str, plaintext: &[u8]) -> Option<String> {
    let bytes: [u8; 32] = STANDARD.decode(public_key).ok()?.try_into().ok()?;
    let key = crypto_box::PublicKey::from(bytes);
    let sealed = key.seal(&mut crypto_box::aead::OsRng, plaintext).ok()?;
    Some(STANDARD.encode(sealed))
}

/// Posts JSON to `<service>/api/v1/remotes/<endpoint>`, mapping failures as the reference maps
/// its bouncer's: unreachable `FAILED_TO_CONNECT_BOUNCER`, 5xx
/// `INTERNAL_SERVER_ERROR_ON_BOUNCER`, 401/403 `ADMIN_ACTION_REQUIRED`, another 4xx the
/// service's own message.
async fn post_to_service(push: &PushConfig, endpoint: &str, body: &Value) -> ActionResult<()> {
    let url = format!(
        "{}/api/v1/remotes/{endpoint}",
        push.service_url.trim_end_matches('/')
    );
    let response = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(30))
        .user_agent(concat!("Parley/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| crate::error::ActionError::Internal(format!("HTTP client: {e}")))?
        .post(&url)
        .json(body)
        .send()
        .await;
    let response = match response {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!("push service {url} unreachable: {e}");
            return Err(RequestError::new(
                ErrorCode::FailedToConnectBouncer,
                "Network error while connecting to Zulip push notification service.",
            )
            .into());
        }
    };
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    if status.is_server_error() {
        return Err(RequestError::new(
            ErrorCode::InternalServerErrorOnBouncer,
            "Internal server error on Zulip push notification service, retry later.",
        )
        .into());
    }
    if status.as_u16() == 401 || status.as_u16() == 403 {
        return Err(RequestError::new(
            ErrorCode::AdminActionRequired,
            "Push notification configuration issue on server, contact the server administrator or retry later.",
        )
        .into());
    }
    let msg = response
        .json::<Value>()
        .await
        .ok()
        .and_then(|v| v["msg"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "Error received from push notification bouncer".to_owned());
    Err(RequestError::bad_request(msg).into())
}

//! Personal settings and the organization's defaults for new users.

use crate::auth::{Auth, CurrentSession};
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{ParamMap, Params};
use actix_web::web;
use parley_actions::settings_changes::{self, SettingsChange};
use parley_actions::Context;
use parley_domain::settings::SettingSpec;
use parley_domain::RequestError;
use serde_json::json;

/// The values sent for these settings, as text; the others stay for
/// `ignored_parameters_unsupported`.
fn setting_values(
    p: &mut ParamMap,
    specs: impl Iterator<Item = &'static SettingSpec>,
) -> Result<Vec<(String, String)>, RequestError> {
    let mut out = Vec::new();
    for spec in specs {
        if let Some(raw) = p.take::<Option<String>>(spec.name)? {
            out.push((spec.name.to_owned(), raw));
        }
    }
    Ok(out)
}

/// `PATCH /settings`.
#[derive(Debug)]
pub struct SettingsParams(SettingsChange);

impl params::FromParams for SettingsParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        Ok(SettingsParams(SettingsChange {
            values: setting_values(p, settings_changes::own_settings())?,
            full_name: p.take::<Option<String>>("full_name")?,
            old_password: p.take::<Option<String>>("old_password")?,
            new_password: p.take::<Option<String>>("new_password")?,
            email: p.take::<Option<String>>("email")?,
            email_address_visibility: p.take::<Option<String>>("email_address_visibility")?,
            keep_session: None,
        }))
    }
}

/// PATCH /settings — change the caller's own settings, name or password (a new password ends
/// the caller's other browser sessions).
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    CurrentSession(session): CurrentSession,
    Params(SettingsParams(mut change)): Params<SettingsParams>,
) -> ApiResult<Success> {
    change.keep_session = session;
    settings_changes::do_update_settings(&ctx, me, change).await?;
    Ok(Success::empty())
}

/// `PATCH /realm/user_settings_defaults`.
#[derive(Debug)]
pub struct DefaultsParams(Vec<(String, String)>);

impl params::FromParams for DefaultsParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        Ok(DefaultsParams(setting_values(
            p,
            settings_changes::default_settings(),
        )?))
    }
}

/// PATCH /realm/user_settings_defaults — administrators change what new users start with.
pub async fn update_defaults(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(DefaultsParams(values)): Params<DefaultsParams>,
) -> ApiResult<Success> {
    settings_changes::do_update_realm_defaults(&ctx, me, values).await?;
    Ok(Success::empty())
}

params! {
    /// `GET /realm/user_settings_defaults`.
    pub struct GetDefaultsParams {}
}

/// GET /realm/user_settings_defaults — the organization's defaults for new users.
pub async fn get_defaults(
    ctx: web::Data<Context>,
    Auth(_me): Auth,
    _: Params<GetDefaultsParams>,
) -> ApiResult<Success> {
    let defaults = settings_changes::get_realm_defaults(&ctx).await?;
    Ok(Success::from_fields(
        json!({ "realm_user_settings_defaults": defaults }),
    ))
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// GET /accounts/confirm_new_email/{token} — the link mailed for an address change: a small page
/// saying whether it worked.
pub async fn confirm_email(
    ctx: web::Data<Context>,
    token: web::Path<String>,
) -> actix_web::HttpResponse {
    let (status, text) =
        match parley_actions::email_change::do_confirm_email_change(&ctx, token.into_inner()).await
        {
            Ok(email) => (
                actix_web::http::StatusCode::OK,
                format!("Your email address is now {email}."),
            ),
            Err(parley_actions::ActionError::Request(err)) => {
                (actix_web::http::StatusCode::BAD_REQUEST, err.msg)
            }
            Err(other) => {
                tracing::error!(error = %other, "email confirmation failed");
                (
                    actix_web::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "Something went wrong; please try again later.".to_owned(),
                )
            }
        };
    actix_web::HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>Email address</title></head>\
             <body><p>{}</p></body></html>",
            escape_html(&text)
        ))
}

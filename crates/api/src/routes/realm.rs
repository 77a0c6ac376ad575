//! Organization settings: `PATCH /realm`.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params::{self, Json, ParamMap, Params};
use crate::routes::channels::update_setting;
use actix_web::web;
use parley_actions::realm_settings::{self, RealmUpdate};
use parley_actions::Context;
use parley_domain::realm::RealmPolicy;
use parley_domain::realm_settings::{
    find, parse_mandatory_topics, parse_value, MANDATORY_TOPICS, REALM_SETTINGS,
};
use parley_domain::RequestError;
use serde_json::Value;

/// `PATCH /realm`: any organization setting of the registry, every group setting (as
/// `{"new": value, "old": value}` or a bare value) and the legacy `mandatory_topics`.
#[derive(Debug)]
pub struct UpdateRealmParams {
    update: RealmUpdate,
}

impl params::FromParams for UpdateRealmParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let mut update = RealmUpdate::default();
        if let Err(err) = read_settings(p, &mut update) {
            update.invalid = Some(err);
        }
        Ok(UpdateRealmParams { update })
    }
}

/// Reads every setting sent; stops at the first invalid one.
fn read_settings(p: &mut ParamMap, update: &mut RealmUpdate) -> Result<(), RequestError> {
    for spec in REALM_SETTINGS {
        if let Some(raw) = p.raw(spec.name) {
            let value = parse_value(spec, raw)?;
            update.settings.push((spec, value));
        }
    }
    if let Some(raw) = p.raw(MANDATORY_TOPICS) {
        let value = parse_mandatory_topics(raw)?;
        let explicit = update
            .settings
            .iter()
            .any(|(s, _)| s.name == "topics_policy");
        if let (false, Some(spec)) = (explicit, find("topics_policy")) {
            update.settings.push((spec, value));
        }
    }
    for name in RealmPolicy::GROUP_SETTINGS {
        if let Some(Json(value)) = p.take::<Option<Json<Value>>>(name)? {
            let (new, old) = update_setting(name, value)?;
            update.groups.push((name.to_owned(), new, old));
        }
    }
    Ok(())
}

/// PATCH /realm — change organization settings (administrators; some settings owners only).
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<UpdateRealmParams>,
) -> ApiResult<Success> {
    let changed = realm_settings::do_update_realm(&ctx, me, p.update).await?;
    Ok(changed
        .iter()
        .fold(Success::empty(), |ok, (name, value)| ok.with(name, value)))
}

crate::params! {
    /// `POST /realm/test_welcome_bot_custom_message`.
    pub struct TestWelcomeParams {
        welcome_message_custom_text: String,
    }
}

/// POST /realm/test_welcome_bot_custom_message — receive the Welcome Bot message being drafted.
pub async fn test_welcome_bot_custom_message(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<TestWelcomeParams>,
) -> ApiResult<Success> {
    let id = parley_actions::welcome_bot::send_test_welcome_message(
        &ctx,
        me,
        p.welcome_message_custom_text,
    )
    .await?;
    Ok(Success::empty().with("message_id", id.0))
}

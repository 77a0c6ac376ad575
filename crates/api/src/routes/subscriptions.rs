//! Subscriptions: joining and leaving channels, and per-channel settings.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::{ApiError, ApiResult};
use crate::params;
use crate::params::{path_param, Json, ParamMap, Params};
use crate::routes::channels::ChannelOptions;
use actix_web::web;
use parley_actions::subscriptions::{
    self, ChannelRequest, Principal, PropertyChange, SubscribeRequest,
};
use parley_actions::Context;
use parley_domain::{limits, ChannelId, RequestError, UserId};
use serde::Deserialize;
use serde_json::Value;

/// One entry of `subscriptions` in `POST /users/me/subscriptions`.
#[derive(Debug, Deserialize)]
struct ChannelEntry {
    name: String,
    #[serde(default)]
    description: Option<String>,
}

/// `principals`: user IDs or emails.
fn principals(p: &mut ParamMap) -> Result<Option<Vec<Principal>>, RequestError> {
    let Some(Json(values)) = p.take::<Option<Json<Vec<Value>>>>("principals")? else {
        return Ok(None);
    };
    let list = values
        .into_iter()
        .map(|value| match value {
            Value::Number(n) => n
                .as_i64()
                .map(|id| Principal::Id(UserId(id)))
                .ok_or_else(|| RequestError::invalid_param("principals", "Invalid principals")),
            Value::String(email) => Ok(Principal::Email(email)),
            _ => Err(RequestError::invalid_param(
                "principals",
                "Invalid principals",
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((!list.is_empty()).then_some(list))
}

/// `POST /users/me/subscriptions`.
#[derive(Debug)]
pub struct SubscribeParams {
    request: SubscribeRequest,
}

impl params::FromParams for SubscribeParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let entries = p.take::<Json<Vec<ChannelEntry>>>("subscriptions")?.0;
        let principals = principals(p)?;
        limits::check_subscription_changes(entries.len(), principals.as_ref().map_or(1, Vec::len))?;
        let fatal = p
            .take::<Option<bool>>("authorization_errors_fatal")?
            .unwrap_or(true);
        let options = ChannelOptions::from_params(p)?;
        Ok(SubscribeParams {
            request: SubscribeRequest {
                channels: entries
                    .into_iter()
                    .map(|e| ChannelRequest {
                        name: e.name,
                        description: e.description,
                    })
                    .collect(),
                principals,
                authorization_errors_fatal: fatal,
                template: options.channel,
            },
        })
    }
}

/// POST /users/me/subscriptions — subscribe yourself or others, creating missing channels.
pub async fn subscribe(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<SubscribeParams>,
) -> ApiResult<Success> {
    let result = subscriptions::subscribe(&ctx, me, p.request).await?;
    Ok(Success::from_fields(result))
}

/// `DELETE /users/me/subscriptions`.
#[derive(Debug)]
pub struct UnsubscribeParams {
    names: Vec<String>,
    principals: Option<Vec<Principal>>,
}

impl params::FromParams for UnsubscribeParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let names = p.take::<Json<Vec<String>>>("subscriptions")?.0;
        let principals = principals(p)?;
        limits::check_subscription_changes(names.len(), principals.as_ref().map_or(1, Vec::len))?;
        Ok(UnsubscribeParams { names, principals })
    }
}

/// DELETE /users/me/subscriptions — leave channels, or remove others from them.
pub async fn unsubscribe(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<UnsubscribeParams>,
) -> ApiResult<Success> {
    let result = subscriptions::unsubscribe(&ctx, me, p.names, p.principals).await?;
    Ok(Success::from_fields(result))
}

/// One entry of `add` in `PATCH /users/me/subscriptions` (a `color` is accepted and ignored: new
/// subscriptions get a color picked by the server).
#[derive(Debug, Deserialize)]
struct AddEntry {
    name: String,
    #[serde(default)]
    description: Option<String>,
}

/// `PATCH /users/me/subscriptions`.
#[derive(Debug)]
pub struct UpdateSubscriptionsParams {
    add: Vec<ChannelRequest>,
    delete: Vec<String>,
}

impl params::FromParams for UpdateSubscriptionsParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let add = p
            .take::<Option<Json<Vec<AddEntry>>>>("add")?
            .map(|Json(entries)| entries)
            .unwrap_or_default();
        let delete = p
            .take::<Option<Json<Vec<String>>>>("delete")?
            .map(|Json(names)| names)
            .unwrap_or_default();
        Ok(UpdateSubscriptionsParams {
            add: add
                .into_iter()
                .map(|e| ChannelRequest {
                    name: e.name,
                    description: e.description,
                })
                .collect(),
            delete,
        })
    }
}

/// PATCH /users/me/subscriptions — join the channels of `add` and leave those of `delete` at once.
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<UpdateSubscriptionsParams>,
) -> ApiResult<Success> {
    let result = subscriptions::update_subscriptions(&ctx, me, p.add, p.delete).await?;
    Ok(Success::from_fields(result))
}

params! {
    /// `GET /users/me/subscriptions`.
    pub struct ListSubscriptions {
        include_subscribers: Option<String>,
    }
}

/// GET /users/me/subscriptions — the caller's channels and settings.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<ListSubscriptions>,
) -> ApiResult<Success> {
    let include = match p.include_subscribers.as_deref() {
        None | Some("false") => false,
        Some("true") | Some("partial") => true,
        Some(_) => {
            return Err(ApiError(RequestError::invalid_param(
                "include_subscribers",
                "Invalid include_subscribers",
            )))
        }
    };
    let subs = subscriptions::list_subscriptions(&ctx, me, include).await?;
    Ok(Success::empty().with("subscriptions", subs))
}

params! {
    /// `POST /users/me/subscriptions/properties`.
    pub struct UpdateProperties {
        subscription_data: Json<Vec<PropertyChange>>,
    }
}

/// POST /users/me/subscriptions/properties — change per-channel settings (also PATCH).
pub async fn update_properties(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<UpdateProperties>,
) -> ApiResult<Success> {
    subscriptions::update_properties(&ctx, me, p.subscription_data.0).await?;
    Ok(Success::empty())
}

params! {
    /// No parameters beyond the path.
    pub struct NoParams {}
}

/// GET /users/{user_id}/subscriptions/{stream_id} — whether a user is subscribed.
pub async fn status(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<(String, String)>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let (user, channel) = path.into_inner();
    let user = path_param::<UserId>("user_id", &user)?;
    let channel = ChannelId(path_param::<i64>("stream_id", &channel)?);
    let subscribed = subscriptions::subscription_status(&ctx, me, user, channel).await?;
    Ok(Success::empty().with("is_subscribed", subscribed))
}

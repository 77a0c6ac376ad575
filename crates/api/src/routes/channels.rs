//! Channels: creating, reading, updating and archiving.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::{ApiError, ApiResult};
use crate::params;
use crate::params::{path_param, Json, ParamMap, Params};
use actix_web::web;
use parley_actions::channels::{self, ChannelFilter, ChannelUpdate, NewChannel};
use parley_actions::Context;
use parley_domain::channel::{ChannelPermissions, Retention, TopicsPolicy};
use parley_domain::groups::GroupSetting;
use parley_domain::{ChannelId, RequestError, UserId};
use serde_json::Value;

/// The channel options shared by `POST /channels/create` and `POST /users/me/subscriptions`
/// (which applies them to the channels it creates).
#[derive(Debug, Default)]
pub struct ChannelOptions {
    /// The options as the actions take them.
    pub channel: NewChannel,
}

impl params::FromParams for ChannelOptions {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let mut channel = NewChannel {
            invite_only: p.take::<Option<bool>>("invite_only")?.unwrap_or(false),
            is_web_public: p.take::<Option<bool>>("is_web_public")?.unwrap_or(false),
            is_default_stream: p
                .take::<Option<bool>>("is_default_stream")?
                .unwrap_or(false),
            history_public_to_subscribers: p.take("history_public_to_subscribers")?,
            folder_id: p.take("folder_id")?,
            ..NewChannel::default()
        };
        if let Some(Json(value)) = p.take::<Option<Json<Value>>>("message_retention_days")? {
            channel.message_retention_days =
                Some(Retention::parse(&value, "message_retention_days")?);
        }
        if let Some(name) = p.take::<Option<String>>("topics_policy")? {
            let name = name.trim_matches('"');
            channel.topics_policy = Some(TopicsPolicy::from_name(name).ok_or_else(|| {
                RequestError::invalid_param("topics_policy", "Invalid topics_policy")
            })?);
        }
        for name in ChannelPermissions::NAMES {
            if let Some(Json(setting)) = p.take::<Option<Json<GroupSetting>>>(name)? {
                channel.permissions.push((name.to_owned(), setting));
            }
        }
        channel.announce = p.take::<Option<bool>>("announce")?.unwrap_or(false);
        Ok(ChannelOptions { channel })
    }
}

/// `POST /channels/create`.
#[derive(Debug)]
pub struct CreateChannelParams {
    name: String,
    description: String,
    subscribers: Vec<UserId>,
    options: ChannelOptions,
}

impl params::FromParams for CreateChannelParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        Ok(CreateChannelParams {
            name: p.take("name")?,
            description: p.take::<Option<String>>("description")?.unwrap_or_default(),
            subscribers: p.take::<Json<Vec<UserId>>>("subscribers")?.0,
            options: ChannelOptions::from_params(p)?,
        })
    }
}

/// POST /channels/create — create a channel and subscribe the given users.
pub async fn create(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<CreateChannelParams>,
) -> ApiResult<Success> {
    let mut new = p.options.channel;
    new.name = p.name;
    new.description = p.description;
    let id = channels::create_channel(&ctx, me, new, p.subscribers).await?;
    Ok(Success::empty().with("id", id))
}

params! {
    /// `GET /streams`.
    pub struct ListChannels {
        include_public: bool = true,
        include_web_public: bool = false,
        include_subscribed: bool = true,
        include_all: bool = false,
        include_all_active: bool = false,
        include_default: bool = false,
        exclude_archived: bool = true,
    }
}

/// GET /streams — channels the caller may see, as the filters select.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<ListChannels>,
) -> ApiResult<Success> {
    let filter = ChannelFilter {
        include_public: p.include_public,
        include_web_public: p.include_web_public,
        include_subscribed: p.include_subscribed,
        include_all: p.include_all || p.include_all_active,
        include_default: p.include_default,
        exclude_archived: p.exclude_archived,
    };
    let streams = channels::list_channels(&ctx, me, filter).await?;
    Ok(Success::empty().with("streams", streams))
}

params! {
    /// Endpoints with no parameters beyond the path.
    pub struct NoParams {}
}

fn channel_id(path: &str) -> Result<ChannelId, ApiError> {
    path_param::<i64>("stream_id", path).map(ChannelId)
}

/// GET /streams/{stream_id} — one channel.
pub async fn get_one(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let stream = channels::get_channel(&ctx, me, channel_id(&path)?).await?;
    Ok(Success::empty().with("stream", stream))
}

/// GET /streams/{stream_id}/members — a channel's subscribers.
pub async fn members(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    let subscribers = channels::channel_members(&ctx, me, channel_id(&path)?).await?;
    Ok(Success::empty().with("subscribers", subscribers))
}

params! {
    /// `GET /get_stream_id`.
    pub struct GetChannelId {
        stream: String,
    }
}

/// GET /get_stream_id — a channel's ID from its name.
pub async fn get_id(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<GetChannelId>,
) -> ApiResult<Success> {
    let id = channels::get_channel_id(&ctx, me, p.stream).await?;
    Ok(Success::empty().with("stream_id", id))
}

/// A group setting in an update: `{"new": value, "old": value}`, or just the value.
pub(crate) fn update_setting(
    name: &str,
    value: Value,
) -> Result<(GroupSetting, Option<GroupSetting>), RequestError> {
    let parse = |v: Value| {
        serde_json::from_value::<GroupSetting>(v)
            .map_err(|_| RequestError::invalid_param(name, format!("Invalid {name}")))
    };
    match value {
        Value::Object(mut map) if map.contains_key("new") => {
            let new = parse(map.remove("new").unwrap_or(Value::Null))?;
            let old = map.remove("old").map(parse).transpose()?;
            Ok((new, old))
        }
        other => Ok((parse(other)?, None)),
    }
}

/// `PATCH /streams/{stream_id}`.
#[derive(Debug)]
pub struct UpdateChannelParams {
    update: ChannelUpdate,
}

impl params::FromParams for UpdateChannelParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let mut update = ChannelUpdate {
            new_name: p.take("new_name")?,
            description: p.take("description")?,
            is_private: p.take("is_private")?,
            is_web_public: p.take("is_web_public")?,
            history_public_to_subscribers: p.take("history_public_to_subscribers")?,
            is_default_stream: p.take("is_default_stream")?,
            folder_id: p
                .take::<Option<Json<Option<i64>>>>("folder_id")?
                .map(|Json(folder)| folder),
            ..ChannelUpdate::default()
        };
        if let Some(Json(value)) = p.take::<Option<Json<Value>>>("message_retention_days")? {
            update.message_retention_days =
                Some(Retention::parse(&value, "message_retention_days")?);
        }
        if let Some(name) = p.take::<Option<String>>("topics_policy")? {
            let name = name.trim_matches('"');
            update.topics_policy = Some(TopicsPolicy::from_name(name).ok_or_else(|| {
                RequestError::invalid_param("topics_policy", "Invalid topics_policy")
            })?);
        }
        for name in ChannelPermissions::NAMES {
            if let Some(Json(value)) = p.take::<Option<Json<Value>>>(name)? {
                let (new, old) = update_setting(name, value)?;
                update.permissions.push((name.to_owned(), new, old));
            }
        }
        Ok(UpdateChannelParams { update })
    }
}

/// PATCH /streams/{stream_id} — rename, describe, change privacy or permissions.
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<UpdateChannelParams>,
) -> ApiResult<Success> {
    channels::update_channel(&ctx, me, channel_id(&path)?, p.update).await?;
    Ok(Success::empty())
}

/// DELETE /streams/{stream_id} — archive a channel.
pub async fn archive(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    channels::archive_channel(&ctx, me, channel_id(&path)?).await?;
    Ok(Success::empty())
}

params! {
    /// `POST` / `DELETE /default_streams`.
    pub struct DefaultChannelParams {
        stream_id: i64,
    }
}

/// POST /default_streams — make a channel one that new users join.
pub async fn add_default(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<DefaultChannelParams>,
) -> ApiResult<Success> {
    channels::set_default_channel(&ctx, me, ChannelId(p.stream_id), true).await?;
    Ok(Success::empty())
}

/// DELETE /default_streams — stop new users joining a channel.
pub async fn remove_default(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<DefaultChannelParams>,
) -> ApiResult<Success> {
    channels::set_default_channel(&ctx, me, ChannelId(p.stream_id), false).await?;
    Ok(Success::empty())
}

params! {
    /// `GET /streams/{stream_id}/email_address`.
    pub struct EmailAddressParams {
        sender_id: Option<i64>,
    }
}

/// GET /streams/{stream_id}/email_address — the channel's incoming-email address.
pub async fn email_address(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<EmailAddressParams>,
) -> ApiResult<Success> {
    let channel = channel_id(&path)?;
    let email = parley_actions::channel_email::channel_email_address(
        &ctx,
        me,
        channel,
        p.sender_id.map(UserId),
    )
    .await?;
    Ok(Success::empty().with("email", email))
}

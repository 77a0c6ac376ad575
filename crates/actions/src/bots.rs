//! Bots: creating (`POST /bots`), listing the caller's own (`GET /bots`), configuring
//! (`PATCH /bots/{bot_id}`), rotating their keys and deactivating them (`DELETE /bots/{bot_id}`),
//! with the `realm_bot` events their administrators (owner and organization administrators)
//! receive and the `realm_bots` snapshot part.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::channels::active_users;
use crate::notify::to_users;
use crate::notify::users::{
    bot_added, bot_owner_changed, bot_updated, full_name_changed, user_created,
};
use crate::publish::Events;
use crate::secrets;
use crate::time::now;
use crate::users::{change_role_in, check_role_change, parse_role};
use parley_domain::user::{check_full_name, gravatar_url, BotType, EmailAddressVisibility, User};
use parley_domain::{ChannelId, RequestError, Role, UserId};
use parley_storage::bots::{self as stored, BotSettings};
use parley_storage::users::NewUser;
use parley_storage::{channels, users, DbConn, StorageError};
use parley_wire as wire;
use parley_wire::event::{BotId, RealmBotEvent};
use parley_wire::user::{avatar_url, Bot};
use serde_json::{json, Map, Value};

/// Embedded bots this server knows by name.
const EMBEDDED_BOTS: [&str; 6] = [
    "converter",
    "encrypt",
    "helloworld",
    "virtual_fs",
    "giphy",
    "followup",
];

/// A `POST /bots` request.
#[derive(Debug, Clone, Default)]
pub struct CreateBot {
    /// Display name.
    pub full_name: String,
    /// Local part of the address (`<short_name>-bot@<realm host>`).
    pub short_name: String,
    /// Bot type code (1 generic by default).
    pub bot_type: i64,
    /// Outgoing webhooks: where messages are posted.
    pub payload_url: String,
    /// Outgoing webhooks: 1 native format, 2 Slack-compatible.
    pub interface_type: i64,
    /// Embedded bots (and incoming webhook integrations): the service's name.
    pub service_name: Option<String>,
    /// Embedded and incoming webhook bots: configuration values.
    pub config_data: Map<String, Value>,
    /// Name of the default channel for sending.
    pub default_sending_stream: Option<String>,
    /// Name of the default channel for the bot's event queues.
    pub default_events_register_stream: Option<String>,
    /// Whether the bot's event queues follow every public channel.
    pub default_all_public_streams: Option<bool>,
}

/// What `POST /bots` returns.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CreatedBot {
    /// The bot's user ID.
    pub user_id: UserId,
    /// Its API key.
    pub api_key: String,
    /// Its avatar.
    pub avatar_url: String,
    /// Default sending channel's name.
    pub default_sending_stream: Option<String>,
    /// Default event-queue channel's name.
    pub default_events_register_stream: Option<String>,
    /// Follows every public channel.
    pub default_all_public_streams: bool,
}

fn avatar_of(ctx: &Context, bot: &User) -> String {
    avatar_url(bot, &ctx.realm.url, false)
        .unwrap_or_else(|| gravatar_url(&bot.delivery_email, bot.avatar_version))
}

fn channel_name(conn: &mut DbConn, id: Option<ChannelId>) -> Result<Option<String>, StorageError> {
    Ok(match id {
        Some(id) => channels::by_id(conn, id)?.map(|c| c.name),
        None => None,
    })
}

/// The `services` list of a bot: one entry for outgoing webhook and embedded bots.
fn services(bot: &User, settings: &BotSettings) -> Vec<Value> {
    match bot.bot_type {
        Some(BotType::OutgoingWebhook) => vec![json!({
            "base_url": settings.service_base_url.clone().unwrap_or_default(),
            "interface": settings.service_interface.unwrap_or(1),
            "token": settings.service_token.clone().unwrap_or_default(),
        })],
        Some(BotType::Embedded) => {
            let config: Value = settings
                .service_config
                .as_deref()
                .and_then(|c| serde_json::from_str(c).ok())
                .unwrap_or_else(|| json!({}));
            vec![json!({
                "service_name": settings.service_name.clone().unwrap_or_default(),
                "config_data": config,
            })]
        }
        _ => Vec::new(),
    }
}

/// A bot as `realm_bot` `add` and the `realm_bots` snapshot describe it (API key included: only
/// its administrators receive it).
pub(crate) fn bot_object(ctx: &Context, conn: &mut DbConn, bot: &User) -> ActionResult<Bot> {
    let settings = stored::get(conn, bot.id)?;
    let api_key = users::credentials(conn, bot.id)?
        .map(|c| c.api_key)
        .unwrap_or_default();
    Ok(Bot {
        email: bot.delivery_email.clone(),
        user_id: bot.id,
        full_name: bot.full_name.clone(),
        bot_type: bot.bot_type.map(|t| t as i64),
        is_active: bot.is_active,
        api_key,
        default_sending_stream: channel_name(conn, settings.default_sending_stream)?,
        default_events_register_stream: channel_name(
            conn,
            settings.default_events_register_stream,
        )?,
        default_all_public_streams: settings.default_all_public_streams,
        avatar_url: avatar_of(ctx, bot),
        services: services(bot, &settings),
        owner_id: bot.bot_owner_id,
    })
}

/// The `realm_bots` snapshot part: every bot for administrators (found among `everyone`, the
/// organization's users), else the viewer's own bots (active or not).
pub(crate) fn realm_bots(
    ctx: &Context,
    conn: &mut DbConn,
    viewer: &User,
    everyone: &[User],
) -> ActionResult<Vec<Bot>> {
    let bots: Vec<User> = if viewer.role.is_admin() {
        everyone.iter().filter(|u| u.is_bot()).cloned().collect()
    } else {
        users::bots_owned_by(conn, viewer.id)?
    };
    let mut out = Vec::new();
    for bot in &bots {
        out.push(bot_object(ctx, conn, bot)?);
    }
    Ok(out)
}

fn check_creation_policy(conn: &mut DbConn, caller: &User, bot_type: BotType) -> ActionResult<()> {
    let policy = crate::policy::load(conn)?;
    let can = |s| policy.groups.setting_contains(s, caller);
    if can(&policy.realm.can_create_bots_group)
        || (bot_type == BotType::IncomingWebhook
            && can(&policy.realm.can_create_write_only_bots_group))
    {
        Ok(())
    } else {
        Err(RequestError::insufficient_permission().into())
    }
}

fn check_bot_name_available(conn: &mut DbConn, name: &str) -> ActionResult<()> {
    if users::active_by_full_name(conn, name)?.is_empty() {
        Ok(())
    } else {
        Err(RequestError::invalid_param("full_name", "Name is already in use!").into())
    }
}

fn check_interface(interface: i64) -> Result<(), RequestError> {
    if matches!(interface, 1 | 2) {
        Ok(())
    } else {
        Err(RequestError::invalid_param(
            "interface_type",
            "Invalid interface type",
        ))
    }
}

fn check_url(url: &str, var_name: &str) -> Result<(), RequestError> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    if rest.is_some_and(|r| !r.is_empty() && !r.chars().any(char::is_whitespace)) {
        Ok(())
    } else {
        Err(RequestError::invalid_param(
            var_name,
            format!("{var_name} is not a URL"),
        ))
    }
}

fn access_channel_named(
    conn: &mut DbConn,
    caller: &User,
    name: &str,
) -> ActionResult<Option<ChannelId>> {
    if name.is_empty() {
        return Ok(None);
    }
    let policy = crate::policy::load(conn)?;
    match crate::access::access_channel_by_name(conn, &policy, caller, name)? {
        Some((channel, _)) => Ok(Some(channel.id)),
        None => Err(RequestError::bad_request(format!("Invalid channel name '{name}'")).into()),
    }
}

/// `POST /bots`: a member allowed by `can_create_bots_group` (or, for incoming webhook bots,
/// `can_create_write_only_bots_group`) creates a bot they own. Everyone gets `realm_user` `add`,
/// the bot's administrators `realm_bot` `add`.
pub async fn create_bot(
    ctx: &Context,
    caller: &User,
    request: CreateBot,
) -> ActionResult<CreatedBot> {
    if caller.role.is_guest() {
        return Err(RequestError::guests_not_allowed().into());
    }
    let short_name = request.short_name.trim().to_lowercase();
    if short_name.is_empty()
        || !short_name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(RequestError::invalid_param("short_name", "Bad name or username").into());
    }
    let full_name = check_full_name(&request.full_name, "full_name")?;
    let bot_type = BotType::from_code(request.bot_type)
        .ok_or_else(|| RequestError::invalid_param("bot_type", "Invalid bot type"))?;
    check_interface(request.interface_type)?;
    let mut settings = BotSettings {
        default_all_public_streams: request.default_all_public_streams.unwrap_or(false),
        ..BotSettings::default()
    };
    match bot_type {
        BotType::OutgoingWebhook => {
            check_url(&request.payload_url, "payload_url")?;
            settings.service_name =
                Some(request.service_name.clone().unwrap_or(short_name.clone()));
            settings.service_base_url = Some(request.payload_url.clone());
            settings.service_interface = Some(request.interface_type);
            settings.service_token = Some(secrets::generate_api_key());
        }
        BotType::Embedded => {
            let name = request.service_name.clone().unwrap_or_default();
            if !EMBEDDED_BOTS.contains(&name.as_str()) {
                return Err(RequestError::invalid_param(
                    "service_name",
                    "Invalid embedded bot name.",
                )
                .into());
            }
            settings.service_name = Some(name);
            settings.service_config = Some(Value::Object(request.config_data.clone()).to_string());
        }
        BotType::IncomingWebhook | BotType::Generic => {}
    }
    let email = format!("{short_name}-bot@{}", ctx.realm.host);
    let api_key = secrets::generate_api_key();
    let new = NewUser {
        delivery_email: email,
        full_name,
        password_hash: None,
        api_key: api_key.clone(),
        role: Role::Member,
        bot_type: Some(bot_type),
        bot_owner_id: Some(caller.id),
        timezone: String::new(),
        date_joined: now(),
        email_address_visibility: EmailAddressVisibility::Everyone,
        can_create_users: false,
    };
    let ctx2 = ctx.clone();
    let caller = caller.clone();
    let (bot, settings) = ctx
        .write(move |conn, events| {
            if stored::email_taken(conn, &new.delivery_email)? {
                return Err(
                    RequestError::invalid_param("short_name", "Username already in use").into(),
                );
            }
            check_bot_name_available(conn, &new.full_name)?;
            check_creation_policy(conn, &caller, bot_type)?;
            if let Some(name) = &request.default_sending_stream {
                settings.default_sending_stream = access_channel_named(conn, &caller, name)?;
            }
            if let Some(name) = &request.default_events_register_stream {
                settings.default_events_register_stream =
                    access_channel_named(conn, &caller, name)?;
            }
            let id = match users::insert(conn, &new) {
                Err(StorageError::UniqueViolation(_)) => {
                    return Err(RequestError::invalid_param(
                        "short_name",
                        "Username already in use",
                    )
                    .into())
                }
                other => other?,
            };
            crate::settings_changes::start_with_realm_defaults(conn, id)?;
            stored::save(conn, id, &settings)?;
            let bot = users::by_id(conn, id)?
                .ok_or_else(|| ActionError::Internal("new bot vanished".into()))?;
            let people = active_users(conn)?;
            for event in user_created(&ctx2, conn, &bot, &people)? {
                events.push(event);
            }
            let object = bot_object(&ctx2, conn, &bot)?;
            events.push(bot_added(conn, &bot, object)?);
            Ok::<_, ActionError>((bot, settings))
        })
        .await?;
    tracing::info!(user_id = %bot.id, "created bot");
    let (sending, register) = {
        let (a, b) = (
            settings.default_sending_stream,
            settings.default_events_register_stream,
        );
        ctx.run(move |conn| Ok::<_, ActionError>((channel_name(conn, a)?, channel_name(conn, b)?)))
            .await?
    };
    Ok(CreatedBot {
        user_id: bot.id,
        api_key,
        avatar_url: avatar_of(ctx, &bot),
        default_sending_stream: sending,
        default_events_register_stream: register,
        default_all_public_streams: settings.default_all_public_streams,
    })
}

/// `GET /bots`: the caller's own active bots, oldest first.
pub async fn list_own_bots(ctx: &Context, caller: &User) -> ActionResult<Vec<Value>> {
    if caller.role.is_guest() {
        return Err(RequestError::guests_not_allowed().into());
    }
    let ctx2 = ctx.clone();
    let id = caller.id;
    ctx.run(move |conn| {
        let mut out = Vec::new();
        for bot in users::bots_owned_by(conn, id)? {
            if !bot.is_active {
                continue;
            }
            let settings = stored::get(conn, bot.id)?;
            let api_key = users::credentials(conn, bot.id)?
                .map(|c| c.api_key)
                .unwrap_or_default();
            out.push(json!({
                "username": bot.delivery_email,
                "user_id": bot.id,
                "full_name": bot.full_name,
                "api_key": api_key,
                "avatar_url": avatar_of(&ctx2, &bot),
                "default_sending_stream": channel_name(conn, settings.default_sending_stream)?,
                "default_events_register_stream":
                    channel_name(conn, settings.default_events_register_stream)?,
                "default_all_public_streams": settings.default_all_public_streams,
            }));
        }
        Ok::<_, ActionError>(out)
    })
    .await
}

/// The bot with this ID that `caller` administers (its owner or an organization
/// administrator): "No such bot" when it is not a bot, "Insufficient permission" otherwise.
pub(crate) fn access_bot(conn: &mut DbConn, caller: &User, id: UserId) -> ActionResult<User> {
    let bot = users::by_id(conn, id)?
        .filter(User::is_bot)
        .filter(|b| !users::system_bots(conn).is_ok_and(|s| s.iter().any(|x| x.id == b.id)))
        .ok_or_else(|| RequestError::bad_request("No such bot"))?;
    if caller.role.is_admin() || bot.bot_owner_id == Some(caller.id) {
        Ok(bot)
    } else {
        Err(RequestError::insufficient_permission().into())
    }
}

/// A `PATCH /bots/{bot_id}` request: the parts sent.
#[derive(Debug, Clone, Default)]
pub struct UpdateBot {
    /// New display name.
    pub full_name: Option<String>,
    /// New role code.
    pub role: Option<i64>,
    /// New owner.
    pub bot_owner_id: Option<UserId>,
    /// Embedded bots: new configuration.
    pub config_data: Option<Map<String, Value>>,
    /// Outgoing webhooks: new URL.
    pub service_payload_url: Option<String>,
    /// Outgoing webhooks: new interface (1 by default).
    pub service_interface: i64,
    /// New default sending channel name ("" clears).
    pub default_sending_stream: Option<String>,
    /// New default event-queue channel name ("" clears).
    pub default_events_register_stream: Option<String>,
    /// Follows every public channel.
    pub default_all_public_streams: Option<bool>,
}

fn push_bot_update(
    conn: &mut DbConn,
    events: &mut Events,
    bot: &User,
    key: &str,
    value: Value,
) -> ActionResult<()> {
    let mut body = Map::new();
    body.insert("user_id".into(), json!(bot.id));
    body.insert(key.into(), value);
    events.push(bot_updated(conn, bot, body)?);
    Ok(())
}

fn change_owner(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    bot: &mut User,
    owner_id: UserId,
) -> ActionResult<()> {
    let owner = users::by_id(conn, owner_id)?
        .ok_or_else(|| RequestError::bad_request("Failed to change owner, no such user"))?;
    if !owner.is_active {
        return Err(
            RequestError::bad_request("Failed to change owner, user is deactivated").into(),
        );
    }
    if owner.is_bot() {
        return Err(
            RequestError::bad_request("Failed to change owner, bots can't own other bots").into(),
        );
    }
    if bot.bot_owner_id == Some(owner.id) {
        return Ok(());
    }
    let previous = match bot.bot_owner_id {
        Some(id) => users::by_id(conn, id)?,
        None => None,
    };
    users::set_bot_owner(conn, bot.id, owner.id)?;
    bot.bot_owner_id = Some(owner.id);
    let mut excluded = Vec::new();
    if let Some(previous) = previous.filter(|p| !p.role.is_admin() && p.is_active) {
        events.push(to_users(
            vec![previous.id],
            wire::Event::RealmBot(RealmBotEvent::Delete {
                bot: BotId { user_id: bot.id },
            }),
        ));
        excluded.push(previous.id);
    }
    if !owner.role.is_admin() {
        let object = bot_object(ctx, conn, bot)?;
        events.push(to_users(
            vec![owner.id],
            wire::Event::RealmBot(RealmBotEvent::Add { bot: object }),
        ));
        excluded.push(owner.id);
    }
    let audience: Vec<UserId> = crate::notify::users::bot_administrators(conn, bot)?
        .into_iter()
        .filter(|u| !excluded.contains(u))
        .collect();
    let mut changes = Map::new();
    changes.insert("user_id".into(), json!(bot.id));
    changes.insert("owner_id".into(), json!(owner.id));
    events.push(to_users(
        audience,
        wire::Event::RealmBot(RealmBotEvent::Update { bot: changes }),
    ));
    events.push(bot_owner_changed(conn, bot, owner.id)?);
    Ok(())
}

/// `PATCH /bots/{bot_id}`: the bot's owner or an administrator reconfigures it; each change
/// sends `realm_bot` `update` to the bot's administrators (and name and owner changes
/// `realm_user` `update` to everyone who can access the bot). Returns the reference's response
/// fields.
pub async fn update_bot(
    ctx: &Context,
    caller: &User,
    bot_id: UserId,
    request: UpdateBot,
) -> ActionResult<Map<String, Value>> {
    if caller.role.is_guest() {
        return Err(RequestError::guests_not_allowed().into());
    }
    let full_name = request
        .full_name
        .as_deref()
        .map(|n| check_full_name(n, "full_name"))
        .transpose()?;
    let role = request.role.map(parse_role).transpose()?;
    if let Some(url) = &request.service_payload_url {
        check_url(url, "service_payload_url")?;
        check_interface(request.service_interface).map_err(|_| {
            RequestError::invalid_param("service_interface", "Invalid interface type")
        })?;
    }
    let caller = caller.clone();
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        let mut bot = access_bot(conn, &caller, bot_id)?;
        let mut settings = stored::get(conn, bot.id)?;
        let mut settings_changed = false;
        if let Some(name) = full_name.filter(|n| *n != bot.full_name) {
            check_bot_name_available(conn, &name)?;
            users::set_full_name(conn, bot.id, &name)?;
            bot.full_name = name.clone();
            events.push(full_name_changed(conn, &bot, &name)?);
            push_bot_update(conn, events, &bot, "full_name", json!(name))?;
        }
        if let Some(role) = role {
            check_role_change(conn, &caller, &bot, role)?;
            change_role_in(conn, events, &bot, role)?;
            bot.role = role;
        }
        if let Some(owner) = request.bot_owner_id {
            change_owner(&ctx2, conn, events, &mut bot, owner)?;
        }
        if let Some(name) = &request.default_sending_stream {
            let channel = access_channel_named(conn, &caller, name)?;
            if channel != settings.default_sending_stream {
                settings.default_sending_stream = channel;
                settings_changed = true;
                let name = channel_name(conn, channel)?;
                push_bot_update(conn, events, &bot, "default_sending_stream", json!(name))?;
            }
        }
        if let Some(name) = &request.default_events_register_stream {
            let channel = access_channel_named(conn, &caller, name)?;
            if channel != settings.default_events_register_stream {
                settings.default_events_register_stream = channel;
                settings_changed = true;
                let name = channel_name(conn, channel)?;
                push_bot_update(
                    conn,
                    events,
                    &bot,
                    "default_events_register_stream",
                    json!(name),
                )?;
            }
        }
        if let Some(all) = request
            .default_all_public_streams
            .filter(|a| *a != settings.default_all_public_streams)
        {
            settings.default_all_public_streams = all;
            settings_changed = true;
            push_bot_update(conn, events, &bot, "default_all_public_streams", json!(all))?;
        }
        if let Some(url) = &request.service_payload_url {
            if bot.bot_type == Some(BotType::OutgoingWebhook) {
                settings.service_base_url = Some(url.clone());
                settings.service_interface = Some(request.service_interface);
                settings_changed = true;
                let services = services(&bot, &settings);
                push_bot_update(conn, events, &bot, "services", services.into())?;
            }
        }
        if let Some(config) = &request.config_data {
            if bot.bot_type == Some(BotType::Embedded) {
                settings.service_config = Some(Value::Object(config.clone()).to_string());
                settings_changed = true;
                let services = services(&bot, &settings);
                push_bot_update(conn, events, &bot, "services", services.into())?;
            }
        }
        if settings_changed {
            stored::save(conn, bot.id, &settings)?;
        }
        let mut out = Map::new();
        out.insert("full_name".into(), json!(bot.full_name));
        out.insert("avatar_url".into(), json!(avatar_of(&ctx2, &bot)));
        out.insert("service_interface".into(), json!(request.service_interface));
        out.insert(
            "service_payload_url".into(),
            json!(request.service_payload_url),
        );
        out.insert("config_data".into(), json!(request.config_data));
        out.insert(
            "default_sending_stream".into(),
            json!(channel_name(conn, settings.default_sending_stream)?),
        );
        out.insert(
            "default_events_register_stream".into(),
            json!(channel_name(conn, settings.default_events_register_stream)?),
        );
        out.insert(
            "default_all_public_streams".into(),
            json!(settings.default_all_public_streams),
        );
        if let Some(owner) = bot.bot_owner_id {
            if let Some(owner) = users::by_id(conn, owner)? {
                out.insert("bot_owner".into(), json!(owner.api_email(&ctx2.realm.host)));
            }
        }
        Ok(out)
    })
    .await
}

/// `DELETE /bots/{bot_id}`: the bot's owner or an administrator deactivates it.
pub async fn deactivate_bot(ctx: &Context, caller: &User, bot_id: UserId) -> ActionResult<()> {
    if caller.role.is_guest() {
        return Err(RequestError::guests_not_allowed().into());
    }
    let caller = caller.clone();
    ctx.write(move |conn, events| {
        let bot = access_bot(conn, &caller, bot_id)?;
        crate::user_activation::deactivate_in(conn, events, &bot)
    })
    .await
}

/// `POST /bots/{bot_id}/api_key/regenerate`: a new API key for the bot; the old one stops
/// working at once. Administrators of the bot get `realm_bot` `update` with the key.
pub async fn regenerate_bot_api_key(
    ctx: &Context,
    caller: &User,
    bot_id: UserId,
) -> ActionResult<String> {
    if caller.role.is_guest() {
        return Err(RequestError::guests_not_allowed().into());
    }
    let caller = caller.clone();
    let key = secrets::generate_api_key();
    ctx.write(move |conn, events| {
        let bot = access_bot(conn, &caller, bot_id)?;
        users::set_api_key(conn, bot.id, &key)?;
        push_bot_update(conn, events, &bot, "api_key", json!(key))?;
        Ok(key)
    })
    .await
}

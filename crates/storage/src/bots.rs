//! What a bot has beyond its user row: default channels and its service (outgoing webhook or
//! embedded bot configuration).

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::{bot_settings as bots, users};
use diesel::prelude::*;
use parley_domain::{ChannelId, UserId};

/// A bot's settings row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BotSettings {
    /// The bot.
    pub user_id: Option<UserId>,
    /// Channel the bot sends to when a message names none.
    pub default_sending_stream: Option<ChannelId>,
    /// Channel the bot's event queues follow by default.
    pub default_events_register_stream: Option<ChannelId>,
    /// Whether the bot's queues follow every public channel.
    pub default_all_public_streams: bool,
    /// Embedded bots: the service's name.
    pub service_name: Option<String>,
    /// Outgoing webhooks: where messages are posted.
    pub service_base_url: Option<String>,
    /// Outgoing webhooks: the token the receiver checks.
    pub service_token: Option<String>,
    /// Outgoing webhooks: 1 native format, 2 Slack-compatible.
    pub service_interface: Option<i64>,
    /// Embedded bots: configuration, a JSON object as text.
    pub service_config: Option<String>,
}

type Row = (
    i64,
    Option<i64>,
    Option<i64>,
    bool,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
);

#[allow(clippy::type_complexity)]
fn columns() -> (
    bots::user_id,
    bots::default_sending_stream_id,
    bots::default_events_register_stream_id,
    bots::default_all_public_streams,
    bots::service_name,
    bots::service_base_url,
    bots::service_token,
    bots::service_interface,
    bots::service_config,
) {
    (
        bots::user_id,
        bots::default_sending_stream_id,
        bots::default_events_register_stream_id,
        bots::default_all_public_streams,
        bots::service_name,
        bots::service_base_url,
        bots::service_token,
        bots::service_interface,
        bots::service_config,
    )
}

fn from_row(row: Row) -> BotSettings {
    BotSettings {
        user_id: Some(UserId(row.0)),
        default_sending_stream: row.1.map(ChannelId),
        default_events_register_stream: row.2.map(ChannelId),
        default_all_public_streams: row.3,
        service_name: row.4,
        service_base_url: row.5,
        service_token: row.6,
        service_interface: row.7,
        service_config: row.8,
    }
}

/// Writes (inserts or replaces) a bot's settings.
pub fn save(conn: &mut DbConn, bot: UserId, s: &BotSettings) -> Result<(), StorageError> {
    diesel::delete(bots::table.find(bot.0)).execute(conn)?;
    diesel::insert_into(bots::table)
        .values((
            bots::user_id.eq(bot.0),
            bots::default_sending_stream_id.eq(s.default_sending_stream.map(|c| c.0)),
            bots::default_events_register_stream_id
                .eq(s.default_events_register_stream.map(|c| c.0)),
            bots::default_all_public_streams.eq(s.default_all_public_streams),
            bots::service_name.eq(&s.service_name),
            bots::service_base_url.eq(&s.service_base_url),
            bots::service_token.eq(&s.service_token),
            bots::service_interface.eq(s.service_interface),
            bots::service_config.eq(&s.service_config),
        ))
        .execute(conn)?;
    Ok(())
}

/// A bot's settings; defaults when it has no row (bots created before the table).
pub fn get(conn: &mut DbConn, bot: UserId) -> Result<BotSettings, StorageError> {
    Ok(bots::table
        .find(bot.0)
        .select(columns())
        .get_result::<Row>(conn)
        .optional()?
        .map(from_row)
        .unwrap_or(BotSettings {
            user_id: Some(bot),
            ..BotSettings::default()
        }))
}

/// Every bot's settings row.
pub fn all(conn: &mut DbConn) -> Result<Vec<BotSettings>, StorageError> {
    Ok(bots::table
        .order(bots::user_id)
        .select(columns())
        .load::<Row>(conn)?
        .into_iter()
        .map(from_row)
        .collect())
}

/// Whether a bot with this address exists (taken addresses cannot be reused).
pub fn email_taken(conn: &mut DbConn, email: &str) -> Result<bool, StorageError> {
    Ok(users::table
        .filter(users::delivery_email.eq(email))
        .count()
        .get_result::<i64>(conn)?
        > 0)
}

/// The active outgoing webhook bots (bot type 3): the users a message can trigger a webhook
/// call for.
pub fn active_outgoing_webhook_bots(conn: &mut DbConn) -> Result<Vec<UserId>, StorageError> {
    Ok(users::table
        .filter(users::bot_type.eq(3_i64))
        .filter(users::is_active.eq(true))
        .order(users::id)
        .select(users::id)
        .load::<i64>(conn)?
        .into_iter()
        .map(UserId)
        .collect())
}

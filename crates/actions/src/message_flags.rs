//! Per-user message flags: starring, marking read and unread, in bulk or by narrow.

use crate::access::{accessible_message, invalid_message};
use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::messages::flags_changed;
use crate::policy;
use parley_domain::message::flags;
use parley_domain::user::User;
use parley_domain::{ChannelId, MessageId, RequestError};
use parley_storage::messages::{self, Condition};
use parley_storage::{subscriptions, DbConn};
use serde_json::{json, Map, Value};

/// Add or remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagOp {
    /// Set the flag.
    Add,
    /// Clear the flag.
    Remove,
}

impl FlagOp {
    /// Parses `op`.
    pub fn parse(raw: &str) -> Result<FlagOp, RequestError> {
        match raw {
            "add" => Ok(FlagOp::Add),
            "remove" => Ok(FlagOp::Remove),
            other => Err(RequestError::invalid_param(
                "op",
                format!("Invalid message flag operation: '{other}'"),
            )),
        }
    }
}

/// The bit of a flag users may change.
pub fn editable_flag(name: &str) -> Result<i64, RequestError> {
    let bit = flags::bit(name)
        .ok_or_else(|| RequestError::invalid_param("flag", format!("Invalid flag: '{name}'")))?;
    if !flags::EDITABLE.contains(&name) {
        return Err(RequestError::invalid_param(
            "flag",
            format!("Flag not editable: '{name}'"),
        ));
    }
    Ok(bit)
}

/// Applies a flag change to messages inside a transaction; messages the user read from history
/// get a row of their own when the change needs one. Returns the IDs whose flags changed.
fn apply(
    conn: &mut DbConn,
    user: &User,
    ids: &[MessageId],
    bit: i64,
    op: FlagOp,
) -> ActionResult<Vec<MessageId>> {
    let policy = policy::load(conn)?;
    let default = flags::READ | flags::HISTORICAL;
    let mut changed = Vec::new();
    let with_rows = messages::with_rows(conn, user.id, ids)?;
    for id in ids.iter().filter(|id| !with_rows.contains(id)) {
        let found = accessible_message(conn, &policy, user, *id)?.ok_or_else(invalid_message)?;
        let wanted = match op {
            FlagOp::Add => default | bit,
            FlagOp::Remove => default & !bit,
        };
        if wanted == default {
            continue;
        }
        if op == FlagOp::Remove && bit == flags::READ {
            // Unread is only kept for channels the user is subscribed to.
            let subscribed = match found.row.channel_id {
                Some(c) => subscriptions::is_subscribed(conn, user.id, ChannelId(c))?,
                None => true,
            };
            if !subscribed {
                continue;
            }
        }
        messages::add_historical_row(conn, user.id, *id, wanted)?;
        changed.push(*id);
    }
    changed.extend(messages::update_flags(
        conn,
        user.id,
        ids,
        bit,
        op == FlagOp::Add,
    )?);
    changed.sort();
    changed.dedup();
    Ok(changed)
}

/// The `update_message_flags` event for a change; marking messages unread also says where
/// they are, so that clients can rebuild their unread counts.
fn flags_event(
    conn: &mut DbConn,
    user: &User,
    op: FlagOp,
    flag: &str,
    changed: &[MessageId],
) -> ActionResult<parley_events::Event> {
    let add = op == FlagOp::Add;
    if op == FlagOp::Remove && flag == "read" {
        let mut details = Map::new();
        // One query for every message and the user's flags on it.
        let audience = messages::Audience::new(user.id, Vec::new());
        for found in messages::by_ids_for(conn, &audience, changed, &[])? {
            let row = found.row;
            let id = MessageId(row.id);
            let bits = found.flags.unwrap_or(0);
            let mentioned = bits
                & (flags::MENTIONED
                    | flags::STREAM_WILDCARD_MENTIONED
                    | flags::TOPIC_WILDCARD_MENTIONED
                    | flags::GROUP_MENTIONED)
                != 0;
            let mut entry = Map::new();
            match (row.channel_id, &row.dm_key) {
                (Some(channel), _) => {
                    entry.insert("type".into(), "stream".into());
                    entry.insert("stream_id".into(), channel.into());
                    entry.insert("topic".into(), row.topic.clone().into());
                    entry.insert("unmuted_stream_msg".into(), true.into());
                }
                (None, key) => {
                    let others: Vec<i64> =
                        parley_domain::message::dm_participants(key.as_deref().unwrap_or(""))
                            .into_iter()
                            .filter(|u| *u != user.id)
                            .map(|u| u.0)
                            .collect();
                    entry.insert("type".into(), "private".into());
                    entry.insert("user_ids".into(), others.into());
                }
            }
            if mentioned {
                entry.insert("mentioned".into(), true.into());
            }
            details.insert(id.0.to_string(), Value::Object(entry));
        }
        return Ok(flags_changed(user.id, add, flag, changed, Some(details)));
    }
    Ok(flags_changed(user.id, add, flag, changed, None))
}

/// `POST /messages/flags`.
pub async fn update_flags(
    ctx: &Context,
    user: User,
    ids: Vec<MessageId>,
    op: FlagOp,
    flag: String,
) -> ActionResult<Map<String, Value>> {
    let bit = editable_flag(&flag)?;
    ctx.write(move |conn, events| {
        let changed = apply(conn, &user, &ids, bit, op)?;
        events.push(flags_event(conn, &user, op, &flag, &changed)?);
        let mut out = Map::new();
        out.insert("messages".into(), json!(ids));
        out.insert("ignored_because_not_subscribed_channels".into(), json!([]));
        Ok(out)
    })
    .await
}

/// `POST /messages/flags/narrow`: changes a flag on the messages a narrow selects around an
/// anchor.
pub async fn update_flags_for_narrow(
    ctx: &Context,
    user: User,
    query: crate::messages_read::MessageQuery,
    op: FlagOp,
    flag: String,
) -> ActionResult<Map<String, Value>> {
    let bit = editable_flag(&flag)?;
    let page = crate::messages_read::select_ids(ctx, user.clone(), query).await?;
    let ids = page.ids.clone();
    let changed = ctx
        .write(move |conn, events| {
            let changed = apply(conn, &user, &ids, bit, op)?;
            events.push(flags_event(conn, &user, op, &flag, &changed)?);
            Ok(changed)
        })
        .await?;
    let mut out = Map::new();
    out.insert("processed_count".into(), page.ids.len().into());
    out.insert("updated_count".into(), changed.len().into());
    out.insert("first_processed_id".into(), json!(page.ids.first()));
    out.insert("last_processed_id".into(), json!(page.ids.last()));
    out.insert("found_oldest".into(), page.found_oldest.into());
    out.insert("found_newest".into(), page.found_newest.into());
    out.insert("ignored_because_not_subscribed_channels".into(), json!([]));
    Ok(out)
}

/// Marks the user's unread messages matching `conditions` as read.
pub async fn mark_read(
    ctx: &Context,
    user: User,
    conditions: Vec<Condition>,
) -> ActionResult<usize> {
    ctx.write(move |conn, events| {
        let changed = messages::mark_read_where(conn, user.id, &conditions)?;
        events.push(flags_changed(user.id, true, "read", &changed, None));
        Ok(changed.len())
    })
    .await
}

/// `POST /mark_stream_as_read` and `/mark_topic_as_read`: checks the channel (and topic)
/// first. A named topic the user has no messages in is an error.
pub async fn mark_channel_read(
    ctx: &Context,
    user: User,
    channel: ChannelId,
    topic: Option<String>,
) -> ActionResult<()> {
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        crate::access::access_channel_by_id(conn, &policy, &user, channel)?;
        let mut conditions = vec![Condition::Channel(channel)];
        if let Some(topic) = &topic {
            let topic = parley_domain::message::normalize_topic(topic, "topic_name")?;
            conditions.push(Condition::Topic(topic.clone()));
            let audience = messages::Audience::new(user.id, Vec::new());
            let any = messages::page(
                conn,
                &audience,
                &conditions,
                i64::MAX,
                messages::Direction::Before,
                true,
                1,
            )?;
            if any.is_empty() && !topic.is_empty() {
                return Err(RequestError::bad_request(format!("No such topic '{topic}'")).into());
            }
        }
        let changed = messages::mark_read_where(conn, user.id, &conditions)?;
        events.push(flags_changed(user.id, true, "read", &changed, None));
        Ok(())
    })
    .await
}

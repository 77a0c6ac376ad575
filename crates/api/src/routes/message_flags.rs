//! Message flags and marking messages read.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{Json, ParamMap, Params};
use crate::routes::messages::message_query;
use actix_web::web;
use parley_actions::message_flags::{self, FlagOp};
use parley_actions::messages_read::MessageQuery;
use parley_actions::Context;
use parley_domain::{ChannelId, MessageId, RequestError};

params! {
    /// `POST /messages/flags`.
    pub struct UpdateFlags {
        messages: Json<Vec<MessageId>>,
        op: String,
        flag: String,
    }
}

/// POST /messages/flags — add or remove a flag on messages.
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<UpdateFlags>,
) -> ApiResult<Success> {
    let op = FlagOp::parse(&p.op)?;
    let result = message_flags::update_flags(&ctx, me, p.messages.0, op, p.flag).await?;
    Ok(Success::from_fields(result))
}

/// `POST /messages/flags/narrow`.
#[derive(Debug)]
pub struct UpdateFlagsForNarrow {
    query: MessageQuery,
    op: FlagOp,
    flag: String,
}

impl params::FromParams for UpdateFlagsForNarrow {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let mut query = message_query(p, true)?;
        // The reference clamps rather than refuses here; negative values are refused later.
        if query.num_before >= 0 && query.num_after >= 0 {
            let total = query.num_before.saturating_add(query.num_after);
            if total > 5000 {
                query.num_before = query
                    .num_before
                    .min(5000_i64.saturating_sub(query.num_after).max(2500));
                query.num_after = query.num_after.min(5000 - query.num_before);
            }
        }
        Ok(UpdateFlagsForNarrow {
            query,
            op: FlagOp::parse(&p.take::<String>("op")?)?,
            flag: p.take("flag")?,
        })
    }
}

/// POST /messages/flags/narrow — change a flag on the messages of a narrow around an anchor.
pub async fn update_for_narrow(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<UpdateFlagsForNarrow>,
) -> ApiResult<Success> {
    let result = message_flags::update_flags_for_narrow(&ctx, me, p.query, p.op, p.flag).await?;
    Ok(Success::from_fields(result))
}

params! {
    /// `POST /mark_all_as_read`.
    pub struct MarkAll {}
}

/// POST /mark_all_as_read — mark every message read.
pub async fn mark_all(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<MarkAll>,
) -> ApiResult<Success> {
    message_flags::mark_read(&ctx, me, Vec::new()).await?;
    Ok(Success::empty().with("complete", true))
}

params! {
    /// `POST /mark_stream_as_read`.
    pub struct MarkChannel {
        stream_id: i64,
    }
}

/// POST /mark_stream_as_read — mark a channel's messages read.
pub async fn mark_channel(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<MarkChannel>,
) -> ApiResult<Success> {
    message_flags::mark_channel_read(&ctx, me, ChannelId(p.stream_id), None).await?;
    Ok(Success::empty())
}

params! {
    /// `POST /mark_topic_as_read`.
    pub struct MarkTopic {
        stream_id: i64,
        topic_name: String,
    }
}

/// POST /mark_topic_as_read — mark a topic's messages read.
pub async fn mark_topic(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<MarkTopic>,
) -> ApiResult<Success> {
    message_flags::mark_channel_read(&ctx, me, ChannelId(p.stream_id), Some(p.topic_name)).await?;
    Ok(Success::empty())
}

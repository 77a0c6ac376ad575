//! Topic visibility policies.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::Params;
use actix_web::web;
use parley_actions::user_topics;
use parley_actions::Context;
use parley_domain::ChannelId;

params! {
    /// `POST /user_topics`.
    pub struct UserTopicParams {
        stream_id: i64,
        topic: String,
        visibility_policy: i64,
    }
}

/// POST /user_topics — mute, unmute or follow a topic, or return it to the channel's default.
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<UserTopicParams>,
) -> ApiResult<Success> {
    user_topics::do_set_user_topic(
        &ctx,
        me,
        ChannelId(p.stream_id),
        p.topic,
        p.visibility_policy,
    )
    .await?;
    Ok(Success::empty())
}

params! {
    /// `PATCH /users/me/subscriptions/muted_topics`.
    pub struct LegacyMuteParams {
        stream_id: Option<i64>,
        stream: Option<String>,
        topic: String,
        op: String,
    }
}

/// PATCH /users/me/subscriptions/muted_topics — the deprecated way to mute or unmute a topic.
pub async fn legacy_mute(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<LegacyMuteParams>,
) -> ApiResult<Success> {
    let channel = match (p.stream_id, p.stream) {
        (Some(id), None) => user_topics::ChannelRef::Id(ChannelId(id)),
        (None, Some(name)) => user_topics::ChannelRef::Name(name),
        _ => {
            return Err(parley_domain::RequestError::bad_request(
                "Please supply 'stream' or 'stream_id' (but not both).",
            )
            .into())
        }
    };
    user_topics::do_legacy_mute(&ctx, me, channel, p.topic, p.op).await?;
    Ok(Success::empty())
}

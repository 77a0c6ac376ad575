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

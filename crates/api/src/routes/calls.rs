//! Video calls: BigBlueButton meetings (`GET /calls/bigbluebutton/create`) and their join links
//! (`GET /calls/bigbluebutton/join`, outside `/api/v1`).

use crate::auth::{Auth, MaybeAuth};
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::Params;
use actix_web::{http::header, web, HttpResponse};
use parley_actions::calls;
use parley_actions::Context;

params! {
    /// `GET /calls/bigbluebutton/create`.
    pub struct CreateParams {
        meeting_name: String,
        voice_only: Option<bool>,
    }
}

/// GET /calls/bigbluebutton/create — a BigBlueButton meeting the caller moderates.
pub async fn create_bigbluebutton(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<CreateParams>,
) -> ApiResult<Success> {
    let url = calls::create_bigbluebutton_call(
        &ctx,
        &me,
        &p.meeting_name,
        p.voice_only.unwrap_or(false),
    )?;
    Ok(Success::empty().with("url", url))
}

params! {
    /// `GET /calls/bigbluebutton/join`.
    pub struct JoinParams {
        bigbluebutton: String,
    }
}

/// GET /calls/bigbluebutton/join — create the meeting on the BigBlueButton server and go there.
pub async fn join_bigbluebutton(
    ctx: web::Data<Context>,
    MaybeAuth(viewer): MaybeAuth,
    Params(p): Params<JoinParams>,
) -> ApiResult<HttpResponse> {
    let url = calls::join_bigbluebutton_call(&ctx, viewer, &p.bigbluebutton).await?;
    Ok(HttpResponse::Found()
        .insert_header((header::LOCATION, url))
        .finish())
}

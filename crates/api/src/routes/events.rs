//! Event queues: register, poll, delete.

use crate::auth::{Auth, MaybeAuth, PollerAuth};
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{Json, ParamMap, Params};
use actix_web::{web, Either, HttpRequest, HttpResponse};
use parley_actions::event_queues::{self, Answer, GetEvents};
use parley_actions::register::{self, ClientCapabilities, IncludeSubscribers, RegisterRequest};
use parley_actions::Context;
use parley_domain::message::client_name;
use parley_domain::RequestError;
use serde_json::Value;

fn include_subscribers(p: &mut ParamMap) -> Result<IncludeSubscribers, RequestError> {
    let Some(raw) = p.take::<Option<String>>("include_subscribers")? else {
        return Ok(IncludeSubscribers::No);
    };
    match raw.trim().trim_matches('"') {
        "true" => Ok(IncludeSubscribers::All),
        "false" => Ok(IncludeSubscribers::No),
        "partial" => Ok(IncludeSubscribers::Partial),
        _ => Err(RequestError::invalid_param(
            "include_subscribers",
            "Invalid include_subscribers",
        )),
    }
}

fn capabilities(p: &mut ParamMap) -> Result<ClientCapabilities, RequestError> {
    let Some(Json(map)) =
        p.take::<Option<Json<serde_json::Map<String, Value>>>>("client_capabilities")?
    else {
        return Ok(ClientCapabilities::default());
    };
    let flag = |name: &str| -> Result<bool, RequestError> {
        match map.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(RequestError::invalid_param(
                "client_capabilities",
                format!("client_capabilities[\"{name}\"] is not a boolean"),
            )),
        }
    };
    Ok(ClientCapabilities {
        notification_settings_null: flag("notification_settings_null")?,
        bulk_message_deletion: flag("bulk_message_deletion")?,
        user_avatar_url_field_optional: flag("user_avatar_url_field_optional")?,
        stream_typing_notifications: flag("stream_typing_notifications")?,
        user_settings_object: flag("user_settings_object")?,
        linkifier_url_template: flag("linkifier_url_template")?,
        user_list_incomplete: flag("user_list_incomplete")?,
        include_deactivated_groups: flag("include_deactivated_groups")?,
        archived_channels: flag("archived_channels")?,
        empty_topic_name: flag("empty_topic_name")?,
        simplified_presence_events: flag("simplified_presence_events")?,
    })
}

/// `narrow` of register: `[["stream", "x"], ...]` or `[{"operator": .., "operand": ..}]`.
fn register_narrow(p: &mut ParamMap) -> Result<Vec<(String, String)>, RequestError> {
    let Some(Json(items)) = p.take::<Option<Json<Vec<Value>>>>("narrow")? else {
        return Ok(Vec::new());
    };
    let bad = || RequestError::invalid_param("narrow", "Invalid narrow");
    items
        .iter()
        .map(|item| match item {
            Value::Array(pair) if pair.len() == 2 => Ok((
                pair[0].as_str().ok_or_else(bad)?.to_owned(),
                pair[1].as_str().ok_or_else(bad)?.to_owned(),
            )),
            Value::Object(term) => Ok((
                term.get("operator")
                    .and_then(Value::as_str)
                    .ok_or_else(bad)?
                    .to_owned(),
                term.get("operand")
                    .and_then(Value::as_str)
                    .ok_or_else(bad)?
                    .to_owned(),
            )),
            _ => Err(bad()),
        })
        .collect()
}

/// The register parameters, shared by `POST /register` and `GET /events` without a queue.
fn register_request(p: &mut ParamMap) -> Result<RegisterRequest, RequestError> {
    Ok(RegisterRequest {
        apply_markdown: p.take::<Option<bool>>("apply_markdown")?.unwrap_or(false),
        client_gravatar: p.take::<Option<bool>>("client_gravatar")?.unwrap_or(true),
        include_subscribers: include_subscribers(p)?,
        slim_presence: p.take::<Option<bool>>("slim_presence")?.unwrap_or(false),
        presence_history_limit_days: p.take::<Option<i64>>("presence_history_limit_days")?,
        event_types: p
            .take::<Option<Json<Vec<String>>>>("event_types")?
            .map(|Json(list)| list),
        fetch_event_types: p
            .take::<Option<Json<Vec<String>>>>("fetch_event_types")?
            .map(|Json(list)| list),
        all_public_streams: p.take::<Option<bool>>("all_public_streams")?,
        client_capabilities: capabilities(p)?,
        narrow: register_narrow(p)?,
        client_name: String::new(),
    })
}

/// `POST /register`, with `client_gravatar` as sent (its default depends on authentication).
#[derive(Debug)]
pub struct RegisterParams(RegisterRequest, Option<bool>);

impl params::FromParams for RegisterParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let client_gravatar = p.take::<Option<bool>>("client_gravatar")?;
        let mut request = register_request(p)?;
        request.client_gravatar = client_gravatar.unwrap_or(true);
        Ok(RegisterParams(request, client_gravatar))
    }
}

fn user_agent_client(request: &HttpRequest) -> String {
    client_name(
        request
            .headers()
            .get(actix_web::http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok()),
    )
}

/// POST /register — create an event queue and fetch the initial state.
pub async fn register(
    ctx: web::Data<Context>,
    MaybeAuth(me): MaybeAuth,
    request: HttpRequest,
    Params(RegisterParams(mut p, client_gravatar)): Params<RegisterParams>,
) -> ApiResult<Success> {
    p.client_name = user_agent_client(&request);
    let snapshot = match me {
        Some(me) => register::do_register(&ctx, me, p).await?,
        None => register::do_register_spectator(&ctx, client_gravatar, p).await?,
    };
    Ok(Success::from_snapshot(snapshot))
}

/// `GET /events`.
#[derive(Debug)]
pub struct GetEventsParams(GetEvents);

impl params::FromParams for GetEventsParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let queue_id = p.take::<Option<String>>("queue_id")?;
        let last_event_id = p.take::<Option<i64>>("last_event_id")?;
        let dont_block = p.take::<Option<bool>>("dont_block")?.unwrap_or(false);
        // As the reference: only a non-blocking poll may register a queue on the fly; a
        // blocking one without a queue is a client mistake, not a reason to wait.
        let register = match &queue_id {
            None if dont_block => register_request(p)?,
            None => return Err(RequestError::bad_request("Missing 'queue_id' argument")),
            Some(_) => RegisterRequest::default(),
        };
        Ok(GetEventsParams(GetEvents {
            queue_id,
            last_event_id,
            dont_block,
            register,
        }))
    }
}

/// The caller's `Authorization` header, passed on when the request is forwarded, and whether
/// the request was itself forwarded by another server process.
fn forwarding(request: &HttpRequest) -> (Option<String>, bool) {
    let authorization = request
        .headers()
        .get(actix_web::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let forwarded = request
        .headers()
        .contains_key(event_queues::FORWARDED_HEADER);
    (authorization, forwarded)
}

/// Another server process's answer, passed on as it came.
fn passed_on(status: u16, body: Vec<u8>) -> HttpResponse {
    let status = actix_web::http::StatusCode::from_u16(status)
        .unwrap_or(actix_web::http::StatusCode::BAD_GATEWAY);
    HttpResponse::build(status)
        .content_type("application/json")
        .body(body)
}

/// GET /events — long-poll a queue for new events; metered by the action, not the extractor.
/// A queue held by another server process is polled there.
pub async fn get(
    ctx: web::Data<Context>,
    PollerAuth(me): PollerAuth,
    request: HttpRequest,
    Params(GetEventsParams(mut p)): Params<GetEventsParams>,
) -> ApiResult<Either<Success, HttpResponse>> {
    p.register.client_name = user_agent_client(&request);
    let (authorization, forwarded) = forwarding(&request);
    Ok(
        match event_queues::get_events_anywhere(&ctx, me, p, authorization.as_deref(), forwarded)
            .await?
        {
            Answer::Here(batch) => Either::Left(Success::from_fields(batch)),
            Answer::Forwarded { status, body } => Either::Right(passed_on(status, body)),
        },
    )
}

params! {
    /// `DELETE /events`.
    pub struct DeleteQueueParams {
        queue_id: String,
    }
}

/// DELETE /events — delete an event queue (where it is held).
pub async fn delete(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    request: HttpRequest,
    Params(p): Params<DeleteQueueParams>,
) -> ApiResult<Either<Success, HttpResponse>> {
    let (authorization, forwarded) = forwarding(&request);
    Ok(
        match event_queues::delete_queue_anywhere(
            &ctx,
            me,
            p.queue_id,
            authorization.as_deref(),
            forwarded,
        )
        .await?
        {
            Answer::Here(()) => Either::Left(Success::empty()),
            Answer::Forwarded { status, body } => Either::Right(passed_on(status, body)),
        },
    )
}

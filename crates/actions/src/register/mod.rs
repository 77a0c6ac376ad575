//! `POST /register`: creates an event queue and returns the snapshot of everything the client
//! asked for. In one process, the queue is created and the snapshot read while no action may
//! publish; with the event log, the snapshot is read at a log position and the queue receives
//! the entries after it. Either way the snapshot plus the queue's events never miss or double
//! a change.

mod channel_state;
mod config_state;
mod input;
mod message_state;
mod people;
mod people_state;
mod personal_state;
mod presence_state;
mod realm_state;
mod settings_state;

pub use input::Snapshot;
use input::{put, SnapshotInput, Wanted};
pub use input::{IncludeSubscribers, RegisterRequest};

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::policy;
pub use input::ClientCapabilities;
use parley_domain::user::User;
use parley_domain::RequestError;
use parley_events::{NarrowFilter, QueueOptions};
use parley_storage::realms;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

fn narrow_filters(pairs: &[(String, String)]) -> Result<Vec<NarrowFilter>, RequestError> {
    pairs
        .iter()
        .map(|(operator, operand)| {
            let bad = || {
                RequestError::invalid_param("narrow", "Invalid narrow operator: unknown operator")
            };
            Ok(match (operator.as_str(), operand.as_str()) {
                ("stream" | "channel", name) => NarrowFilter::Channel(name.to_owned()),
                ("topic" | "subject", topic) => NarrowFilter::Topic(topic.to_owned()),
                ("sender", email) => NarrowFilter::Sender(email.to_owned()),
                ("is", "dm" | "private") => NarrowFilter::IsDm,
                ("is", "starred") => NarrowFilter::IsStarred,
                ("is", "mentioned") => NarrowFilter::IsMentioned,
                ("is", "unread") => NarrowFilter::IsUnread,
                ("is", "alerted") => NarrowFilter::IsAlerted,
                _ => return Err(bad()),
            })
        })
        .collect()
}

fn to_set(list: &Option<Vec<String>>) -> Option<BTreeSet<String>> {
    list.as_ref().map(|l| l.iter().cloned().collect())
}

/// The options of a queue registered with these parameters.
pub(crate) fn queue_options(
    user: &User,
    request: &RegisterRequest,
) -> Result<QueueOptions, RequestError> {
    if let Some(days) = request.presence_history_limit_days {
        if days < 0 {
            return Err(RequestError::invalid_param(
                "presence_history_limit_days",
                "Invalid presence_history_limit_days",
            ));
        }
    }
    Ok(QueueOptions {
        user_id: user.id,
        apply_markdown: request.apply_markdown,
        client_gravatar: request.client_gravatar,
        all_public_streams: request.all_public_streams.unwrap_or(false),
        event_types: to_set(&request.event_types),
        narrow: narrow_filters(&request.narrow)?,
        capabilities: request.client_capabilities.clone(),
        client_name: request.client_name.clone(),
        empty_topic_display_name: parley_domain::message::EMPTY_TOPIC_DISPLAY_NAME.to_owned(),
    })
}

/// A bot's register defaults, as the reference applies them: `default_all_public_streams` when
/// the request does not say, and a narrow to `default_events_register_stream` when the request
/// has no narrow (a channel that no longer exists is no narrow).
pub(crate) async fn with_bot_defaults(
    ctx: &Context,
    user: &User,
    mut request: RegisterRequest,
) -> ActionResult<RegisterRequest> {
    if !user.is_bot() || (request.all_public_streams.is_some() && !request.narrow.is_empty()) {
        return Ok(request);
    }
    let bot = user.id;
    let (all_public, channel) = ctx
        .run(move |conn| {
            let settings = parley_storage::bots::get(conn, bot)?;
            let channel = match settings.default_events_register_stream {
                Some(id) => parley_storage::channels::by_id(conn, id)?
                    .filter(|c| !c.is_archived)
                    .map(|c| c.name),
                None => None,
            };
            Ok::<_, ActionError>((settings.default_all_public_streams, channel))
        })
        .await?;
    if request.all_public_streams.is_none() {
        request.all_public_streams = Some(all_public);
    }
    if request.narrow.is_empty() {
        if let Some(name) = channel {
            request.narrow = vec![("stream".to_owned(), name)];
        }
    }
    Ok(request)
}

/// `POST /register`: a new queue and the snapshot (with `queue_id` and `last_event_id`).
pub async fn do_register(
    ctx: &Context,
    user: User,
    request: RegisterRequest,
) -> ActionResult<Snapshot> {
    let request = with_bot_defaults(ctx, &user, request).await?;
    let options = queue_options(&user, &request)?;
    if let Some(log) = ctx.events.log() {
        // The snapshot is read at a log position; the queue takes the entries after it. Not
        // through the organization cache: it may still hold data of entries this process has
        // not delivered yet, and a load inside this older snapshot must not fill it.
        let ctx2 = ctx.clone();
        let (position, mut snapshot) = ctx
            .db
            .run(move |conn| {
                parley_storage::event_log::at_snapshot(conn, |conn, position| {
                    let snapshot = fetch_snapshot(&ctx2, conn, Reading::Shared, &user, &request)?;
                    Ok::<_, ActionError>((position, snapshot))
                })
            })
            .await?;
        let queue_id = log.register_after(options, position).await?;
        snapshot.insert("queue_id".into(), queue_id.into());
        snapshot.insert("last_event_id".into(), (-1).into());
        return Ok(snapshot);
    }
    // No action publishes between the queue's creation and the snapshot's read.
    let _exclusive = ctx.events.exclusive().await;
    let user_id = user.id;
    let (queue_id, last_event_id) = ctx.events.engine().register(options);
    let ctx2 = ctx.clone();
    let snapshot = ctx
        .run(move |conn| fetch_snapshot(&ctx2, conn, Reading::Alone, &user, &request))
        .await;
    let mut snapshot = match snapshot {
        Ok(snapshot) => snapshot,
        Err(err) => {
            let _ = ctx.events.engine().delete_queue(user_id, &queue_id);
            return Err(err);
        }
    };
    snapshot.insert("queue_id".into(), queue_id.into());
    snapshot.insert("last_event_id".into(), last_event_id.into());
    Ok(snapshot)
}

/// `POST /register` without credentials, in organizations that allow public access: no queue
/// (`queue_id` null) and what a spectator may see: the organization and its web-public channels.
/// Asking for Gravatar handling or subscriber lists is an error then, as the spec says.
pub async fn do_register_spectator(
    ctx: &Context,
    client_gravatar: Option<bool>,
    request: RegisterRequest,
) -> ActionResult<Snapshot> {
    if client_gravatar == Some(true) {
        return Err(RequestError::invalid_param(
            "client_gravatar",
            "Invalid 'client_gravatar' parameter for anonymous request",
        )
        .into());
    }
    if request.include_subscribers != IncludeSubscribers::No {
        return Err(RequestError::invalid_param(
            "include_subscribers",
            "Invalid 'include_subscribers' parameter for anonymous request",
        )
        .into());
    }
    let ctx2 = ctx.clone();
    ctx.run(move |conn| {
        let realm = realms::get(conn)?.ok_or_else(|| ActionError::Internal("no realm".into()))?;
        if !realm.enable_spectator_access {
            return Err(RequestError::new(
                parley_domain::ErrorCode::Unauthorized,
                "Not logged in: API authentication or user session required",
            )
            .into());
        }
        let kinds = request
            .fetch_event_types
            .as_ref()
            .or(request.event_types.as_ref());
        let wanted = Wanted(kinds.map(|list| list.iter().cloned().collect()));
        let policy = policy::load(conn)?;
        let stored_realm = realms::permissions(conn)?;
        let mut out = Snapshot::default();
        realm_state::versions(&mut out);
        if wanted.wants("realm") {
            let everyone = parley_storage::users::all(conn)?;
            realm_state::realm_fields(
                &ctx2,
                &policy,
                &stored_realm,
                conn,
                &everyone,
                &realm,
                &mut out,
            )?;
        }
        if wanted.wants("stream") || wanted.wants("subscription") {
            let counts = parley_storage::subscriptions::subscriber_counts(conn)?;
            let public: Vec<parley_wire::Channel> = parley_storage::channels::all(conn)?
                .into_iter()
                .filter(|c| c.is_web_public && !c.is_archived)
                .map(|c| {
                    let count = counts.get(&c.id).copied().unwrap_or(0);
                    parley_wire::Channel::new(&c, count)
                })
                .collect();
            if wanted.wants("stream") {
                put(&mut out, "streams", &public);
            }
            if wanted.wants("subscription") {
                // Spectators read web-public channels as if subscribed to them.
                put(&mut out, "subscriptions", &public);
                out.insert("unsubscribed".into(), Value::Array(Vec::new()));
                out.insert("never_subscribed".into(), Value::Array(Vec::new()));
            }
        }
        if wanted.wants("realm_user") {
            out.insert("realm_users".into(), Value::Array(Vec::new()));
            out.insert("realm_non_active_users".into(), Value::Array(Vec::new()));
            out.insert("cross_realm_bots".into(), Value::Array(Vec::new()));
        }
        if wanted.wants("message") {
            out.insert("max_message_id".into(), (-1).into());
        }
        people_state::fill_spectator(&wanted, &mut out);
        personal_state::fill_spectator(&wanted, &mut out);
        config_state::fill(conn, &wanted, &request, &mut out)?;
        empty_collections(&wanted, &mut out);
        out.insert("queue_id".into(), Value::Null);
        out.insert("last_event_id".into(), (-1).into());
        Ok(out)
    })
    .await
}

/// How a snapshot is read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// On the one connection given.
    Alone,
    /// In a `REPEATABLE READ` transaction (`event_log::at_snapshot`), which another idle
    /// connection may join to read the message part at the same time as the rest (on
    /// PostgreSQL the two halves were about 13 and 16 ms of a 28 ms register).
    Shared,
}

/// Reads the snapshot: the parts `fetch_event_types` (else `event_types`) asks for.
pub(crate) fn fetch_snapshot(
    ctx: &Context,
    conn: &mut parley_storage::DbConn,
    reading: Reading,
    user: &User,
    request: &RegisterRequest,
) -> ActionResult<Snapshot> {
    let kinds = request
        .fetch_event_types
        .as_ref()
        .or(request.event_types.as_ref());
    let wanted = Wanted(kinds.map(|list| list.iter().cloned().collect()));
    let policy = policy::load(conn)?;
    let stored_realm = realms::permissions(conn)?;
    let input = SnapshotInput {
        ctx,
        user,
        request,
        policy: &policy,
        everyone: Default::default(),
    };
    let messages = |conn: &mut parley_storage::DbConn| {
        let mut part = Snapshot::default();
        message_state::fill(&input, &wanted, conn, &mut part)?;
        Ok::<_, ActionError>(part)
    };
    let message_part = [
        "message",
        "starred_messages",
        "recent_private_conversations",
    ];
    let split = reading == Reading::Shared && message_part.iter().any(|k| wanted.wants(k));
    let (mut out, messages) = if split {
        parley_storage::shared_snapshot::both(
            &ctx.db,
            conn,
            |conn| other_parts(&input, &wanted, &stored_realm, conn),
            messages,
        )?
    } else {
        (
            other_parts(&input, &wanted, &stored_realm, conn)?,
            messages(conn)?,
        )
    };
    out.extend(messages);
    Ok(out)
}

/// Every part of the snapshot but the message part.
fn other_parts(
    input: &SnapshotInput<'_>,
    wanted: &Wanted,
    stored_realm: &std::collections::HashMap<String, String>,
    conn: &mut parley_storage::DbConn,
) -> ActionResult<Snapshot> {
    let (ctx, user, request, policy) = (input.ctx, input.user, input.request, input.policy);
    let mut out = Snapshot::default();
    realm_state::versions(&mut out);
    let realm = realms::get(conn)?.ok_or_else(|| ActionError::Internal("no realm".into()))?;
    if wanted.wants("realm") {
        let everyone = input.everyone(conn)?;
        realm_state::realm_fields(ctx, policy, stored_realm, conn, everyone, &realm, &mut out)?;
    }
    people::fill(input, wanted, conn, &mut out)?;
    channel_state::fill(input, wanted, conn, &mut out)?;
    settings_state::fill(input, wanted, conn, &mut out)?;
    if wanted.wants("user_topic") || wanted.wants("muted_topics") {
        let (user_topics, muted) = crate::user_topics::snapshot(conn, user.id, |t| input.topic(t))?;
        if wanted.wants("user_topic") {
            put(&mut out, "user_topics", user_topics);
        }
        if wanted.wants("muted_topics") {
            put(&mut out, "muted_topics", muted);
        }
    }
    presence_state::fill(input, wanted, conn, &mut out)?;
    people_state::fill(input, wanted, conn, &mut out)?;
    personal_state::fill(input, wanted, conn, &mut out)?;
    config_state::fill(conn, wanted, request, &mut out)?;
    empty_collections(wanted, &mut out);
    Ok(out)
}

/// Parts whose features arrive with later work: present with their empty values so that
/// clients reading them find the shapes they expect.
fn empty_collections(wanted: &Wanted, out: &mut Snapshot) {
    let empty_list = || Value::Array(Vec::new());
    let empty_map = || Value::Object(Map::new());
    type Part = (&'static str, &'static str, fn() -> Value);
    let parts: [Part; 6] = [
        ("scheduled_messages", "scheduled_messages", || {
            Value::Array(Vec::new())
        }),
        (
            "realm_filters",
            "realm_filters",
            || Value::Array(Vec::new()),
        ),
        (
            "realm_domains",
            "realm_domains",
            || Value::Array(Vec::new()),
        ),
        (
            "default_stream_groups",
            "realm_default_stream_groups",
            || Value::Array(Vec::new()),
        ),
        ("stop_words", "stop_words", || Value::Array(Vec::new())),
        ("onboarding_steps", "onboarding_steps", || {
            Value::Array(Vec::new())
        }),
    ];
    for (kind, key, value) in parts {
        if wanted.wants(kind) && !out.contains_key(key) {
            out.insert(key.into(), value());
        }
    }
    if wanted.wants("realm_embedded_bots") {
        out.insert("realm_embedded_bots".into(), empty_list());
    }
    if wanted.wants("realm_incoming_webhook_bots") {
        out.insert("realm_incoming_webhook_bots".into(), empty_list());
    }
    if wanted.wants("video_calls") {
        out.insert("has_zoom_token".into(), false.into());
    }
    if wanted.wants("giphy") {
        out.insert("giphy_api_key".into(), "".into());
    }
    if wanted.wants("presence") && !out.contains_key("presences") {
        out.insert("presences".into(), empty_map());
    }
}

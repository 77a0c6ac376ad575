//! Presence: clients report whether their user is active or idle and get everybody's presence
//! back, in the modern format (keyed by user ID, with the incremental `last_update_id`
//! protocol) or the legacy one (keyed by API email). Reports write only when they move a stored
//! time by more than the reference's thresholds, and others are told at once (a `presence`
//! event) only when a user first reports or comes back online.

use crate::auth::{user_by_any_email, AddressMatch};
use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::user_settings::flag;
use crate::users::UserRef;
use parley_domain::presence::{
    self, history_cutoff, plan_update, PresenceStatus, PresenceTimes, DEFAULT_HISTORY_LIMIT_DAYS,
    LEGACY_CLIENT, USER_LIMIT_FOR_PRESENCE_EVENTS,
};
use parley_domain::user::{can_access_delivery_email, User};
use parley_domain::{RequestError, UserId};
use parley_events::{Body, Capability, Event};
use parley_storage::presence::{self as stored, PresenceFilter};
use parley_storage::{users, DbConn};
use parley_wire::event::PresenceEvent;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The parameters of `POST /users/me/presence`.
#[derive(Debug, Clone)]
pub struct PresenceReport {
    /// `active` or `idle`.
    pub status: String,
    /// The `presence_last_update_id` of the client's previous fetch (`-1` on its first); passing
    /// it asks for the modern format and only what changed since.
    pub last_update_id: Option<i64>,
    /// Oldest data to return, in days; ignored when `last_update_id` is above 0.
    pub history_limit_days: Option<i64>,
    /// Record the report but return no presence data.
    pub ping_only: bool,
    /// Whether the user interacted with the client (accepted; Parley keeps no activity log).
    pub new_user_input: bool,
    /// Deprecated request for the modern format.
    pub slim_presence: bool,
}

/// Now, in seconds and as the float `server_timestamp` the API returns.
fn clock() -> (i64, f64) {
    let now = ::time::OffsetDateTime::now_utc();
    let seconds = now.unix_timestamp();
    let precise = now.unix_timestamp_nanos() as f64 / 1e9;
    (seconds, precise)
}

/// Whether a user shares their presence.
fn shares_presence(conn: &mut DbConn, user: &User) -> Result<bool, parley_storage::StorageError> {
    flag(conn, user, "presence_enabled")
}

/// The `presence` event for a user whose presence just changed: modern for clients with
/// `simplified_presence_events`, legacy for the others; None when nobody should get it.
fn presence_event(
    conn: &mut DbConn,
    host: &str,
    user: &User,
    times: &PresenceTimes,
    server_timestamp: f64,
) -> ActionResult<Option<Event>> {
    let audience: Vec<UserId> = users::all(conn)?
        .into_iter()
        .filter(|u| u.is_active)
        .map(|u| u.id)
        .collect();
    if audience.len() > USER_LIMIT_FOR_PRESENCE_EVENTS {
        return Ok(None);
    }
    let mut presences = Map::new();
    presences.insert(
        user.id.0.to_string(),
        presence::modern(times, user.date_joined),
    );
    let modern = PresenceEvent {
        presences: Some(presences),
        user_id: None,
        email: None,
        server_timestamp: None,
        presence: None,
    };
    let mut clients = Map::new();
    clients.insert(
        LEGACY_CLIENT.into(),
        Value::Object(presence::legacy_client(times, user.date_joined)),
    );
    let legacy = PresenceEvent {
        presences: None,
        user_id: Some(user.id),
        email: Some(user.api_email(host)),
        server_timestamp: Some(server_timestamp),
        presence: Some(clients),
    };
    Ok(Some(Event::to_users(
        audience,
        Body::by_capability(
            Capability::SimplifiedPresenceEvents,
            crate::notify::body(parley_wire::Event::Presence(modern)),
            Some(crate::notify::body(parley_wire::Event::Presence(legacy))),
        ),
    )))
}

/// Records a report. Reads first without the write gate, so the common case (a ping that
/// changes nothing) writes nothing; otherwise takes the next update ID, which serialises
/// presence writers, and decides again on the row as it is then.
async fn record(
    ctx: &Context,
    user: &User,
    status: PresenceStatus,
    now: i64,
    server_timestamp: f64,
) -> ActionResult<()> {
    let id = user.id;
    let current = ctx
        .run(move |conn| Ok::<_, ActionError>(stored::of_user(conn, id)?))
        .await?;
    if plan_update(current.map(|r| r.times), status, now)
        .store
        .is_none()
    {
        return Ok(());
    }
    let host = ctx.realm.host.clone();
    let user = user.clone();
    ctx.write(move |conn, events| {
        let update_id = stored::next_update_id(conn)?;
        let current = stored::of_user(conn, user.id)?;
        let plan = plan_update(current.map(|r| r.times), status, now);
        let Some(times) = plan.store else {
            return Ok(());
        };
        stored::save(conn, user.id, times, update_id)?;
        if plan.notify {
            if let Some(event) = presence_event(conn, &host, &user, &times, server_timestamp)? {
                events.push(event);
            }
        }
        Ok(())
    })
    .await
}

/// What a presence fetch asks for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PresenceQuery {
    /// Modern format keyed by user ID (else legacy keyed by API email).
    pub slim: bool,
    /// The client's last `presence_last_update_id`.
    pub last_update_id: Option<i64>,
    /// Oldest data, in days (default 14).
    pub history_limit_days: Option<i64>,
    /// Now, Unix seconds.
    pub now: i64,
}

/// Everybody's presence as `viewer` may see it, and the `presence_last_update_id` to return:
/// the highest ID fetched, else the client's own, else -1.
pub(crate) fn presences(
    conn: &mut DbConn,
    host: &str,
    viewer: &User,
    query: PresenceQuery,
) -> ActionResult<(Map<String, Value>, i64)> {
    let days = query
        .history_limit_days
        .unwrap_or(DEFAULT_HISTORY_LIMIT_DAYS);
    let rows = if days == 0 {
        // No history at all was asked for.
        Vec::new()
    } else {
        let filter = PresenceFilter {
            after_update_id: query.last_update_id,
            // Once a client has fetched, what changed since is all it needs, however old.
            connected_since: query
                .last_update_id
                .is_none_or(|id| id <= 0)
                .then(|| history_cutoff(query.now, days)),
        };
        stored::fetch(conn, filter)?
    };
    let last_update_id = rows
        .iter()
        .map(|r| r.last_update_id)
        .max()
        .or(query.last_update_id)
        .unwrap_or(-1);
    let ids: Vec<UserId> = rows.iter().map(|r| r.user_id).collect();
    let people: HashMap<UserId, User> = users::by_ids(conn, &ids)?
        .into_iter()
        .map(|u| (u.id, u))
        .collect();
    let settings = crate::user_settings::Settings::load(conn, people.values())?;
    let mut out = Map::new();
    for row in &rows {
        let Some(user) = people.get(&row.user_id) else {
            continue;
        };
        let shares = settings.flag(user.id, "presence_enabled");
        if !user.is_active || user.is_bot() || (user.id != viewer.id && !shares) {
            continue;
        }
        if query.slim {
            out.insert(
                user.id.0.to_string(),
                presence::modern(&row.times, user.date_joined),
            );
        } else {
            out.insert(
                user.api_email(host),
                presence::legacy(&row.times, user.date_joined),
            );
        }
    }
    Ok((out, last_update_id))
}

/// `POST /users/me/presence`: records the report and returns everybody's presence.
pub async fn update_presence(
    ctx: &Context,
    user: User,
    report: PresenceReport,
) -> ActionResult<Map<String, Value>> {
    if user.is_bot() {
        return Err(
            RequestError::bad_request("This endpoint does not accept bot requests.").into(),
        );
    }
    let status = PresenceStatus::parse(&report.status).ok_or_else(|| {
        RequestError::invalid_param("status", format!("Invalid status: {}", report.status))
    })?;
    let (now, server_timestamp) = clock();
    let sharing = {
        let user = user.clone();
        ctx.run(move |conn| shares_presence(conn, &user)).await?
    };
    if sharing {
        record(ctx, &user, status, now, server_timestamp).await?;
    }
    let mut out = Map::new();
    if report.ping_only {
        out.insert(
            "presence_last_update_id".into(),
            report.last_update_id.unwrap_or(-1).into(),
        );
    } else {
        let query = PresenceQuery {
            slim: report.slim_presence || report.last_update_id.is_some(),
            last_update_id: report.last_update_id,
            history_limit_days: report.history_limit_days,
            now,
        };
        let host = ctx.realm.host.clone();
        let (presences, last_update_id) = ctx
            .run(move |conn| presences(conn, &host, &user, query))
            .await?;
        out.insert("presences".into(), Value::Object(presences));
        out.insert("server_timestamp".into(), server_timestamp.into());
        out.insert("presence_last_update_id".into(), last_update_id.into());
    }
    out.insert("zephyr_mirror_active".into(), false.into());
    Ok(out)
}

/// `GET /realm/presence`: everybody's presence of the last 14 days, legacy format.
pub async fn realm_presence(ctx: &Context, viewer: User) -> ActionResult<Map<String, Value>> {
    let (now, server_timestamp) = clock();
    let host = ctx.realm.host.clone();
    let query = PresenceQuery {
        slim: false,
        last_update_id: None,
        history_limit_days: None,
        now,
    };
    let (presences, _) = ctx
        .run(move |conn| presences(conn, &host, &viewer, query))
        .await?;
    let mut out = Map::new();
    out.insert("presences".into(), Value::Object(presences));
    out.insert("server_timestamp".into(), server_timestamp.into());
    Ok(out)
}

/// `GET /users/{user_id_or_email}/presence`: one active human user's presence; legacy format
/// (with `aggregated` reading `offline` when stale) unless `slim_presence`.
pub async fn user_presence(
    ctx: &Context,
    viewer: User,
    target: UserRef,
    slim_presence: bool,
) -> ActionResult<Value> {
    let (now, _) = clock();
    let host = ctx.realm.host.clone();
    ctx.run(move |conn| {
        let label = match &target {
            UserRef::Id(id) => id.0.to_string(),
            UserRef::Email(email) => email.clone(),
        };
        let found = match &target {
            UserRef::Id(id) => users::by_id(conn, *id)?,
            UserRef::Email(email) => user_by_any_email(conn, email, &host)?
                .filter(|(user, matched)| {
                    *matched == AddressMatch::Api || can_access_delivery_email(Some(&viewer), user)
                })
                .map(|(user, _)| user),
        };
        let target = found
            .filter(|u| u.is_active)
            .ok_or_else(|| RequestError::bad_request("No such user"))?;
        if target.is_bot() {
            return Err(
                RequestError::bad_request("Presence is not supported for bot users.").into(),
            );
        }
        let visible = target.id == viewer.id || shares_presence(conn, &target)?;
        let row = stored::of_user(conn, target.id)?
            .filter(|_| visible)
            .ok_or_else(|| RequestError::bad_request(format!("No presence data for {label}")))?;
        Ok::<_, ActionError>(if slim_presence {
            presence::modern(&row.times, target.date_joined)
        } else {
            presence::legacy_for_one_user(&row.times, target.date_joined, now)
        })
    })
    .await
}

//! Presence: when each user was last active and last connected, the rules that decide when a
//! report changes what is stored (and when others hear of it at once), and the two formats the
//! API shows it in. Times are Unix seconds.

use serde_json::{json, Map, Value};

/// After this long without a report a user shows as offline (the reference's clients use the
/// same threshold).
pub const OFFLINE_THRESHOLD_SECS: i64 = 140;

/// How often clients report presence.
pub const PRESENCE_PING_INTERVAL_SECS: i64 = 60;

/// A stored time is only moved forward when a report is at least this much newer, so that
/// several open clients do not write on every ping.
pub const UPDATE_MIN_FREQ_SECS: i64 = 55;

/// In the legacy format a user counts as active while their last activity is at most this much
/// older than their last connection.
pub const LEGACY_ACTIVE_OFFSET_SECS: i64 = 70;

/// A user whose last activity is older than this, reporting active, has come (back) online: the
/// others are told at once instead of at their next poll.
pub const BECAME_ONLINE_AFTER_SECS: i64 = OFFLINE_THRESHOLD_SECS - PRESENCE_PING_INTERVAL_SECS - 10;

/// Presence data older than this many days is left out unless a client asks otherwise.
pub const DEFAULT_HISTORY_LIMIT_DAYS: i64 = 14;

/// Beyond this many active users, presence changes are no longer pushed as events (clients still
/// poll); pushing them costs work quadratic in the organization's size.
pub const USER_LIMIT_FOR_PRESENCE_EVENTS: usize = 100;

/// The name of the one client the legacy format reports (the server no longer tells clients
/// apart).
pub const LEGACY_CLIENT: &str = "website";

/// What a client reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PresenceStatus {
    /// The user is using the device.
    Active,
    /// The client is open but the user is away from it.
    Idle,
}

impl PresenceStatus {
    /// Parses the API's `status`; None for anything else.
    pub fn parse(raw: &str) -> Option<PresenceStatus> {
        match raw {
            "active" => Some(PresenceStatus::Active),
            "idle" => Some(PresenceStatus::Idle),
            _ => None,
        }
    }
}

/// One user's stored presence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresenceTimes {
    /// Last report of `active`; None when the user only ever reported `idle`.
    pub last_active_time: Option<i64>,
    /// Last report of any status.
    pub last_connected_time: i64,
}

/// What a report changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresencePlan {
    /// The times to store; None when the stored ones stay (nothing is written).
    pub store: Option<PresenceTimes>,
    /// Whether the others should be told now: the user's first report, or active again after
    /// [`BECAME_ONLINE_AFTER_SECS`].
    pub notify: bool,
}

/// Decides what a report of `status` at `now` changes, given what is stored.
pub fn plan_update(
    current: Option<PresenceTimes>,
    status: PresenceStatus,
    now: i64,
) -> PresencePlan {
    let active = status == PresenceStatus::Active;
    let Some(current) = current else {
        return PresencePlan {
            store: Some(PresenceTimes {
                last_active_time: active.then_some(now),
                last_connected_time: now,
            }),
            notify: true,
        };
    };
    // Never active counts as long ago.
    let since_active = current
        .last_active_time
        .map_or(i64::MAX, |t| now.saturating_sub(t));
    let since_connected = now.saturating_sub(current.last_connected_time);
    let mut next = current;
    if since_connected > UPDATE_MIN_FREQ_SECS {
        next.last_connected_time = now;
    }
    if active && since_active > UPDATE_MIN_FREQ_SECS {
        next.last_active_time = Some(now);
        next.last_connected_time = next.last_connected_time.max(now);
    }
    PresencePlan {
        store: (next != current).then_some(next),
        notify: active && since_active > BECAME_ONLINE_AFTER_SECS,
    }
}

/// The times as shown: a missing activity time reads as the user's join date.
fn shown(times: &PresenceTimes, date_joined: i64) -> (i64, i64) {
    (
        times.last_active_time.unwrap_or(date_joined),
        times.last_connected_time,
    )
}

/// The modern format of one user's presence: `{active_timestamp, idle_timestamp}`.
pub fn modern(times: &PresenceTimes, date_joined: i64) -> Value {
    let (active, connected) = shown(times, date_joined);
    json!({"active_timestamp": active, "idle_timestamp": connected})
}

/// The legacy per-client object: `{client, status, timestamp, pushable}`.
pub fn legacy_client(times: &PresenceTimes, date_joined: i64) -> Map<String, Value> {
    let (active, connected) = shown(times, date_joined);
    let (status, timestamp) = if active + LEGACY_ACTIVE_OFFSET_SECS >= connected {
        ("active", active)
    } else {
        ("idle", connected)
    };
    let mut out = Map::new();
    out.insert("client".into(), LEGACY_CLIENT.into());
    out.insert("status".into(), status.into());
    out.insert("timestamp".into(), timestamp.into());
    out.insert("pushable".into(), false.into());
    out
}

/// The legacy format of one user's presence: `aggregated` and one object per client.
pub fn legacy(times: &PresenceTimes, date_joined: i64) -> Value {
    let client = legacy_client(times, date_joined);
    let mut aggregated = client.clone();
    aggregated.remove("pushable");
    let mut out = Map::new();
    out.insert("aggregated".into(), Value::Object(aggregated));
    out.insert(LEGACY_CLIENT.into(), Value::Object(client));
    Value::Object(out)
}

/// The legacy format as `GET /users/{user}/presence` shows it: without `client` and `pushable`,
/// and `aggregated` reading `offline` once the last report is older than
/// [`OFFLINE_THRESHOLD_SECS`].
pub fn legacy_for_one_user(times: &PresenceTimes, date_joined: i64, now: i64) -> Value {
    let mut value = legacy(times, date_joined);
    if let Value::Object(map) = &mut value {
        for entry in map.values_mut() {
            if let Value::Object(fields) = entry {
                fields.remove("client");
                fields.remove("pushable");
            }
        }
        if let Some(Value::Object(aggregated)) = map.get_mut("aggregated") {
            let timestamp = aggregated
                .get("timestamp")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if now - timestamp > OFFLINE_THRESHOLD_SECS {
                aggregated.insert("status".into(), "offline".into());
            }
        }
    }
    value
}

/// The oldest last connection a presence fetch includes, for a history limit in days.
pub fn history_cutoff(now: i64, days: i64) -> i64 {
    now.saturating_sub(days.saturating_mul(86_400))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_700_000_000;

    #[test]
    fn first_report_stores_and_notifies() {
        let plan = plan_update(None, PresenceStatus::Active, T);
        assert_eq!(
            plan.store,
            Some(PresenceTimes {
                last_active_time: Some(T),
                last_connected_time: T
            })
        );
        assert!(plan.notify);
        let idle = plan_update(None, PresenceStatus::Idle, T);
        assert_eq!(idle.store.unwrap().last_active_time, None);
        assert!(idle.notify);
    }

    #[test]
    fn frequent_reports_write_nothing() {
        let now = PresenceTimes {
            last_active_time: Some(T),
            last_connected_time: T,
        };
        let plan = plan_update(Some(now), PresenceStatus::Active, T + 30);
        assert_eq!(plan.store, None);
        assert!(!plan.notify);
        let plan = plan_update(Some(now), PresenceStatus::Idle, T + 30);
        assert_eq!(plan.store, None);
    }

    #[test]
    fn idle_moves_only_the_connection_time() {
        let now = PresenceTimes {
            last_active_time: Some(T),
            last_connected_time: T,
        };
        let plan = plan_update(Some(now), PresenceStatus::Idle, T + 60);
        assert_eq!(
            plan.store,
            Some(PresenceTimes {
                last_active_time: Some(T),
                last_connected_time: T + 60
            })
        );
        assert!(!plan.notify);
    }

    #[test]
    fn coming_back_notifies() {
        let old = PresenceTimes {
            last_active_time: Some(T),
            last_connected_time: T,
        };
        let plan = plan_update(Some(old), PresenceStatus::Active, T + 60);
        assert!(plan.store.is_some() && !plan.notify);
        let plan = plan_update(Some(old), PresenceStatus::Active, T + 3600);
        assert_eq!(
            plan.store,
            Some(PresenceTimes {
                last_active_time: Some(T + 3600),
                last_connected_time: T + 3600
            })
        );
        assert!(plan.notify);
        let never_active = PresenceTimes {
            last_active_time: None,
            last_connected_time: T,
        };
        assert!(plan_update(Some(never_active), PresenceStatus::Active, T + 1).notify);
    }

    #[test]
    fn legacy_status_follows_the_activity_offset() {
        let active = PresenceTimes {
            last_active_time: Some(T),
            last_connected_time: T + 70,
        };
        assert_eq!(legacy_client(&active, 0)["status"], "active");
        assert_eq!(legacy_client(&active, 0)["timestamp"], T);
        let idle = PresenceTimes {
            last_active_time: Some(T),
            last_connected_time: T + 71,
        };
        assert_eq!(legacy_client(&idle, 0)["status"], "idle");
        assert_eq!(legacy_client(&idle, 0)["timestamp"], T + 71);
        let never = PresenceTimes {
            last_active_time: None,
            last_connected_time: T,
        };
        assert_eq!(modern(&never, 5)["active_timestamp"], 5);
        let full = legacy(&active, 0);
        assert_eq!(full["aggregated"]["client"], "website");
        assert!(full["aggregated"].get("pushable").is_none());
        assert_eq!(full["website"]["pushable"], false);
    }

    #[test]
    fn one_user_view_reads_offline_when_stale() {
        let times = PresenceTimes {
            last_active_time: Some(T),
            last_connected_time: T,
        };
        let fresh = legacy_for_one_user(&times, 0, T + 10);
        assert_eq!(
            fresh,
            json!({"aggregated": {"status": "active", "timestamp": T},
                   "website": {"status": "active", "timestamp": T}})
        );
        let stale = legacy_for_one_user(&times, 0, T + 141);
        assert_eq!(stale["aggregated"]["status"], "offline");
        assert_eq!(stale["website"]["status"], "active");
    }

    #[test]
    fn parses_statuses() {
        assert_eq!(
            PresenceStatus::parse("active"),
            Some(PresenceStatus::Active)
        );
        assert_eq!(PresenceStatus::parse("idle"), Some(PresenceStatus::Idle));
        assert_eq!(PresenceStatus::parse("offline"), None);
    }
}

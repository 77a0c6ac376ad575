//! What this server tells clients about its API level. Real clients branch on the feature level,
//! so it must only ever rise, and each level's behaviour must be implemented before it is claimed.

/// The API feature level served (`service_feature_level`, `zulip_feature_level`).
pub const FEATURE_LEVEL: i64 = 420;

/// The release of the reference server whose API this level matches; clients parse its
/// `major.minor` prefix, so it leads the version string.
pub const API_RELEASE: &str = "11.0";

/// `service_version` / `zulip_version`: the API release, then Parley's own version.
pub fn service_version() -> String {
    format!("{API_RELEASE}-parley-{}", env!("CARGO_PKG_VERSION"))
}

/// `service_merge_base` / `zulip_merge_base`: the reference release Parley's API follows.
pub fn service_merge_base() -> String {
    API_RELEASE.to_owned()
}

/// `event_queue_longpoll_timeout_seconds`: the HTTP timeout clients use for `GET /events`.
pub const EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS: i64 = 90;

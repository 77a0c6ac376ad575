//! What a register asks for and what the snapshot's parts share: the request, which parts are
//! wanted, and how a typed part goes into the snapshot.

use crate::context::Context;
use crate::policy;
use parley_domain::user::User;
pub use parley_events::ClientCapabilities;
use parley_storage::{users, DbConn, StorageError};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// How `include_subscribers` was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeSubscribers {
    /// No subscriber lists.
    #[default]
    No,
    /// Every channel's subscribers.
    All,
    /// Full lists for small channels, recently active users and bots for large ones.
    Partial,
}

/// The parameters of `POST /register` (and of `GET /events` without a queue).
#[derive(Debug, Clone, Default)]
pub struct RegisterRequest {
    /// HTML content in message events.
    pub apply_markdown: bool,
    /// Leave third-party avatar URLs to the client.
    pub client_gravatar: bool,
    /// Subscriber lists in subscription data.
    pub include_subscribers: IncludeSubscribers,
    /// Presence keyed by user ID.
    pub slim_presence: bool,
    /// Oldest presence data, in days.
    pub presence_history_limit_days: Option<i64>,
    /// Event types the queue receives; None = all.
    pub event_types: Option<Vec<String>>,
    /// Event types of the snapshot; None = `event_types`.
    pub fetch_event_types: Option<Vec<String>>,
    /// Message events from every public channel; None when not sent (a bot's
    /// `default_all_public_streams` then decides, else false).
    pub all_public_streams: Option<bool>,
    /// What the client handles.
    pub client_capabilities: ClientCapabilities,
    /// `[operator, operand]` pairs filtering message events.
    pub narrow: Vec<(String, String)>,
    /// The client's name, from its User-Agent.
    pub client_name: String,
}

/// Which parts of the snapshot were asked for.
pub(crate) struct Wanted(pub(crate) Option<BTreeSet<String>>);

impl Wanted {
    pub(crate) fn wants(&self, kind: &str) -> bool {
        self.0.as_ref().is_none_or(|set| set.contains(kind))
    }
}

/// What the snapshot builders share.
pub(crate) struct SnapshotInput<'a> {
    pub ctx: &'a Context,
    pub user: &'a User,
    pub request: &'a RegisterRequest,
    pub policy: &'a policy::Policy,
    /// Every user of the organization, read once for the parts that need them (the realm's
    /// group settings, the users, the bots) instead of once by each: 1,000 users are a
    /// millisecond or two per read on PostgreSQL.
    pub everyone: OnceLock<Vec<User>>,
}

impl SnapshotInput<'_> {
    /// Every user of the organization, active or not, in ID order.
    pub(crate) fn everyone(&self, conn: &mut DbConn) -> Result<&[User], StorageError> {
        if let Some(all) = self.everyone.get() {
            return Ok(all);
        }
        let all = users::all(conn)?;
        Ok(self.everyone.get_or_init(|| all))
    }

    /// A topic as this client shows it.
    pub(crate) fn topic(&self, topic: &str) -> String {
        if topic.is_empty() && !self.request.client_capabilities.empty_topic_name {
            parley_domain::message::EMPTY_TOPIC_DISPLAY_NAME.to_owned()
        } else {
            topic.to_owned()
        }
    }
}

/// A register snapshot: small parts as JSON values, large typed parts (the users, the
/// channels) written to JSON text once by [`put`], rather than built as a `serde_json::Value`
/// tree that is then written again (for 1,000 users that tree cost as much as the writing).
#[derive(Debug, Default)]
pub struct Snapshot {
    fields: Map<String, Value>,
    written: Vec<(String, String)>,
}

impl Snapshot {
    /// Sets a part to a JSON value.
    pub fn insert(&mut self, key: String, value: Value) {
        self.written.retain(|(k, _)| *k != key);
        self.fields.insert(key, value);
    }

    /// Adds the parts of `other` (parts it has replace this one's).
    pub(crate) fn extend(&mut self, other: Snapshot) {
        for (key, value) in other.fields {
            self.insert(key, value);
        }
        for (key, text) in other.written {
            self.fields.remove(&key);
            self.written.retain(|(k, _)| *k != key);
            self.written.push((key, text));
        }
    }

    /// Whether the snapshot has this part.
    pub fn contains_key(&self, key: &str) -> bool {
        self.fields.contains_key(key) || self.written.iter().any(|(k, _)| k == key)
    }

    /// The parts held as values, and those written as JSON text (no key is in both).
    pub fn into_parts(self) -> (Map<String, Value>, Vec<(String, String)>) {
        (self.fields, self.written)
    }
}

/// Puts a typed part into the snapshot under `key`, written to JSON text.
pub(crate) fn put<T: Serialize>(out: &mut Snapshot, key: &str, value: T) {
    match serde_json::to_string(&value) {
        Ok(text) => {
            out.fields.remove(key);
            out.written.retain(|(k, _)| k != key);
            out.written.push((key.to_owned(), text));
        }
        Err(err) => tracing::error!(%err, key, "snapshot part does not serialize"),
    }
}

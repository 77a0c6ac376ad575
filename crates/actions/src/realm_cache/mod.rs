//! The organization's policy (groups and permissions), linkifiers, custom emoji, outgoing
//! webhook bots, what sends read about people (alert words, mutes, topic settings:
//! `send_inputs`; on SQLite each channel's recipients: `recipients`), the API callers
//! (`callers`) and what message records show of people and channels (`presentation`), kept in memory between requests instead of being read again by
//! every request, send, edit, rendering, permission check and page of messages.
//!
//! **Filled** on first use, by whichever action asks first, from its own connection.
//!
//! **Invalidated** by the events that announce a change (`INVALIDATING`: `realm`,
//! `realm_user`, `realm_bot`, `user_group`, `realm_linkifiers`, `realm_emoji`,
//! `realm_user_settings_defaults`, `alert_words`, `muted_users`, `user_settings`, `stream`): when a
//! transaction records such an event, and again when such an event is delivered, whether this
//! process committed it or another process did (from the event log, on PostgreSQL). One mechanism thus
//! serves one process and several; another process's change applies here once its event has
//! arrived, which is when this process's clients learn of it anyway.
//!
//! **Never stale after a commit.** A transaction that changes what is cached (it records one
//! of those events, or calls [`changing`] before writing) holds a *change* from that moment
//! until after its commit (or rollback): while any change is held nobody is served from the
//! cache or fills it, so neither the changing transaction (which must see its own writes) nor a
//! transaction after it in the same SQLite group commit (which sees writes not yet committed)
//! reads old or uncommitted data. Every fill checks that the generation it read before loading
//! is still current, so a load that raced a commit is thrown away rather than kept.
//!
//! The cache is reached through the action's scope (a thread-local set by [`crate::Context`]'s
//! `write`, `run` and `transaction` around the closure they run on the blocking pool), so the
//! ~60 places that load the policy take it from here without threading a handle through every
//! helper. Outside a scope (start-up code, tests of helpers) everything is read from the
//! database as before.

mod callers;
mod policy_read;
mod presentation;
mod recipients;
mod send_inputs;

pub use policy_read::Policy;
pub(crate) use presentation::{channel_names, people};
pub(crate) use recipients::recipients_for_send;
pub(crate) use send_inputs::{alert_words_of, muters_of, send_settings};

use parley_domain::UserId;
use parley_events::{Body, Event};
use parley_storage::linkifiers::Linkifier;
use parley_storage::realm_emoji::RealmEmojiRow;
use parley_storage::{DbConn, StorageError};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The active outgoing webhook bots (`crate::outgoing_webhooks`), as the cache keeps them.
pub(crate) type OutgoingBots = Arc<HashSet<UserId>>;

/// Event types whose arrival means the cached data may have changed.
const INVALIDATING: &[&str] = &[
    "realm",
    "realm_user",
    "user_group",
    "realm_linkifiers",
    "realm_emoji",
    "realm_user_settings_defaults",
    "alert_words",
    "muted_users",
    "user_settings",
    "realm_bot",
    "stream",
];

/// Event types whose recording means that what a send read before its writing turn may have
/// changed (the channel, its subscribers, users, groups, the policy, alert words, mutes, a
/// bot's default channel, the sender's settings): see [`inputs_mark`].
const SEND_INPUTS: &[&str] = &[
    "realm",
    "realm_user",
    "realm_bot",
    "user_group",
    "stream",
    "subscription",
    "alert_words",
    "muted_users",
    "user_settings",
    "realm_user_settings_defaults",
];

/// What is cached, valid for one generation.
#[derive(Default)]
struct State {
    /// Bumped by every invalidation.
    generation: u64,
    /// Transactions holding a change (see the module documentation).
    changing: usize,
    policy: Option<Arc<Policy>>,
    linkifiers: Option<Arc<Vec<Linkifier>>>,
    emoji: Option<Arc<Vec<RealmEmojiRow>>>,
    realm_id: Option<i64>,
    realm_deactivated: Option<bool>,
    outgoing_bots: Option<OutgoingBots>,
    alert_words: Option<send_inputs::AlertWords>,
    muters: Option<send_inputs::Muters>,
    /// Filled person by person, as they send.
    send_settings: HashMap<UserId, send_inputs::SendSettings>,
    /// Authenticated API callers by address, with their API key (`callers`).
    api_callers: HashMap<String, (parley_domain::user::User, String)>,
    /// People shown in message records, by ID (`presentation`).
    people: HashMap<UserId, parley_domain::user::User>,
    /// Channel names shown in message records, by ID (`presentation`).
    channel_names: HashMap<parley_domain::ChannelId, String>,
    /// Each channel's recipients on SQLite, with the inputs generation they were read at
    /// (`recipients`).
    recipients: HashMap<parley_domain::ChannelId, recipients::Kept>,
    /// Bumped whenever a transaction records a [`SEND_INPUTS`] event, and again after it ends.
    inputs_generation: u64,
    /// Transactions that recorded such an event and have not ended.
    inputs_changing: usize,
}

/// The cache of one process (one [`crate::publish::EventHub`]); cheap to share.
pub struct RealmCache {
    state: Mutex<State>,
    hits: AtomicU64,
    misses: AtomicU64,
    enabled: AtomicBool,
    /// Sends whose inputs changed between their reading and their writing turn.
    prepared_again: AtomicU64,
}

impl Default for RealmCache {
    fn default() -> Self {
        RealmCache {
            state: Mutex::default(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            enabled: AtomicBool::new(true),
            prepared_again: AtomicU64::new(0),
        }
    }
}

impl std::fmt::Debug for RealmCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealmCache")
            .field("hits", &self.hits.load(Ordering::Relaxed))
            .field("misses", &self.misses.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl RealmCache {
    /// Whether the cache is on (see [`RealmCache::set_enabled`]).
    fn serving(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forgets everything cached: the next use reads the database again.
    pub fn invalidate(&self) {
        let mut state = self.lock();
        invalidate(&mut state);
    }

    /// Invalidates when any of `events` announces a change of what is cached.
    pub fn note_delivered(&self, events: &[Event]) {
        if events.iter().any(invalidates) {
            self.invalidate();
        }
    }

    /// Turns the cache off (every use reads the database, as before it existed) or on again;
    /// for measurements (`tests/benches/round_trips.rs`).
    pub fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Relaxed);
        self.invalidate();
    }

    /// (hits, misses) since the process started, for tests and measurements.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// How many sends found their inputs changed in their writing turn and read them again
    /// there, for tests and measurements.
    pub fn sends_prepared_again(&self) -> u64 {
        self.prepared_again.load(Ordering::Relaxed)
    }

    /// The cached value `pick` selects, or `load`ed from the database and kept (when `load`
    /// says it may be kept and nothing changed meanwhile).
    fn get<T: Clone>(
        &self,
        pick: impl Fn(&State) -> Option<T>,
        keep: impl FnOnce(&mut State, T),
        load: impl FnOnce() -> Result<(T, bool), StorageError>,
    ) -> Result<T, StorageError> {
        let generation = {
            let state = self.lock();
            if state.changing > 0 || !self.enabled.load(Ordering::Relaxed) {
                None
            } else if let Some(found) = pick(&state) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(found);
            } else {
                Some(state.generation)
            }
        };
        self.misses.fetch_add(1, Ordering::Relaxed);
        let (value, cacheable) = load()?;
        if let (Some(generation), true) = (generation, cacheable) {
            let mut state = self.lock();
            if state.generation == generation && state.changing == 0 {
                keep(&mut state, value.clone());
            }
        }
        Ok(value)
    }

    fn policy(&self, conn: &mut DbConn) -> Result<Arc<Policy>, StorageError> {
        self.get(
            |s| s.policy.clone(),
            |s, v| s.policy = Some(v),
            || {
                let (policy, cacheable) = policy_read::load_uncached(conn)?;
                Ok((Arc::new(policy), cacheable))
            },
        )
    }

    fn linkifiers(&self, conn: &mut DbConn) -> Result<Arc<Vec<Linkifier>>, StorageError> {
        self.get(
            |s| s.linkifiers.clone(),
            |s, v| s.linkifiers = Some(v),
            || Ok((Arc::new(parley_storage::linkifiers::all(conn)?), true)),
        )
    }

    fn emoji(&self, conn: &mut DbConn) -> Result<Arc<Vec<RealmEmojiRow>>, StorageError> {
        self.get(
            |s| s.emoji.clone(),
            |s, v| s.emoji = Some(v),
            || Ok((Arc::new(parley_storage::realm_emoji::all(conn)?), true)),
        )
    }

    fn realm_id(&self, conn: &mut DbConn) -> Result<i64, StorageError> {
        self.get(
            |s| s.realm_id,
            |s, v| s.realm_id = Some(v),
            || {
                // Before the organization exists the answer (1) is a placeholder: not kept.
                let realm = parley_storage::realms::get(conn)?;
                Ok((realm.as_ref().map_or(1, |r| r.id), realm.is_some()))
            },
        )
    }

    fn realm_deactivated(&self, conn: &mut DbConn) -> Result<bool, StorageError> {
        self.get(
            |s| s.realm_deactivated,
            |s, v| s.realm_deactivated = Some(v),
            || {
                // Before the organization exists the answer (deactivated) is not kept.
                let realm = parley_storage::realms::get(conn)?;
                Ok((
                    realm.as_ref().is_none_or(|r| r.deactivated),
                    realm.is_some(),
                ))
            },
        )
    }

    fn outgoing_bots(&self, conn: &mut DbConn) -> Result<OutgoingBots, StorageError> {
        self.get(
            |s| s.outgoing_bots.clone(),
            |s, v| s.outgoing_bots = Some(v),
            || {
                let bots = parley_storage::bots::active_outgoing_webhook_bots(conn)?;
                Ok((Arc::new(bots.into_iter().collect()), true))
            },
        )
    }

    /// The active outgoing webhook bots when they are cached and may be served, without
    /// reading the database: after every commit, to see at no cost whether a message
    /// triggers a webhook.
    pub(crate) fn cached_outgoing_bots(&self) -> Option<OutgoingBots> {
        let state = self.lock();
        if state.changing > 0 || !self.enabled.load(Ordering::Relaxed) {
            return None;
        }
        state.outgoing_bots.clone()
    }

    /// Starts a change of a send's inputs, held until the returned guard is dropped.
    fn begin_inputs_change(self: &Arc<Self>) -> InputsGuard {
        let mut state = self.lock();
        state.inputs_changing += 1;
        state.inputs_generation += 1;
        InputsGuard {
            cache: Arc::clone(self),
        }
    }

    /// Starts a change: nothing is served or filled until the returned guard is dropped.
    fn begin_change(self: &Arc<Self>) -> ChangeGuard {
        let mut state = self.lock();
        state.changing += 1;
        invalidate(&mut state);
        ChangeGuard {
            cache: Arc::clone(self),
        }
    }
}

fn invalidate(state: &mut State) {
    state.generation += 1;
    state.policy = None;
    state.linkifiers = None;
    state.emoji = None;
    state.realm_id = None;
    state.realm_deactivated = None;
    state.outgoing_bots = None;
    state.alert_words = None;
    state.muters = None;
    state.send_settings.clear();
    state.api_callers.clear();
    state.people.clear();
    state.channel_names.clear();
}

/// Whether an event announces a change of what is cached.
fn invalidates(event: &Event) -> bool {
    announces(&event.body, INVALIDATING)
}

/// Whether an event's body has one of these types.
fn announces(body: &Body, types: &[&str]) -> bool {
    match body {
        Body::Json(map) => map
            .get("type")
            .and_then(|t| t.as_str())
            .is_some_and(|t| types.contains(&t)),
        Body::ByCapability { with, without, .. } => {
            announces(with, types) || without.as_deref().is_some_and(|b| announces(b, types))
        }
        Body::Many(bodies) => bodies.iter().any(|b| announces(b, types)),
        Body::Message(_) => false,
    }
}

/// A change of a send's inputs in progress; dropped after the transaction ends.
struct InputsGuard {
    cache: Arc<RealmCache>,
}

impl Drop for InputsGuard {
    fn drop(&mut self) {
        let mut state = self.cache.lock();
        state.inputs_changing = state.inputs_changing.saturating_sub(1);
        state.inputs_generation += 1;
    }
}

/// A change in progress: dropped after the transaction's commit or rollback, it lets the cache
/// be used again, from the next generation.
struct ChangeGuard {
    cache: Arc<RealmCache>,
}

impl Drop for ChangeGuard {
    fn drop(&mut self) {
        let mut state = self.cache.lock();
        state.changing = state.changing.saturating_sub(1);
        invalidate(&mut state);
    }
}

/// Where a transaction keeps its change, if it makes one; created before the transaction and
/// dropped after it ends, so the change outlives the commit.
#[derive(Default)]
pub(crate) struct ChangeSlot {
    cache: Mutex<Option<ChangeGuard>>,
    inputs: Mutex<Option<InputsGuard>>,
}

struct Scope {
    cache: Arc<RealmCache>,
    slot: Arc<ChangeSlot>,
}

thread_local! {
    static SCOPE: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// Runs `f` with `cache` as the cache of the current action, changes going to `slot`.
pub(crate) fn scoped<R>(
    cache: &Arc<RealmCache>,
    slot: &Arc<ChangeSlot>,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore(Option<Scope>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            SCOPE.with(|s| *s.borrow_mut() = previous);
        }
    }
    let previous = SCOPE.with(|s| {
        s.borrow_mut().replace(Scope {
            cache: Arc::clone(cache),
            slot: Arc::clone(slot),
        })
    });
    let _restore = Restore(previous);
    f()
}

fn current() -> Option<Arc<RealmCache>> {
    SCOPE.with(|s| s.borrow().as_ref().map(|scope| Arc::clone(&scope.cache)))
}

/// Declares that the current transaction is about to change the policy, linkifiers or custom
/// emoji: from now until after it ends, the cache is bypassed (see the module documentation).
/// Call it before the first write; recording one of the invalidating events does it too.
pub(crate) fn changing() {
    SCOPE.with(|s| {
        if let Some(scope) = s.borrow().as_ref() {
            let mut slot = scope.slot.cache.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none() {
                *slot = Some(scope.cache.begin_change());
            }
        }
    });
}

/// Called for every event a transaction records.
pub(crate) fn note_recorded(event: &Event) {
    if invalidates(event) {
        changing();
    }
    if announces(&event.body, SEND_INPUTS) {
        SCOPE.with(|s| {
            if let Some(scope) = s.borrow().as_ref() {
                let mut slot = scope.slot.inputs.lock().unwrap_or_else(|p| p.into_inner());
                if slot.is_none() {
                    *slot = Some(scope.cache.begin_inputs_change());
                }
            }
        });
    }
}

/// Where a send's inputs stand, taken before reading them outside the writing transaction
/// (`messages_send`): None when they may not be read there (a transaction that changes them
/// has not ended yet, or there is no cache in scope). Every transaction that changes them
/// records an event of [`SEND_INPUTS`], which moves the mark when recorded (so a transaction
/// earlier in the same SQLite group commit counts) and again after its commit; so a mark taken
/// while none is in progress, and unchanged inside the writing transaction, means the inputs
/// read in between are what that transaction would read.
pub(crate) fn inputs_mark() -> Option<u64> {
    let cache = current()?;
    if !cache.enabled.load(Ordering::Relaxed) {
        return None;
    }
    let state = cache.lock();
    (state.inputs_changing == 0).then_some(state.inputs_generation)
}

/// Whether nothing that changes a send's inputs was recorded since `mark` was taken; counts
/// the sends that must read them again.
pub(crate) fn inputs_unchanged_since(mark: u64) -> bool {
    let Some(cache) = current() else {
        return false;
    };
    let unchanged = cache.lock().inputs_generation == mark;
    if !unchanged {
        cache.prepared_again.fetch_add(1, Ordering::Relaxed);
        metrics::counter!("parley_sends_prepared_again_total").increment(1);
    }
    unchanged
}

/// The groups and organization policy (cached in an action's scope).
pub(crate) fn policy(conn: &mut DbConn) -> Result<Arc<Policy>, StorageError> {
    match current() {
        Some(cache) => cache.policy(conn),
        None => Ok(Arc::new(policy_read::load_uncached(conn)?.0)),
    }
}

/// The active outgoing webhook bots (cached in an action's scope; bots come and go with
/// `realm_user` events).
pub(crate) fn outgoing_bots(conn: &mut DbConn) -> Result<OutgoingBots, StorageError> {
    match current() {
        Some(cache) => cache.outgoing_bots(conn),
        None => {
            let bots = parley_storage::bots::active_outgoing_webhook_bots(conn)?;
            Ok(Arc::new(bots.into_iter().collect()))
        }
    }
}

/// Every linkifier in processing order (cached in an action's scope).
pub(crate) fn linkifiers(conn: &mut DbConn) -> Result<Arc<Vec<Linkifier>>, StorageError> {
    match current() {
        Some(cache) => cache.linkifiers(conn),
        None => Ok(Arc::new(parley_storage::linkifiers::all(conn)?)),
    }
}

/// Every custom emoji, active or not, in ID order (cached in an action's scope).
pub(crate) fn emoji(conn: &mut DbConn) -> Result<Arc<Vec<RealmEmojiRow>>, StorageError> {
    match current() {
        Some(cache) => cache.emoji(conn),
        None => Ok(Arc::new(parley_storage::realm_emoji::all(conn)?)),
    }
}

/// The active custom emoji of this name (cached in an action's scope).
pub(crate) fn active_emoji_by_name(
    conn: &mut DbConn,
    name: &str,
) -> Result<Option<RealmEmojiRow>, StorageError> {
    Ok(emoji(conn)?
        .iter()
        .find(|e| !e.deactivated && e.name == name)
        .cloned())
}

/// A custom emoji by ID, active or not (cached in an action's scope).
pub(crate) fn emoji_by_id(
    conn: &mut DbConn,
    id: i64,
) -> Result<Option<RealmEmojiRow>, StorageError> {
    Ok(emoji(conn)?.iter().find(|e| e.id == id).cloned())
}

/// Whether the organization is deactivated or does not exist yet (cached in an action's scope;
/// every API request asks). Nothing in the server deactivates the organization; one deactivated
/// in the database by hand is refused once the cache is next invalidated or the server restarts,
/// as for every other cached setting changed outside the server.
pub(crate) fn realm_deactivated(conn: &mut DbConn) -> Result<bool, StorageError> {
    match current() {
        Some(cache) => cache.realm_deactivated(conn),
        None => Ok(parley_storage::realms::get(conn)?.is_none_or(|r| r.deactivated)),
    }
}

/// The organization's ID, 1 before it exists (cached in an action's scope).
pub(crate) fn realm_id(conn: &mut DbConn) -> Result<i64, StorageError> {
    match current() {
        Some(cache) => cache.realm_id(conn),
        None => Ok(parley_storage::realms::get(conn)?.map_or(1, |r| r.id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn recognises_invalidating_events() {
        let e = |v| Event {
            audience: parley_events::Audience::Everyone,
            body: Body::json(v),
        };
        assert!(invalidates(&e(json!({"type": "realm_linkifiers"}))));
        assert!(invalidates(&e(json!({"type": "realm", "op": "update"}))));
        assert!(!invalidates(&e(json!({"type": "typing"}))));
        let many = Event {
            audience: parley_events::Audience::Everyone,
            body: Body::Many(vec![Body::json(json!({"type": "user_group"}))]),
        };
        assert!(invalidates(&many));
    }

    #[test]
    fn a_change_in_progress_bypasses_and_blocks_fills() {
        let cache = Arc::new(RealmCache::default());
        let loads = std::cell::Cell::new(0);
        let get = |cache: &RealmCache| {
            cache
                .get(
                    |s| s.realm_id,
                    |s, v| s.realm_id = Some(v),
                    || {
                        loads.set(loads.get() + 1);
                        Ok((7, true))
                    },
                )
                .unwrap()
        };
        get(&cache);
        get(&cache);
        assert_eq!(loads.get(), 1, "the second use is served from the cache");
        let guard = cache.begin_change();
        get(&cache);
        get(&cache);
        assert_eq!(
            loads.get(),
            3,
            "a change in progress reads the database every time"
        );
        drop(guard);
        get(&cache);
        get(&cache);
        assert_eq!(loads.get(), 4, "after the change the cache fills again");
    }

    #[test]
    fn a_load_that_raced_an_invalidation_is_not_kept() {
        let cache = RealmCache::default();
        let v = cache
            .get(
                |s| s.realm_id,
                |s, v| s.realm_id = Some(v),
                || {
                    cache.invalidate();
                    Ok((1, true))
                },
            )
            .unwrap();
        assert_eq!(v, 1);
        assert!(cache.lock().realm_id.is_none());
    }
}

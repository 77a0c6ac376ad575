//! A channel's recipients (the users with an open span: `storage::spans`), kept between sends
//! on SQLite. Reading a 266-member channel's open spans was a fifth of the process's CPU per
//! send there (`docs/benchmarks.md`, stop 33).
//!
//! Kept per channel with the inputs generation it was read at ([`super::inputs_mark`]): every
//! transaction that opens or closes a span (subscribing, unsubscribing, deactivating, losing
//! access) records an event of [`super::SEND_INPUTS`], which moves the generation when recorded
//! and again after its commit, so an entry read at the current generation, with no such
//! transaction in progress, is what the spans hold now. SQLite only: one process serves a
//! SQLite database and records every change the server makes. On PostgreSQL another node may
//! have changed the spans before its event arrives here, and a send reads them after taking the
//! channel's lock (`channels::for_send`), from the database.
//!
//! An entry also expires after [`MAX_AGE`]: the commands that run beside the server
//! (`parley create-user` subscribes the new person to the default channels) change the spans
//! from another process, which records no event here; their changes reach sends within it.

use super::{current, RealmCache};
use parley_domain::{ChannelId, UserId};
use parley_storage::messages::TopicForSend;
use parley_storage::spans::SendHold;
use parley_storage::{send_reads, spans, DbConn, StorageError};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most channels whose recipients are kept (emptied past it).
const MAX_CHANNELS: usize = 1_000;

/// How long an entry serves at most (see the module documentation).
const MAX_AGE: Duration = Duration::from_secs(1);

/// A channel's recipients, sorted, with the inputs generation and the time they were read at.
pub(super) type Kept = (u64, Instant, Arc<Vec<UserId>>);

impl RealmCache {
    fn recipients(
        &self,
        channel: ChannelId,
        max_age: Duration,
        load: impl FnOnce() -> Result<Vec<UserId>, StorageError>,
    ) -> Result<Arc<Vec<UserId>>, StorageError> {
        let generation = {
            let state = self.lock();
            if !self.serving() || state.inputs_changing > 0 {
                None
            } else {
                match state.recipients.get(&channel) {
                    Some((read_at, when, users))
                        if *read_at == state.inputs_generation && when.elapsed() < max_age =>
                    {
                        self.hits.fetch_add(1, Ordering::Relaxed);
                        return Ok(Arc::clone(users));
                    }
                    _ => Some(state.inputs_generation),
                }
            }
        };
        self.misses.fetch_add(1, Ordering::Relaxed);
        let when = Instant::now();
        let users = Arc::new(load()?);
        if let Some(generation) = generation {
            let mut state = self.lock();
            if state.inputs_generation == generation && state.inputs_changing == 0 {
                if state.recipients.len() >= MAX_CHANNELS {
                    state.recipients.clear();
                }
                state
                    .recipients
                    .insert(channel, (generation, when, Arc::clone(&users)));
            }
        }
        Ok(users)
    }
}

/// The recipients of a message sent to the held channel now, sorted by ID, and on PostgreSQL
/// what the send reads of its topic, in the same statement (`send_reads::recipients_with_topic`;
/// on SQLite the writing transaction reads the topic). Kept between sends on SQLite (in an
/// action's scope); read after the channel's locks on PostgreSQL.
pub(crate) fn recipients_for_send(
    conn: &mut DbConn,
    hold: &SendHold,
    topic: &str,
    sender: UserId,
) -> Result<(Arc<Vec<UserId>>, Option<TopicForSend>), StorageError> {
    if matches!(conn, DbConn::Sqlite(_)) {
        let recipients = match current() {
            Some(cache) => cache.recipients(hold.channel(), MAX_AGE, || {
                spans::recipients_held(conn, hold)
            })?,
            None => Arc::new(spans::recipients_held(conn, hold)?),
        };
        return Ok((recipients, None));
    }
    let (recipients, topic) = send_reads::recipients_with_topic(conn, hold, topic, sender)?;
    Ok((Arc::new(recipients), Some(topic)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn kept_until_a_send_input_changes() {
        let cache = Arc::new(RealmCache::default());
        let loads = Cell::new(0);
        let read = |cache: &RealmCache| {
            cache
                .recipients(ChannelId(1), MAX_AGE, || {
                    loads.set(loads.get() + 1);
                    Ok(vec![UserId(1), UserId(2)])
                })
                .unwrap()
        };
        read(&cache);
        read(&cache);
        assert_eq!(loads.get(), 1, "the second send is served from the cache");
        let change = cache.begin_inputs_change();
        read(&cache);
        read(&cache);
        assert_eq!(loads.get(), 3, "a change in progress reads every time");
        drop(change);
        read(&cache);
        read(&cache);
        assert_eq!(loads.get(), 4, "after the change, read once again");
    }

    #[test]
    fn an_entry_expires() {
        let cache = RealmCache::default();
        let loads = Cell::new(0);
        let read = |max_age| {
            cache
                .recipients(ChannelId(1), max_age, || {
                    loads.set(loads.get() + 1);
                    Ok(vec![UserId(1)])
                })
                .unwrap()
        };
        read(MAX_AGE);
        read(MAX_AGE);
        assert_eq!(loads.get(), 1);
        read(Duration::ZERO);
        assert_eq!(loads.get(), 2, "older than the age allowed: read again");
    }
}

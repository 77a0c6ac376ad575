//! What message records show of people and channels: each sender's and conversation member's
//! user row and each channel's name, kept with the rest of the organization cache. Every page
//! of messages read both (two statements, and a channel's full row with its permission settings
//! to parse: a sixth of the `parley` process's time for a page of 100 messages on PostgreSQL);
//! they change rarely, each with its event (`realm_user`, `realm_bot` and `user_settings` for
//! people, `stream` for a channel's name), which invalidates them as it does the policy.
//!
//! Filled entry by entry as pages ask, and bounded: past [`MAX_KEPT`] entries the map is
//! emptied and fills again, so an organization of a hundred thousand people keeps at most a
//! few megabytes of them.

use super::{current, RealmCache, State};
use parley_domain::user::User;
use parley_domain::{ChannelId, UserId};
use parley_storage::{channels, users, DbConn, StorageError};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::Ordering;

/// The most entries kept in each map.
pub(super) const MAX_KEPT: usize = 20_000;

impl RealmCache {
    /// The entries of `ids` in the map `field` selects, those missing read by `load` and kept
    /// unless the cache changed meanwhile.
    fn get_many<K, V>(
        &self,
        ids: &[K],
        field: fn(&mut State) -> &mut HashMap<K, V>,
        load: impl FnOnce(&[K]) -> Result<Vec<(K, V)>, StorageError>,
    ) -> Result<HashMap<K, V>, StorageError>
    where
        K: Hash + Eq + Copy,
        V: Clone,
    {
        let mut found = HashMap::with_capacity(ids.len());
        let mut missing = Vec::new();
        let generation = {
            let mut state = self.lock();
            let serving = state.changing == 0 && self.serving();
            let generation = state.generation;
            let kept = field(&mut state);
            for id in ids {
                match kept.get(id).filter(|_| serving) {
                    Some(value) => {
                        found.insert(*id, value.clone());
                    }
                    None => missing.push(*id),
                }
            }
            serving.then_some(generation)
        };
        if missing.is_empty() {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(found);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let loaded = load(&missing)?;
        if let Some(generation) = generation {
            let mut state = self.lock();
            if state.generation == generation && state.changing == 0 {
                let kept = field(&mut state);
                if kept.len() + loaded.len() > MAX_KEPT {
                    kept.clear();
                }
                kept.extend(loaded.iter().cloned());
            }
        }
        found.extend(loaded);
        Ok(found)
    }
}

fn load_people(conn: &mut DbConn, ids: &[UserId]) -> Result<Vec<(UserId, User)>, StorageError> {
    Ok(users::by_ids(conn, ids)?
        .into_iter()
        .map(|u| (u.id, u))
        .collect())
}

/// These users by ID, those that exist (cached in an action's scope).
pub(crate) fn people(
    conn: &mut DbConn,
    ids: &[UserId],
) -> Result<HashMap<UserId, User>, StorageError> {
    match current() {
        Some(cache) => cache.get_many(ids, |s| &mut s.people, |m| load_people(conn, m)),
        None => Ok(load_people(conn, ids)?.into_iter().collect()),
    }
}

/// These channels' names, of those that exist (cached in an action's scope).
pub(crate) fn channel_names(
    conn: &mut DbConn,
    ids: &[ChannelId],
) -> Result<HashMap<ChannelId, String>, StorageError> {
    match current() {
        Some(cache) => cache.get_many(
            ids,
            |s| &mut s.channel_names,
            |m| channels::names_of(conn, m),
        ),
        None => Ok(channels::names_of(conn, ids)?.into_iter().collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn names(cache: &RealmCache, ids: &[i64], loads: &RefCell<Vec<Vec<i64>>>) -> Vec<i64> {
        let ids: Vec<ChannelId> = ids.iter().map(|i| ChannelId(*i)).collect();
        let got = cache
            .get_many(
                &ids,
                |s| &mut s.channel_names,
                |missing| {
                    loads
                        .borrow_mut()
                        .push(missing.iter().map(|c| c.0).collect());
                    Ok(missing.iter().map(|c| (*c, format!("c{}", c.0))).collect())
                },
            )
            .unwrap();
        let mut keys: Vec<i64> = got.keys().map(|c| c.0).collect();
        keys.sort_unstable();
        assert!(got.iter().all(|(c, name)| *name == format!("c{}", c.0)));
        keys
    }

    #[test]
    fn reads_only_what_is_missing_and_forgets_on_invalidation() {
        let cache = RealmCache::default();
        let loads = RefCell::new(Vec::new());
        assert_eq!(names(&cache, &[1, 2], &loads), vec![1, 2]);
        assert_eq!(names(&cache, &[2, 3], &loads), vec![2, 3]);
        assert_eq!(names(&cache, &[1, 2, 3], &loads), vec![1, 2, 3]);
        assert_eq!(*loads.borrow(), vec![vec![1, 2], vec![3]]);
        cache.invalidate();
        names(&cache, &[1], &loads);
        assert_eq!(loads.borrow().last(), Some(&vec![1]));
    }

    #[test]
    fn a_change_in_progress_reads_everything_and_keeps_nothing() {
        let cache = std::sync::Arc::new(RealmCache::default());
        let loads = RefCell::new(Vec::new());
        names(&cache, &[1], &loads);
        let guard = cache.begin_change();
        names(&cache, &[1, 2], &loads);
        drop(guard);
        names(&cache, &[2], &loads);
        assert_eq!(*loads.borrow(), vec![vec![1], vec![1, 2], vec![2]]);
    }

    #[test]
    fn the_map_is_bounded() {
        let cache = RealmCache::default();
        let loads = RefCell::new(Vec::new());
        let many: Vec<i64> = (0..MAX_KEPT as i64).collect();
        names(&cache, &many, &loads);
        names(&cache, &[-1], &loads);
        assert_eq!(
            cache.lock().channel_names.len(),
            1,
            "emptied before passing the bound"
        );
    }
}

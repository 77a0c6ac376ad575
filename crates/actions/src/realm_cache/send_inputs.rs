//! What a send reads about people, kept with the rest of the organization cache: every alert
//! word, every mute, and the settings a send applies (the automatic topic policies). Each was a
//! statement of every send; they change rarely, each with its own event (`alert_words`,
//! `muted_users`, `user_settings`, or `realm_user` for a new person), which invalidates them as
//! it does the policy, on this process and on the others.

use super::{current, RealmCache};
use crate::user_settings::Settings;
use parley_domain::user::User;
use parley_domain::UserId;
use parley_storage::{alert_words, muted_users, DbConn, StorageError};
use std::collections::HashMap;
use std::sync::Arc;

/// Every person's alert words.
pub(super) type AlertWords = Arc<HashMap<UserId, Vec<String>>>;

/// For each muted person, who muted them.
pub(super) type Muters = Arc<HashMap<UserId, Vec<UserId>>>;

/// The settings of one person that a send applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SendSettings {
    /// `automatically_follow_topics_policy`.
    pub follow_policy: i64,
    /// `automatically_unmute_topics_in_muted_streams_policy`.
    pub unmute_policy: i64,
    /// `automatically_follow_topics_where_mentioned`.
    pub follow_where_mentioned: bool,
}

impl RealmCache {
    fn alert_words(&self, conn: &mut DbConn) -> Result<AlertWords, StorageError> {
        self.get(
            |s| s.alert_words.clone(),
            |s, v| s.alert_words = Some(v),
            || Ok((Arc::new(load_alert_words(conn)?), true)),
        )
    }

    fn muters(&self, conn: &mut DbConn) -> Result<Muters, StorageError> {
        self.get(
            |s| s.muters.clone(),
            |s, v| s.muters = Some(v),
            || Ok((Arc::new(load_muters(conn)?), true)),
        )
    }

    fn send_settings(&self, conn: &mut DbConn, user: &User) -> Result<SendSettings, StorageError> {
        self.get(
            |s| s.send_settings.get(&user.id).copied(),
            |s, v| {
                s.send_settings.insert(user.id, v);
            },
            || Ok((load_send_settings(conn, user)?, true)),
        )
    }
}

fn load_alert_words(conn: &mut DbConn) -> Result<HashMap<UserId, Vec<String>>, StorageError> {
    let mut words: HashMap<UserId, Vec<String>> = HashMap::new();
    for (user, word) in alert_words::all(conn)? {
        words.entry(user).or_default().push(word);
    }
    Ok(words)
}

fn load_muters(conn: &mut DbConn) -> Result<HashMap<UserId, Vec<UserId>>, StorageError> {
    let mut muters: HashMap<UserId, Vec<UserId>> = HashMap::new();
    for (muter, muted) in muted_users::all(conn)? {
        muters.entry(muted).or_default().push(muter);
    }
    Ok(muters)
}

fn load_send_settings(conn: &mut DbConn, user: &User) -> Result<SendSettings, StorageError> {
    let settings = Settings::load(conn, [user])?;
    // 4: "never", the registry's value when a setting is unreadable.
    let int = |name: &str| settings.int(user.id, name).unwrap_or(4);
    Ok(SendSettings {
        follow_policy: int("automatically_follow_topics_policy"),
        unmute_policy: int("automatically_unmute_topics_in_muted_streams_policy"),
        follow_where_mentioned: settings
            .flag(user.id, "automatically_follow_topics_where_mentioned"),
    })
}

/// The alert words of these people (each named once), as `(person, word)` pairs (cached in an
/// action's scope).
pub(crate) fn alert_words_of(
    conn: &mut DbConn,
    people: impl IntoIterator<Item = UserId>,
) -> Result<Vec<(UserId, String)>, StorageError> {
    let all = match current() {
        Some(cache) => cache.alert_words(conn)?,
        None => Arc::new(load_alert_words(conn)?),
    };
    Ok(people
        .into_iter()
        .filter_map(|user| all.get(&user).map(|words| (user, words)))
        .flat_map(|(user, words)| words.iter().map(move |word| (user, word.clone())))
        .collect())
}

/// Everyone who muted `muted` (cached in an action's scope).
pub(crate) fn muters_of(conn: &mut DbConn, muted: UserId) -> Result<Vec<UserId>, StorageError> {
    let all = match current() {
        Some(cache) => cache.muters(conn)?,
        None => Arc::new(load_muters(conn)?),
    };
    Ok(all.get(&muted).cloned().unwrap_or_default())
}

/// The settings a send applies for `user` (cached in an action's scope).
pub(crate) fn send_settings(conn: &mut DbConn, user: &User) -> Result<SendSettings, StorageError> {
    match current() {
        Some(cache) => cache.send_settings(conn, user),
        None => load_send_settings(conn, user),
    }
}

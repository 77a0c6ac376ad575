//! Events about a person's own preferences and presence in others' eyes: `user_status` (to
//! everyone), `alert_words` and `muted_users` (to the person only).

use super::emit::to_users;
use parley_domain::user_status::StatusChange;
use parley_domain::UserId;
use parley_events::Event;
use parley_wire as wire;
use parley_wire::event::UserStatusEvent;
use parley_wire::user::MutedUser;

/// `user_status` with only the parts that changed, to `audience` (every active user).
pub fn status_changed(user: UserId, change: &StatusChange, audience: Vec<UserId>) -> Event {
    let emoji = change.emoji.as_ref();
    to_users(
        audience,
        wire::Event::UserStatus(UserStatusEvent {
            user_id: user,
            status_text: change.status_text.clone(),
            emoji_name: emoji.map(|e| e.name.clone()),
            emoji_code: emoji.map(|e| e.code.clone()),
            reaction_type: emoji.map(|e| e.reaction_type.clone()),
        }),
    )
}

/// `alert_words` with the person's whole list, to them.
pub fn alert_words_changed(user: UserId, words: &[String]) -> Event {
    to_users(
        vec![user],
        wire::Event::AlertWords {
            alert_words: words.to_vec(),
        },
    )
}

/// The `[{id, timestamp}]` list of a person's mutes, as the event and the snapshot show it.
pub fn muted_users_list(mutes: &[(UserId, i64)]) -> Vec<MutedUser> {
    mutes
        .iter()
        .map(|(id, timestamp)| MutedUser {
            id: *id,
            timestamp: *timestamp,
        })
        .collect()
}

/// `muted_users` with the person's whole list, to them.
pub fn muted_users_changed(user: UserId, mutes: &[(UserId, i64)]) -> Event {
    to_users(
        vec![user],
        wire::Event::MutedUsers {
            muted_users: muted_users_list(mutes),
        },
    )
}

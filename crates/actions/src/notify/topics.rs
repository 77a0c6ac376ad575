//! Events about people's topic visibility policies.

use super::emit::to_users;
use parley_domain::{ChannelId, UserId};
use parley_events::Event;
use parley_storage::user_topics::UserTopic;
use parley_wire as wire;

/// `user_topic`: one person's policy for one topic changed.
pub fn user_topic_changed(
    user: UserId,
    channel: ChannelId,
    topic: &str,
    policy: i64,
    now: i64,
) -> Event {
    to_users(
        vec![user],
        wire::Event::UserTopic(wire::personal::UserTopic {
            stream_id: channel,
            topic_name: topic.to_owned(),
            last_updated: now,
            visibility_policy: policy,
        }),
    )
}

/// The legacy `muted_topics` event: the person's whole list of muted topics, for clients that
/// ask for it instead of `user_topic` (the engine sends only `user_topic` to clients asking for
/// both).
pub fn muted_topics_changed(user: UserId, muted: Vec<(String, &UserTopic)>) -> Event {
    let muted_topics = muted
        .into_iter()
        .map(|(channel_name, t)| (channel_name, t.topic.clone(), t.last_updated))
        .collect();
    to_users(vec![user], wire::Event::MutedTopics { muted_topics })
}

//! Events about people's topic visibility policies.

use parley_domain::{ChannelId, UserId};
use parley_events::Event;
use parley_storage::user_topics::UserTopic;
use serde_json::json;

/// `user_topic`: one person's policy for one topic changed.
pub fn user_topic_changed(
    user: UserId,
    channel: ChannelId,
    topic: &str,
    policy: i64,
    now: i64,
) -> Event {
    Event::json(
        vec![user],
        json!({
            "type": "user_topic",
            "stream_id": channel.0,
            "topic_name": topic,
            "last_updated": now,
            "visibility_policy": policy,
        }),
    )
}

/// The legacy `muted_topics` event: the person's whole list of muted topics, for clients that
/// ask for it instead of `user_topic` (the engine sends only `user_topic` to clients asking for
/// both).
pub fn muted_topics_changed(user: UserId, muted: Vec<(String, &UserTopic)>) -> Event {
    let list: Vec<serde_json::Value> = muted
        .into_iter()
        .map(|(channel_name, t)| json!([channel_name, t.topic, t.last_updated]))
        .collect();
    Event::json(
        vec![user],
        json!({"type": "muted_topics", "muted_topics": list}),
    )
}

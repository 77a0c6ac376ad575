//! Topic visibility: whether a person mutes, unmutes or follows a topic, and when sending a
//! message changes that automatically.

use crate::settings::topic_policy;

/// A topic's visibility policy for one person, with the API's numeric values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum VisibilityPolicy {
    /// No policy: the channel's muting decides.
    Inherit = 0,
    /// Muted.
    Muted = 1,
    /// Unmuted in a muted channel.
    Unmuted = 2,
    /// Followed.
    Followed = 3,
}

impl VisibilityPolicy {
    /// The policy with this API value.
    pub fn from_code(code: i64) -> Option<VisibilityPolicy> {
        [
            VisibilityPolicy::Inherit,
            VisibilityPolicy::Muted,
            VisibilityPolicy::Unmuted,
            VisibilityPolicy::Followed,
        ]
        .into_iter()
        .find(|p| *p as i64 == code)
    }

    /// The API value.
    pub fn code(self) -> i64 {
        self as i64
    }
}

/// What a sender's automatic policies say about a topic they just posted in.
#[derive(Debug, Clone, Copy)]
pub struct SendContext {
    /// `automatically_follow_topics_policy`.
    pub follow_policy: i64,
    /// `automatically_unmute_topics_in_muted_streams_policy`.
    pub unmute_policy: i64,
    /// The message started the topic.
    pub starts_topic: bool,
    /// The sender muted the channel.
    pub channel_muted: bool,
    /// The sender's current policy for the topic.
    pub current: VisibilityPolicy,
}

/// Whether a policy value applies to sending: participating and sending always do, starting
/// only for the first message.
fn applies(policy: i64, starts_topic: bool) -> bool {
    match policy {
        topic_policy::ON_PARTICIPATION | topic_policy::ON_SEND => true,
        topic_policy::ON_INITIATION => starts_topic,
        _ => false,
    }
}

/// The sender's new policy after sending, when it changes. Following wins over unmuting; an
/// automatic change never lowers a followed topic, and never overrides an explicit mute except
/// by unmuting in a muted channel.
pub fn after_send(ctx: SendContext) -> Option<VisibilityPolicy> {
    if applies(ctx.follow_policy, ctx.starts_topic) {
        return (ctx.current != VisibilityPolicy::Followed).then_some(VisibilityPolicy::Followed);
    }
    if ctx.channel_muted
        && applies(ctx.unmute_policy, ctx.starts_topic)
        && matches!(
            ctx.current,
            VisibilityPolicy::Inherit | VisibilityPolicy::Muted
        )
    {
        return Some(VisibilityPolicy::Unmuted);
    }
    None
}

/// A mentioned person's new policy when `automatically_follow_topics_where_mentioned` is on.
pub fn after_mention(current: VisibilityPolicy) -> Option<VisibilityPolicy> {
    (current != VisibilityPolicy::Followed).then_some(VisibilityPolicy::Followed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use VisibilityPolicy::*;

    fn ctx(
        follow: i64,
        unmute: i64,
        starts: bool,
        muted: bool,
        current: VisibilityPolicy,
    ) -> SendContext {
        SendContext {
            follow_policy: follow,
            unmute_policy: unmute,
            starts_topic: starts,
            channel_muted: muted,
            current,
        }
    }

    #[test]
    fn the_reference_defaults_follow_new_topics_and_unmute_on_send() {
        // Defaults: follow on initiation (3), unmute on send (2).
        assert_eq!(after_send(ctx(3, 2, true, false, Inherit)), Some(Followed));
        assert_eq!(after_send(ctx(3, 2, false, false, Inherit)), None);
        assert_eq!(after_send(ctx(3, 2, false, true, Inherit)), Some(Unmuted));
        assert_eq!(after_send(ctx(3, 2, false, true, Unmuted)), None);
        assert_eq!(after_send(ctx(3, 2, true, false, Followed)), None);
    }

    #[test]
    fn never_changes_nothing_and_codes_round_trip() {
        assert_eq!(after_send(ctx(4, 4, true, true, Inherit)), None);
        assert_eq!(after_send(ctx(2, 4, false, false, Muted)), Some(Followed));
        assert_eq!(after_mention(Followed), None);
        assert_eq!(after_mention(Muted), Some(Followed));
        for code in 0..4 {
            assert_eq!(
                VisibilityPolicy::from_code(code).map(|p| p.code()),
                Some(code)
            );
        }
        assert_eq!(VisibilityPolicy::from_code(4), None);
    }
}

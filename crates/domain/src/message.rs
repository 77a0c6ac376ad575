//! Messages: their kinds, the rules for topics and content, the per-user flags, and the
//! conventions of the empty topic and resolved topics.

use crate::error::RequestError;
use crate::ids::UserId;
use crate::realm::limits::{MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH};

/// How the empty topic is shown to clients that cannot show an empty name.
pub const EMPTY_TOPIC_DISPLAY_NAME: &str = "general chat";

/// The prefix that marks a topic as resolved.
pub const RESOLVED_TOPIC_PREFIX: &str = "✔ ";

/// Channel or direct message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// To a channel and topic.
    Channel,
    /// To one or more users.
    Direct,
}

impl MessageKind {
    /// Parses the `type` parameter: `channel`/`stream` or `direct`/`private`.
    pub fn parse(raw: &str) -> Result<MessageKind, RequestError> {
        match raw {
            "stream" | "channel" => Ok(MessageKind::Channel),
            "private" | "direct" => Ok(MessageKind::Direct),
            _ => Err(RequestError::invalid_param("type", "Invalid type")),
        }
    }

    /// The `type` messages carry in responses (the legacy names, which every client reads).
    pub fn api_name(self) -> &'static str {
        match self {
            MessageKind::Channel => "stream",
            MessageKind::Direct => "private",
        }
    }
}

/// Normalises a topic as sent: trims it, reads `(no topic)` and the empty-topic display name as
/// the empty topic, refuses unprintable characters, and truncates long topics as the reference
/// does (to 57 characters and `...`).
pub fn normalize_topic(raw: &str, var_name: &str) -> Result<String, RequestError> {
    let topic = raw.trim();
    if topic == "(no topic)" || topic == EMPTY_TOPIC_DISPLAY_NAME {
        return Ok(String::new());
    }
    if let Some(position) = topic
        .chars()
        .position(|c| c.is_control() || is_noncharacter(c))
    {
        return Err(RequestError::invalid_param(
            var_name,
            format!("Invalid character in topic, at position {}!", position + 1),
        ));
    }
    Ok(truncate_topic(topic))
}

fn is_noncharacter(c: char) -> bool {
    let n = c as u32;
    (0xFDD0..=0xFDEF).contains(&n) || (n & 0xFFFE) == 0xFFFE
}

/// Cuts a topic longer than the limit to the limit, ending in `...`.
pub fn truncate_topic(topic: &str) -> String {
    if topic.chars().count() <= MAX_TOPIC_LENGTH {
        return topic.to_owned();
    }
    let kept: String = topic.chars().take(MAX_TOPIC_LENGTH - 3).collect();
    format!("{kept}...")
}

/// The key that makes topic comparisons case-insensitive.
pub fn topic_key(topic: &str) -> String {
    topic.to_lowercase()
}

/// Normalises message content: trailing whitespace and leading newlines go; empty content and
/// NUL bytes are refused; content over the limit is truncated with a note, as the reference does.
pub fn normalize_content(raw: &str) -> Result<String, RequestError> {
    let content = raw.trim_end().trim_start_matches('\n');
    if content.is_empty() {
        return Err(RequestError::bad_request("Message must not be empty"));
    }
    if content.contains('\0') {
        return Err(RequestError::bad_request(
            "Message must not contain null bytes",
        ));
    }
    if content.chars().count() > MAX_MESSAGE_LENGTH {
        const NOTE: &str = "\n[message truncated]";
        let kept: String = content
            .chars()
            .take(MAX_MESSAGE_LENGTH - NOTE.chars().count())
            .collect();
        return Ok(format!("{kept}{NOTE}"));
    }
    Ok(content.to_owned())
}

/// Whether a topic is marked resolved.
pub fn is_resolved(topic: &str) -> bool {
    topic.starts_with(RESOLVED_TOPIC_PREFIX)
}

/// The topic without the resolved prefix.
pub fn unresolved_name(topic: &str) -> &str {
    topic.trim_start_matches(['✔', ' '])
}

/// The direct-message conversation key: the participants' sorted, unique IDs.
pub fn dm_key(participants: &[UserId]) -> String {
    let mut ids: Vec<i64> = participants.iter().map(|u| u.0).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

/// The participants of a conversation key.
pub fn dm_participants(key: &str) -> Vec<UserId> {
    key.split(',')
        .filter_map(|s| s.parse().ok())
        .map(UserId)
        .collect()
}

/// Whether a client's messages start read for their sender when `read_by_sender` is not given:
/// the interactive apps', whose users have just seen what they wrote.
pub fn default_read_by_sender(client: &str) -> bool {
    matches!(
        client.to_lowercase().as_str(),
        "zulipandroid"
            | "zulipios"
            | "zulipdesktop"
            | "zulipmobile"
            | "zulipelectron"
            | "zulipterminal"
            | "snipe"
            | "website"
            | "ios"
            | "android"
    )
}

/// The client name of a request, from its User-Agent (`ZulipPython/0.9` → `ZulipPython`).
pub fn client_name(user_agent: Option<&str>) -> String {
    let name = user_agent
        .and_then(|ua| ua.split(['/', ' ']).next())
        .filter(|s| !s.is_empty())
        .unwrap_or("API");
    name.chars().take(30).collect()
}

/// A subscriber or topic-participant count above which wildcard mentions need permission.
pub const WILDCARD_MENTION_THRESHOLD: usize = 15;

/// Per-user message flags, stored as bits as the reference stores them.
pub mod flags {
    /// Read.
    pub const READ: i64 = 1;
    /// Starred.
    pub const STARRED: i64 = 2;
    /// Collapsed.
    pub const COLLAPSED: i64 = 4;
    /// Mentioned by name.
    pub const MENTIONED: i64 = 8;
    /// A channel wildcard mention reached the user.
    pub const STREAM_WILDCARD_MENTIONED: i64 = 16;
    /// A topic wildcard mention reached the user.
    pub const TOPIC_WILDCARD_MENTIONED: i64 = 32;
    /// A group the user is in was mentioned.
    pub const GROUP_MENTIONED: i64 = 64;
    /// One of the user's alert words appears.
    pub const HAS_ALERT_WORD: i64 = 512;
    /// The user did not receive the message but reads it from the channel's history.
    pub const HISTORICAL: i64 = 1024;
    /// A direct message (internal).
    pub const IS_PRIVATE: i64 = 2048;

    /// The flags the API shows, by bit.
    pub const NAMED: [(i64, &str); 11] = [
        (READ, "read"),
        (STARRED, "starred"),
        (COLLAPSED, "collapsed"),
        (MENTIONED, "mentioned"),
        (STREAM_WILDCARD_MENTIONED, "stream_wildcard_mentioned"),
        (TOPIC_WILDCARD_MENTIONED, "topic_wildcard_mentioned"),
        (GROUP_MENTIONED, "group_mentioned"),
        (128, "force_expand"),
        (256, "force_collapse"),
        (HAS_ALERT_WORD, "has_alert_word"),
        (HISTORICAL, "historical"),
    ];

    /// The flags users may change through `POST /messages/flags`.
    pub const EDITABLE: [&str; 3] = ["read", "starred", "collapsed"];

    /// The API names of a flag set, plus the derived `wildcard_mentioned`.
    pub fn names(bits: i64) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = NAMED
            .iter()
            .filter(|(bit, _)| bits & bit != 0)
            .map(|(_, name)| *name)
            .collect();
        if bits & (STREAM_WILDCARD_MENTIONED | TOPIC_WILDCARD_MENTIONED) != 0 {
            out.push("wildcard_mentioned");
        }
        out
    }

    /// The bit of an API flag name.
    pub fn bit(name: &str) -> Option<i64> {
        NAMED.iter().find(|(_, n)| *n == name).map(|(bit, _)| *bit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_are_normalized() {
        assert_eq!(normalize_topic("  lunch ", "topic").unwrap(), "lunch");
        assert_eq!(normalize_topic("(no topic)", "topic").unwrap(), "");
        assert_eq!(normalize_topic("general chat", "topic").unwrap(), "");
        assert_eq!(normalize_topic("", "topic").unwrap(), "");
        let long = "x".repeat(70);
        let cut = normalize_topic(&long, "topic").unwrap();
        assert_eq!(cut.chars().count(), 60);
        assert!(cut.ends_with("..."));
        let err = normalize_topic("a\nb", "topic").unwrap_err();
        assert_eq!(err.msg, "Invalid character in topic, at position 2!");
    }

    #[test]
    fn content_is_normalized() {
        assert_eq!(normalize_content("\n\n  hi  \n").unwrap(), "  hi");
        assert_eq!(
            normalize_content(" \n ").unwrap_err().msg,
            "Message must not be empty"
        );
        assert!(normalize_content("a\0b").is_err());
        let long = normalize_content(&"y".repeat(10_050)).unwrap();
        assert_eq!(long.chars().count(), 10_000);
        assert!(long.ends_with("\n[message truncated]"));
    }

    #[test]
    fn flags_round_trip() {
        let bits = flags::READ | flags::STARRED | flags::STREAM_WILDCARD_MENTIONED;
        assert_eq!(
            flags::names(bits),
            vec![
                "read",
                "starred",
                "stream_wildcard_mentioned",
                "wildcard_mentioned"
            ]
        );
        assert_eq!(flags::bit("starred"), Some(flags::STARRED));
        assert_eq!(flags::bit("is_private"), None);
    }

    #[test]
    fn dm_keys_are_order_free() {
        assert_eq!(dm_key(&[UserId(3), UserId(1), UserId(3)]), "1,3");
        assert_eq!(dm_participants("1,3"), vec![UserId(1), UserId(3)]);
    }

    #[test]
    fn client_names_and_read_by_sender() {
        assert_eq!(
            client_name(Some("ZulipPython/0.9.1 (Linux)")),
            "ZulipPython"
        );
        assert_eq!(client_name(None), "API");
        assert!(default_read_by_sender("ZulipMobile"));
        assert!(!default_read_by_sender("ZulipPython"));
    }

    #[test]
    fn resolved_topics() {
        assert!(is_resolved("✔ done"));
        assert_eq!(unresolved_name("✔ done"), "done");
        assert!(!is_resolved("done"));
    }
}

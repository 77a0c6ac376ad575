//! What belongs to one person: drafts, saved snippets, navigation views, topic policies, and the
//! parts of the snapshot that summarize their messages.

use parley_domain::{ChannelId, UserId};
use serde::Serialize;

/// A draft.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Draft {
    /// ID.
    pub id: i64,
    /// `""`, `stream` or `private`.
    #[serde(rename = "type")]
    pub draft_type: String,
    /// A channel ID, or the recipients' IDs.
    pub to: Vec<i64>,
    /// The tentative topic.
    pub topic: String,
    /// The content.
    pub content: String,
    /// Last edited, Unix seconds.
    pub timestamp: i64,
}

/// A saved snippet.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SavedSnippet {
    /// ID.
    pub id: i64,
    /// Title.
    pub title: String,
    /// Content.
    pub content: String,
    /// Created, Unix seconds.
    pub date_created: i64,
}

/// A navigation view.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct NavigationView {
    /// The URL fragment it opens.
    pub fragment: String,
    /// Pinned in the left sidebar.
    pub is_pinned: bool,
    /// Its name; null for built-in views.
    pub name: Option<String>,
}

/// A person's visibility policy for one topic (the snapshot's `user_topics`, the `user_topic`
/// event without its `type`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct UserTopic {
    /// The channel.
    pub stream_id: ChannelId,
    /// The topic.
    pub topic_name: String,
    /// Changed, Unix seconds.
    pub last_updated: i64,
    /// The policy's code.
    pub visibility_policy: i64,
}

/// A recent direct-message conversation.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RecentConversation {
    /// The newest message's ID.
    pub max_message_id: i64,
    /// The other members.
    pub user_ids: Vec<UserId>,
}

/// The snapshot's `unread_msgs`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct UnreadMessages {
    /// How many unread messages are listed.
    pub count: usize,
    /// One-on-one conversations.
    pub pms: Vec<UnreadDirect>,
    /// Channel topics.
    pub streams: Vec<UnreadTopic>,
    /// Group conversations.
    pub huddles: Vec<UnreadGroup>,
    /// Unread messages that mention the user.
    pub mentions: Vec<i64>,
    /// More unread messages exist than are listed.
    pub old_unreads_missing: bool,
}

/// Unread messages of a one-on-one conversation.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct UnreadDirect {
    /// The other person.
    pub other_user_id: i64,
    /// Deprecated: the sender of the first unread message.
    pub sender_id: i64,
    /// The message IDs.
    pub unread_message_ids: Vec<i64>,
}

/// Unread messages of a channel topic.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct UnreadTopic {
    /// The channel.
    pub stream_id: i64,
    /// The topic.
    pub topic: String,
    /// The message IDs.
    pub unread_message_ids: Vec<i64>,
}

/// Unread messages of a group conversation.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct UnreadGroup {
    /// The members' IDs, ascending, comma-separated.
    pub user_ids_string: String,
    /// The message IDs.
    pub unread_message_ids: Vec<i64>,
}

/// One entry of the legacy `muted_topics`: channel name, topic, when it was muted (Unix seconds).
pub type MutedTopic = (String, String, i64);

//! Messages as the API shows them (`GET /messages`, `GET /messages/{id}`, the `message` event).

use parley_domain::{ChannelId, MessageId, UserId};
use serde::Serialize;

/// A message as one reader receives it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Message {
    /// ID.
    pub id: MessageId,
    /// Sender.
    pub sender_id: UserId,
    /// Sender's display name.
    pub sender_full_name: String,
    /// Sender's API address.
    pub sender_email: String,
    /// Always empty: one organization per deployment.
    pub sender_realm_str: String,
    /// Sender's avatar; null when the client computes Gravatar URLs itself.
    pub avatar_url: Option<String>,
    /// The sending client's name.
    pub client: String,
    /// Markdown or HTML, as the reader asked.
    pub content: String,
    /// `text/html` or `text/x-markdown`.
    pub content_type: &'static str,
    /// Sent, Unix seconds.
    pub timestamp: i64,
    /// `stream` or `private`.
    #[serde(rename = "type")]
    pub message_type: &'static str,
    /// The channel, for channel messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_id: Option<ChannelId>,
    /// The channel's name, or the conversation's members.
    pub display_recipient: DisplayRecipient,
    /// A key of the conversation.
    pub recipient_id: i64,
    /// The topic (empty for direct messages).
    pub subject: String,
    /// Links the organization's linkifiers find in the topic.
    pub topic_links: Vec<TopicLink>,
    /// Starts with `/me `.
    pub is_me_message: bool,
    /// Emoji reactions.
    pub reactions: Vec<Reaction>,
    /// Widgets' submessages: none (no widgets yet).
    pub submessages: Vec<serde_json::Value>,
    /// The reader's flags.
    pub flags: Vec<&'static str>,
    /// Last content edit, Unix seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_edit_timestamp: Option<i64>,
    /// Last move, Unix seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_moved_timestamp: Option<i64>,
    /// Edits and moves, newest first, as stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit_history: Option<serde_json::Value>,
}

/// `display_recipient`: a channel's name or a direct conversation's members.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum DisplayRecipient {
    /// The channel's name.
    Channel(String),
    /// Every member of the conversation, sender included, by address.
    Direct(Vec<DirectRecipient>),
}

/// One member of a direct conversation.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct DirectRecipient {
    /// ID.
    pub id: UserId,
    /// API address.
    pub email: String,
    /// Display name.
    pub full_name: String,
    /// Always false.
    pub is_mirror_dummy: bool,
}

/// A link a linkifier found in a topic.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct TopicLink {
    /// The matched text.
    pub text: String,
    /// Where it points.
    pub url: String,
}

/// An emoji reaction on a message.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Reaction {
    /// Emoji name.
    pub emoji_name: String,
    /// Emoji code.
    pub emoji_code: String,
    /// `unicode_emoji`, `realm_emoji` or `zulip_extra_emoji`.
    pub reaction_type: String,
    /// Who reacted.
    pub user_id: UserId,
}

/// A message of a `GET /messages` answer; for a `search` narrow, with its rendered content and
/// its topic with the matches highlighted, as the reference adds them.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FoundMessage {
    /// The message.
    #[serde(flatten)]
    pub message: Message,
    /// The rendered content with the search's matches highlighted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_content: Option<String>,
    /// The topic (HTML-escaped) with the search's matches highlighted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_subject: Option<String>,
}

/// The answer of `GET /messages`: written straight to the response, without a generic JSON
/// tree in between (building, writing and dropping two such trees was about half of the
/// process's CPU for a page of 100 messages).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MessagesPage {
    /// The anchor the page was read from; absent when messages were asked for by ID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<i64>,
    /// Whether the anchor message is in the page.
    pub found_anchor: bool,
    /// Whether the page reaches the oldest matching message.
    pub found_oldest: bool,
    /// Whether the page reaches the newest matching message.
    pub found_newest: bool,
    /// Always false: Parley keeps the whole history.
    pub history_limited: bool,
    /// The messages, oldest first.
    pub messages: Vec<FoundMessage>,
}

//! Messages to be sent later: scheduled messages and reminders.

use serde::Serialize;

/// Where a scheduled message goes: a channel ID, or the user IDs of a direct message.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum ScheduledTo {
    /// A channel.
    Channel(i64),
    /// Direct message recipients.
    Users(Vec<i64>),
}

/// A scheduled message, as `GET /scheduled_messages`, the snapshot and its events show it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ScheduledMessage {
    /// Its ID (not the ID the message gets when sent).
    pub scheduled_message_id: i64,
    /// `stream` or `private`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Channel ID or user IDs.
    pub to: ScheduledTo,
    /// Only for channel messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// Markdown.
    pub content: String,
    /// HTML.
    pub rendered_content: String,
    /// When it will be sent, Unix seconds.
    pub scheduled_delivery_timestamp: i64,
    /// Whether sending it was tried and failed.
    pub failed: bool,
}

/// A reminder, as `GET /reminders`, the snapshot and its events show it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Reminder {
    /// Its ID.
    pub reminder_id: i64,
    /// Always `private`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The person reminded.
    pub to: Vec<i64>,
    /// Markdown.
    pub content: String,
    /// HTML.
    pub rendered_content: String,
    /// When it will be sent, Unix seconds.
    pub scheduled_delivery_timestamp: i64,
    /// Whether sending it was tried and failed.
    pub failed: bool,
    /// The message it reminds of.
    pub reminder_target_message_id: i64,
}

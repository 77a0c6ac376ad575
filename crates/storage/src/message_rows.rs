//! A stored message as read, and as one reader reads it (with their flags). Every message
//! query answers these.

use crate::schema::messages;
use diesel::prelude::*;
use parley_domain::message::flags;

/// A stored message.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, QueryableByName)]
#[diesel(table_name = messages)]
pub struct MessageRow {
    /// ID.
    pub id: i64,
    /// Sender.
    pub sender_id: i64,
    /// Channel, for channel messages.
    pub channel_id: Option<i64>,
    /// Topic ("" for direct messages).
    pub topic: String,
    /// Lower-cased topic.
    pub topic_key: String,
    /// Participants' sorted IDs, for direct messages.
    pub dm_key: Option<String>,
    /// Group conversation, for direct messages between three or more.
    pub dm_group_id: Option<i64>,
    /// The other party, for one-on-one direct messages (the sender, for messages to oneself).
    pub recipient_user_id: Option<i64>,
    /// Markdown.
    pub content: String,
    /// HTML.
    pub rendered_content: String,
    /// Send time, Unix seconds.
    pub date_sent: i64,
    /// Last content edit.
    pub last_edit_time: Option<i64>,
    /// Last move.
    pub last_moved_time: Option<i64>,
    /// Edit history, JSON, newest first.
    pub edit_history: Option<String>,
    /// Contains a link.
    pub has_link: bool,
    /// Contains an image.
    pub has_image: bool,
    /// Links to an uploaded file.
    pub has_attachment: bool,
    /// The sending client's name.
    pub client: String,
}

/// A message as read by one user: the row and their flags (None when they never received it
/// and read it from the channel's history).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadMessage {
    /// The message.
    pub row: MessageRow,
    /// The reader's flags.
    pub flags: Option<i64>,
}

impl ReadMessage {
    /// Flags as the API shows them: historical messages are read.
    pub fn effective_flags(&self) -> i64 {
        self.flags.unwrap_or(flags::READ | flags::HISTORICAL)
    }
}

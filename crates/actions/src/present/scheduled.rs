//! Scheduled messages and reminders as the API shows them.

use parley_storage::scheduled_messages::ScheduledMessage;
use parley_wire::scheduled::{Reminder, ScheduledMessage as WireScheduled, ScheduledTo};

/// The recipients stored with a direct message.
pub(crate) fn recipient_ids(row: &ScheduledMessage) -> Vec<i64> {
    serde_json::from_str(&row.recipient_ids).unwrap_or_default()
}

/// A scheduled message.
pub fn scheduled_message(row: &ScheduledMessage) -> WireScheduled {
    let (to, topic) = match row.channel_id {
        Some(channel) => (ScheduledTo::Channel(channel), Some(row.topic.clone())),
        None => (ScheduledTo::Users(recipient_ids(row)), None),
    };
    WireScheduled {
        scheduled_message_id: row.id,
        kind: row.kind.clone(),
        to,
        topic,
        content: row.content.clone(),
        rendered_content: row.rendered_content.clone(),
        scheduled_delivery_timestamp: row.scheduled_at,
        failed: row.failed,
    }
}

/// A reminder.
pub fn reminder(row: &ScheduledMessage) -> Reminder {
    Reminder {
        reminder_id: row.id,
        kind: "private".to_owned(),
        to: vec![row.sender_id],
        content: row.content.clone(),
        rendered_content: row.rendered_content.clone(),
        scheduled_delivery_timestamp: row.scheduled_at,
        failed: row.failed,
        reminder_target_message_id: row.reminder_target_message_id.unwrap_or_default(),
    }
}

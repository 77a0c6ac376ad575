//! Events about a person's scheduled messages and reminders, for their own queues.

use super::emit::to_users;
use crate::present::scheduled::{reminder, scheduled_message};
use parley_domain::UserId;
use parley_events::Event;
use parley_storage::scheduled_messages::ScheduledMessage;
use parley_wire as wire;
use parley_wire::event::{RemindersEvent, ScheduledMessagesEvent};

fn owner(row: &ScheduledMessage) -> Vec<UserId> {
    vec![UserId(row.sender_id)]
}

/// `scheduled_messages` `add`, or `reminders` `add`.
pub fn added(row: &ScheduledMessage) -> Event {
    let event = match row.reminder_target_message_id {
        Some(_) => wire::Event::Reminders(RemindersEvent::Add {
            reminders: vec![reminder(row)],
        }),
        None => wire::Event::ScheduledMessages(ScheduledMessagesEvent::Add {
            scheduled_messages: vec![scheduled_message(row)],
        }),
    };
    to_users(owner(row), event)
}

/// `scheduled_messages` `update`: edited, or failed to send.
pub fn updated(row: &ScheduledMessage) -> Event {
    let scheduled_message = scheduled_message(row);
    to_users(
        owner(row),
        wire::Event::ScheduledMessages(ScheduledMessagesEvent::Update { scheduled_message }),
    )
}

/// `scheduled_messages` `remove`, or `reminders` `remove`: deleted or sent.
pub fn removed(row: &ScheduledMessage) -> Event {
    let event = match row.reminder_target_message_id {
        Some(_) => wire::Event::Reminders(RemindersEvent::Remove {
            reminder_id: row.id,
        }),
        None => wire::Event::ScheduledMessages(ScheduledMessagesEvent::Remove {
            scheduled_message_id: row.id,
        }),
    };
    to_users(owner(row), event)
}

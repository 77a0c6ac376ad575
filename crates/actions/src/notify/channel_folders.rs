//! `channel_folder` events, for everyone in the organization.

use super::emit::to_everyone;
use crate::present::channel_folders::channel_folder;
use parley_events::Event;
use parley_storage::channel_folders::ChannelFolder;
use parley_wire as wire;
use parley_wire::event::ChannelFolderEvent;
use parley_wire::Object;

/// `channel_folder` `add`.
pub fn folder_added(folder: &ChannelFolder) -> Event {
    let channel_folder = channel_folder(folder);
    to_everyone(wire::Event::ChannelFolder(ChannelFolderEvent::Add {
        channel_folder,
    }))
}

/// `channel_folder` `update` with the changed properties.
pub fn folder_updated(id: i64, data: Object) -> Event {
    to_everyone(wire::Event::ChannelFolder(ChannelFolderEvent::Update {
        channel_folder_id: id,
        data,
    }))
}

/// `channel_folder` `reorder`.
pub fn folders_reordered(order: Vec<i64>) -> Event {
    to_everyone(wire::Event::ChannelFolder(ChannelFolderEvent::Reorder {
        order,
    }))
}

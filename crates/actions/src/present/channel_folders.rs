//! Channel folders as the API shows them.

use parley_storage::channel_folders::ChannelFolder;
use parley_wire::channel::ChannelFolder as WireFolder;

/// A channel folder.
pub fn channel_folder(folder: &ChannelFolder) -> WireFolder {
    WireFolder {
        id: folder.id,
        name: folder.name.clone(),
        description: folder.description.clone(),
        rendered_description: folder.rendered_description.clone(),
        creator_id: folder.creator_id,
        date_created: Some(folder.date_created),
        is_archived: folder.is_archived,
        order: folder.folder_order,
    }
}

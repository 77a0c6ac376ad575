//! Events about uploaded files and custom emoji (their objects come from `present::realm`).

use super::emit::{to_everyone, to_users};
use parley_domain::UserId;
use parley_events::Event;
use parley_wire as wire;
use parley_wire::event::{AttachmentEvent, RealmEmojiEvent};
use parley_wire::realm::{Attachment, AttachmentId, RealmEmojiMap};

/// `attachment` `add` (a new upload) or `update` (its messages changed), to the owner: the
/// attachment in full and the organization's used upload space.
pub fn attachment_changed(
    owner: UserId,
    added: bool,
    attachment: Attachment,
    upload_space_used: i64,
) -> Event {
    let event = if added {
        AttachmentEvent::Add {
            attachment,
            upload_space_used,
        }
    } else {
        AttachmentEvent::Update {
            attachment,
            upload_space_used,
        }
    };
    to_users(vec![owner], wire::Event::Attachment(event))
}

/// `attachment` `remove`, to the owner.
pub fn attachment_removed(owner: UserId, id: i64, upload_space_used: i64) -> Event {
    to_users(
        vec![owner],
        wire::Event::Attachment(AttachmentEvent::Remove {
            attachment: AttachmentId { id },
            upload_space_used,
        }),
    )
}

/// `realm_emoji` `update`, to everyone: the full set of custom emoji.
pub fn realm_emoji_updated(realm_emoji: RealmEmojiMap) -> Event {
    to_everyone(wire::Event::RealmEmoji(RealmEmojiEvent::Update {
        realm_emoji,
    }))
}

//! The organization's configuration objects as the API shows them: custom profile fields,
//! linkifiers, playgrounds, custom emoji and attachments.

use parley_domain::realm_emoji::image_url;
use parley_storage::attachments::Attachment;
use parley_storage::realm_emoji::RealmEmojiRow;
use parley_storage::StorageError;
use parley_storage::{playgrounds, profile_fields, DbConn};
use parley_wire::realm::{
    self as wire, AttachmentMessage, CustomProfileField, Linkifier, Playground, RealmEmojiMap,
};

/// The organization's ID (1 until the organization row exists).
pub fn realm_id(conn: &mut DbConn) -> Result<i64, StorageError> {
    crate::realm_cache::realm_id(conn)
}

/// Every custom profile field definition, in display order (`GET /realm/profile_fields`, the
/// snapshot's `custom_profile_fields` and the `custom_profile_fields` event).
pub fn profile_fields(conn: &mut DbConn) -> Result<Vec<CustomProfileField>, StorageError> {
    Ok(profile_fields::all(conn)?
        .iter()
        .map(CustomProfileField::from)
        .collect())
}

/// Every linkifier, in processing order.
pub fn linkifiers(conn: &mut DbConn) -> Result<Vec<Linkifier>, StorageError> {
    Ok(crate::realm_cache::linkifiers(conn)?
        .iter()
        .map(|l| Linkifier {
            id: l.id,
            pattern: l.pattern.clone(),
            url_template: l.url_template.clone(),
        })
        .collect())
}

/// Every code playground.
pub fn playgrounds(conn: &mut DbConn) -> Result<Vec<Playground>, StorageError> {
    Ok(playgrounds::all(conn)?
        .into_iter()
        .map(|p| Playground {
            id: p.id,
            name: p.name,
            pygments_language: p.pygments_language,
            url_template: p.url_template,
        })
        .collect())
}

/// A custom emoji (`still_url` is null unless the image is animated).
pub fn realm_emoji_object(realm_id: i64, emoji: &RealmEmojiRow) -> wire::RealmEmoji {
    let still_url = emoji.is_animated.then(|| {
        let stem = emoji
            .file_name
            .rsplit_once('.')
            .map_or(emoji.file_name.as_str(), |(s, _)| s);
        image_url(realm_id, &format!("still/{stem}.png"))
    });
    wire::RealmEmoji {
        id: emoji.id.to_string(),
        name: emoji.name.clone(),
        source_url: image_url(realm_id, &emoji.file_name),
        still_url,
        deactivated: emoji.deactivated,
        author_id: emoji.author_id.map(parley_domain::UserId),
    }
}

/// Every custom emoji (active or not), keyed by ID (`GET /realm/emoji`, the snapshot's
/// `realm_emoji`, the `realm_emoji` event).
pub fn realm_emoji(conn: &mut DbConn) -> Result<RealmEmojiMap, StorageError> {
    let realm = realm_id(conn)?;
    Ok(crate::realm_cache::emoji(conn)?
        .iter()
        .map(|e| (e.id.to_string(), realm_emoji_object(realm, e)))
        .collect())
}

/// An attachment; `messages` are `(id, date_sent seconds)` pairs.
pub fn attachment(attachment: &Attachment, messages: &[(i64, i64)]) -> wire::Attachment {
    wire::Attachment {
        id: attachment.id,
        name: attachment.name.clone(),
        path_id: attachment.path_id.clone(),
        size: attachment.size,
        create_time: attachment.create_time * 1000,
        messages: messages
            .iter()
            .map(|(id, date_sent)| AttachmentMessage {
                id: *id,
                date_sent: date_sent * 1000,
            })
            .collect(),
    }
}

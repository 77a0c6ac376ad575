//! The organization's configuration objects: linkifiers, code playgrounds, custom emoji, custom
//! profile fields, attachments and the default channels.

use parley_domain::profile_field::ProfileField;
use parley_domain::{ProfileFieldId, UserId};
use serde::Serialize;
use std::collections::BTreeMap;

/// A linkifier.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Linkifier {
    /// ID.
    pub id: i64,
    /// The regular expression.
    pub pattern: String,
    /// The RFC 6570 URL template.
    pub url_template: String,
}

/// A code playground.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Playground {
    /// ID.
    pub id: i64,
    /// Display name.
    pub name: String,
    /// The Pygments language it opens.
    pub pygments_language: String,
    /// The RFC 6570 URL template.
    pub url_template: String,
}

/// A custom emoji.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RealmEmoji {
    /// ID, as a string.
    pub id: String,
    /// Name.
    pub name: String,
    /// The image.
    pub source_url: String,
    /// A still image of an animated emoji; null otherwise.
    pub still_url: Option<String>,
    /// Deactivated emoji stay for old messages.
    pub deactivated: bool,
    /// Who uploaded it.
    pub author_id: Option<UserId>,
}

/// Every custom emoji, keyed by ID.
pub type RealmEmojiMap = BTreeMap<String, RealmEmoji>;

/// A custom profile field definition.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CustomProfileField {
    /// ID.
    pub id: ProfileFieldId,
    /// Type code.
    #[serde(rename = "type")]
    pub field_type: i64,
    /// Display order.
    pub order: i64,
    /// Name.
    pub name: String,
    /// Help text.
    pub hint: String,
    /// Type-specific JSON text (select options, external account kind).
    pub field_data: String,
    /// Shown in the user card summary.
    pub display_in_profile_summary: bool,
    /// Users must fill it in.
    pub required: bool,
    /// Users may change their own value: always, in Parley (see `docs/api-coverage.md`).
    pub editable_by_user: bool,
}

impl From<&ProfileField> for CustomProfileField {
    fn from(field: &ProfileField) -> Self {
        CustomProfileField {
            id: field.id,
            field_type: field.field_type,
            order: field.order,
            name: field.name.clone(),
            hint: field.hint.clone(),
            field_data: field.field_data.clone(),
            display_in_profile_summary: field.display_in_profile_summary,
            required: field.required,
            editable_by_user: true,
        }
    }
}

/// One entry of the snapshot's `custom_profile_field_types`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ProfileFieldType {
    /// Type code.
    pub id: i64,
    /// Display name.
    pub name: &'static str,
}

/// Every field type by its constant name (`SHORT_TEXT`, ...).
pub fn profile_field_types() -> BTreeMap<&'static str, ProfileFieldType> {
    [
        ("SHORT_TEXT", 1, "Text (short)"),
        ("LONG_TEXT", 2, "Text (long)"),
        ("SELECT", 3, "List of options"),
        ("DATE", 4, "Date picker"),
        ("URL", 5, "Link"),
        ("USER", 6, "Person picker"),
        ("EXTERNAL_ACCOUNT", 7, "External account"),
        ("PRONOUNS", 8, "Pronouns"),
    ]
    .into_iter()
    .map(|(key, id, name)| (key, ProfileFieldType { id, name }))
    .collect()
}

/// An uploaded file and the messages that link it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Attachment {
    /// ID.
    pub id: i64,
    /// File name.
    pub name: String,
    /// Path below `/user_uploads/`.
    pub path_id: String,
    /// Bytes.
    pub size: i64,
    /// Upload time, Unix milliseconds.
    pub create_time: i64,
    /// The messages that link it.
    pub messages: Vec<AttachmentMessage>,
}

/// A message that links an attachment.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct AttachmentMessage {
    /// Message ID.
    pub id: i64,
    /// Sent, Unix milliseconds.
    pub date_sent: i64,
}

/// The attachment of the `attachment` `remove` event: only its ID.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct AttachmentId {
    /// ID.
    pub id: i64,
}

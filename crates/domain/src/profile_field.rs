//! Custom profile fields: organization-defined fields on every person's profile.

use crate::ids::ProfileFieldId;
use serde::Serialize;

/// Field types, with the API's numeric values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileFieldType {
    /// One line of text.
    ShortText = 1,
    /// A paragraph of Markdown.
    LongText = 2,
    /// One of a set of options (`field_data` lists them).
    Select = 3,
    /// A date.
    Date = 4,
    /// A URL.
    Link = 5,
    /// One or more users.
    User = 6,
    /// An account on another service (`field_data` names it).
    ExternalAccount = 7,
    /// Pronouns.
    Pronouns = 8,
}

impl ProfileFieldType {
    /// The type for an API numeric value.
    pub fn from_code(code: i64) -> Option<Self> {
        use ProfileFieldType::*;
        [
            ShortText,
            LongText,
            Select,
            Date,
            Link,
            User,
            ExternalAccount,
            Pronouns,
        ]
        .into_iter()
        .find(|t| *t as i64 == code)
    }

    /// Text types are rendered as Markdown, and their values carry `rendered_value`.
    pub fn is_markdown(self) -> bool {
        matches!(
            self,
            ProfileFieldType::ShortText | ProfileFieldType::LongText
        )
    }
}

/// `custom_profile_field_types` of the register snapshot: every type with its ID and name.
pub fn field_types_json() -> serde_json::Value {
    let names = [
        ("SHORT_TEXT", 1, "Text (short)"),
        ("LONG_TEXT", 2, "Text (long)"),
        ("SELECT", 3, "List of options"),
        ("DATE", 4, "Date picker"),
        ("URL", 5, "Link"),
        ("USER", 6, "Person picker"),
        ("EXTERNAL_ACCOUNT", 7, "External account"),
        ("PRONOUNS", 8, "Pronouns"),
    ];
    let mut map = serde_json::Map::new();
    for (key, id, name) in names {
        map.insert(key.into(), serde_json::json!({"id": id, "name": name}));
    }
    serde_json::Value::Object(map)
}

/// A field definition as `GET /realm/profile_fields` returns it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ProfileField {
    /// Field ID.
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
}

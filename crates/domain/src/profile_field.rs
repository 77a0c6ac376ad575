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

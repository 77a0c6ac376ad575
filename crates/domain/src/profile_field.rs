//! Custom profile fields: organization-defined fields on every person's profile.

use crate::error::RequestError;
use crate::ids::{ProfileFieldId, UserId};

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

/// A field definition as stored (the API shows it as `wire::realm::CustomProfileField`).
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileField {
    /// Field ID.
    pub id: ProfileFieldId,
    /// Type code.
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

/// The longest short-text-like value (short text, external account, pronouns).
pub const MAX_SHORT_VALUE: usize = 50;
/// The longest long-text value.
pub const MAX_LONG_VALUE: usize = 500;
/// The longest field name.
pub const MAX_NAME_LENGTH: usize = 40;
/// The longest hint.
pub const MAX_HINT_LENGTH: usize = 80;

fn too_long(field: &ProfileField, limit: usize) -> RequestError {
    RequestError::invalid_param(
        "data",
        format!("{} is too long (limit: {limit} characters)", field.name),
    )
}

fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return false;
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return false;
    }
    let (Ok(y), Ok(m), Ok(d)) = (y.parse::<i32>(), m.parse::<u8>(), d.parse::<u8>()) else {
        return false;
    };
    time::Month::try_from(m)
        .ok()
        .and_then(|month| time::Date::from_calendar_date(y, month, d).ok())
        .is_some()
}

fn is_url(text: &str) -> bool {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"));
    rest.is_some_and(|r| {
        !r.is_empty() && !r.starts_with('/') && !r.chars().any(char::is_whitespace)
    })
}

/// Checks a (non-empty) value sent for `field` and returns the text to store: options of a
/// select field by key, dates as `YYYY-MM-DD`, links as http(s) URLs, user lists as a JSON list
/// of IDs that `is_user` accepts, text within its length limit.
pub fn check_value(
    field: &ProfileField,
    value: &serde_json::Value,
    is_user: impl Fn(UserId) -> bool,
) -> Result<String, RequestError> {
    let kind = ProfileFieldType::from_code(field.field_type);
    if kind == Some(ProfileFieldType::User) {
        let list = match value {
            serde_json::Value::String(text) => serde_json::from_str(text).ok(),
            other => Some(other.clone()),
        };
        let ids: Vec<i64> = list
            .and_then(|v| serde_json::from_value(v).ok())
            .ok_or_else(|| {
                RequestError::invalid_param("data", format!("{} is not a list", field.name))
            })?;
        if let Some(bad) = ids.iter().find(|id| !is_user(UserId(**id))) {
            return Err(RequestError::invalid_param(
                "data",
                format!("Invalid user ID: {bad}"),
            ));
        }
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        if unique.len() != ids.len() {
            return Err(RequestError::invalid_param(
                "data",
                format!("{} has duplicate user IDs", field.name),
            ));
        }
        return Ok(serde_json::Value::from(ids).to_string());
    }
    let serde_json::Value::String(text) = value else {
        return Err(RequestError::invalid_param(
            "data",
            format!("{} is not a string", field.name),
        ));
    };
    let length = text.chars().count();
    match kind {
        Some(ProfileFieldType::LongText) if length > MAX_LONG_VALUE => {
            Err(too_long(field, MAX_LONG_VALUE))
        }
        Some(ProfileFieldType::LongText) => Ok(text.clone()),
        Some(ProfileFieldType::Select) => {
            let options: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&field.field_data).unwrap_or_default();
            if options.contains_key(text) {
                Ok(text.clone())
            } else {
                Err(RequestError::invalid_param(
                    "data",
                    format!("'{text}' is not a valid choice for '{}'.", field.name),
                ))
            }
        }
        Some(ProfileFieldType::Date) if is_date(text) => Ok(text.clone()),
        Some(ProfileFieldType::Date) => Err(RequestError::invalid_param(
            "data",
            format!("{} is not a date", field.name),
        )),
        Some(ProfileFieldType::Link) if is_url(text) => Ok(text.clone()),
        Some(ProfileFieldType::Link) => Err(RequestError::invalid_param(
            "data",
            format!("{} is not a URL", field.name),
        )),
        _ if length > MAX_SHORT_VALUE => Err(too_long(field, MAX_SHORT_VALUE)),
        _ => Ok(text.clone()),
    }
}

/// Checks a select field's `field_data`: a non-empty object of options, each `{text, order}`
/// with non-empty text, no two with the same text.
pub fn check_field_data(field_type: i64, data: &str) -> Result<(), RequestError> {
    match ProfileFieldType::from_code(field_type) {
        Some(ProfileFieldType::Select) => {
            let bad = |msg: &str| RequestError::invalid_param("field_data", msg);
            let options: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(data).map_err(|_| bad("field_data is not a dict"))?;
            if options.is_empty() {
                return Err(bad("Field must have at least one choice."));
            }
            let mut texts = Vec::new();
            for option in options.values() {
                let text = option["text"].as_str().unwrap_or_default();
                if text.trim().is_empty() {
                    return Err(bad("Label cannot be blank."));
                }
                if texts.contains(&text) {
                    return Err(bad("Field must not have duplicate choices."));
                }
                texts.push(text);
            }
            Ok(())
        }
        Some(ProfileFieldType::ExternalAccount) => {
            let value: serde_json::Value = serde_json::from_str(data).unwrap_or_default();
            if value["subtype"].as_str().is_none_or(str::is_empty) {
                return Err(RequestError::invalid_param(
                    "field_data",
                    "Invalid field data: subtype is required",
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod value_tests {
    use super::*;
    use serde_json::json;

    fn field(kind: ProfileFieldType, data: &str) -> ProfileField {
        ProfileField {
            id: ProfileFieldId(1),
            field_type: kind as i64,
            order: 0,
            name: "F".into(),
            hint: String::new(),
            field_data: data.into(),
            display_in_profile_summary: false,
            required: false,
        }
    }

    #[test]
    fn values_are_checked_per_type() {
        let ok = |_: UserId| true;
        let short = field(ProfileFieldType::ShortText, "");
        assert!(check_value(&short, &json!("x".repeat(50)), ok).is_ok());
        assert!(check_value(&short, &json!("x".repeat(51)), ok).is_err());
        let long = field(ProfileFieldType::LongText, "");
        assert!(check_value(&long, &json!("x".repeat(500)), ok).is_ok());
        let select = field(
            ProfileFieldType::Select,
            r#"{"a":{"text":"A","order":"1"}}"#,
        );
        assert!(check_value(&select, &json!("a"), ok).is_ok());
        assert!(check_value(&select, &json!("b"), ok).is_err());
        let date = field(ProfileFieldType::Date, "");
        assert!(check_value(&date, &json!("2000-02-29"), ok).is_ok());
        assert!(check_value(&date, &json!("2001-02-29"), ok).is_err());
        let link = field(ProfileFieldType::Link, "");
        assert!(check_value(&link, &json!("https://x.org/a"), ok).is_ok());
        assert!(check_value(&link, &json!("x.org"), ok).is_err());
        let users = field(ProfileFieldType::User, "");
        assert_eq!(check_value(&users, &json!([3, 4]), ok).unwrap(), "[3,4]");
        assert_eq!(check_value(&users, &json!("[3]"), ok).unwrap(), "[3]");
        assert!(check_value(&users, &json!([3, 3]), ok).is_err());
        assert!(check_value(&users, &json!([9]), |u| u.0 != 9).is_err());
    }
}

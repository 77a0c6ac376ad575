//! Personal settings as they apply to a user: the registry's defaults with the user's own
//! values over them.

use parley_domain::settings::SETTINGS;
use parley_domain::user::User;
use serde_json::{Map, Value};

/// Every setting of a user with its effective value.
pub fn effective_settings(user: &User) -> Map<String, Value> {
    let mut out: Map<String, Value> = SETTINGS
        .iter()
        .map(|s| (s.name.to_owned(), s.default.to_json()))
        .collect();
    out.insert("timezone".into(), user.timezone.clone().into());
    out.insert(
        "email_address_visibility".into(),
        (user.email_address_visibility as i64).into(),
    );
    out
}

/// Whether a boolean setting is on for a user.
pub fn flag(user: &User, name: &str) -> bool {
    effective_settings(user)
        .get(name)
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

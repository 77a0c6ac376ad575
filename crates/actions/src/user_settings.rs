//! Personal settings as they apply to users: the registry's defaults with each user's stored
//! values over them. Load once per action for everyone it concerns ([`Settings::load`]).

use parley_domain::settings::SETTINGS;
use parley_domain::user::User;
use parley_domain::UserId;
use parley_storage::{settings, DbConn, StorageError};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The settings of some users.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    stored: HashMap<UserId, HashMap<String, String>>,
}

impl Settings {
    /// Loads the stored values of these users (one query).
    pub fn load<'a>(
        conn: &mut DbConn,
        users: impl IntoIterator<Item = &'a User>,
    ) -> Result<Settings, StorageError> {
        let ids: Vec<UserId> = users.into_iter().map(|u| u.id).collect();
        Ok(Settings {
            stored: settings::of_users(conn, &ids)?,
        })
    }

    /// One setting of a user: stored, else the registry's default.
    pub fn get(&self, user: UserId, name: &str) -> Option<Value> {
        self.stored
            .get(&user)
            .and_then(|values| values.get(name))
            .and_then(|text| serde_json::from_str(text).ok())
            .or_else(|| parley_domain::settings::find(name).map(|spec| spec.default.to_json()))
    }

    /// A boolean setting of a user (false when unknown).
    pub fn flag(&self, user: UserId, name: &str) -> bool {
        self.get(user, name)
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    }

    /// An integer setting of a user.
    pub fn int(&self, user: UserId, name: &str) -> Option<i64> {
        self.get(user, name).and_then(|v| v.as_i64())
    }

    /// Every setting of a user with its effective value, as `user_settings` shows them.
    pub fn all(&self, user: &User) -> Map<String, Value> {
        let mut out: Map<String, Value> = SETTINGS
            .iter()
            .map(|s| {
                (
                    s.name.to_owned(),
                    self.get(user.id, s.name).unwrap_or(Value::Null),
                )
            })
            .collect();
        out.insert("timezone".into(), user.timezone.clone().into());
        out.insert(
            "email_address_visibility".into(),
            (user.email_address_visibility as i64).into(),
        );
        out
    }
}

/// Every setting of one user with its effective value.
pub fn effective_settings(
    conn: &mut DbConn,
    user: &User,
) -> Result<Map<String, Value>, StorageError> {
    Ok(Settings::load(conn, [user])?.all(user))
}

/// Whether a boolean setting is on for one user.
pub fn flag(conn: &mut DbConn, user: &User, name: &str) -> Result<bool, StorageError> {
    Ok(Settings::load(conn, [user])?.flag(user.id, name))
}

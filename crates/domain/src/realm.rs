//! The organization (realm) that a deployment hosts.

/// The organization's stored settings that this layer reasons about.
#[derive(Debug, Clone, PartialEq)]
pub struct Realm {
    /// Database ID; one deployment has exactly one realm.
    pub id: i64,
    /// Display name.
    pub name: String,
    /// Markdown description; the API returns it rendered.
    pub description: String,
    /// A deactivated organization refuses every request.
    pub deactivated: bool,
    /// Whether spectators (no account) may read web-public channels.
    pub enable_spectator_access: bool,
    /// Creation time, Unix seconds.
    pub date_created: i64,
}

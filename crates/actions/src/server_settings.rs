//! `GET /server_settings`: what a client needs to know before logging in.

use crate::context::Context;
use crate::error::ActionResult;
use parley_domain::version;
use parley_storage::realms;
use serde::Serialize;
use serde_json::{json, Value};

/// The fields of `GET /server_settings`.
#[derive(Debug, Clone, Serialize)]
pub struct ServerSettings {
    /// Deprecated map of login methods.
    pub authentication_methods: Value,
    /// Single-sign-on methods; Parley has none.
    pub external_authentication_methods: Vec<Value>,
    /// API feature level.
    pub service_feature_level: i64,
    /// Version string.
    pub service_version: String,
    /// Merge base with the reference release.
    pub service_merge_base: String,
    /// Same as `service_feature_level`, for clients of the reference server.
    pub zulip_feature_level: i64,
    /// Same as `service_version`.
    pub zulip_version: String,
    /// Same as `service_merge_base`.
    pub zulip_merge_base: String,
    /// No push notification service is configured.
    pub push_notifications_enabled: bool,
    /// Whether the requesting client is too old; no client is.
    pub is_incompatible: bool,
    /// Email and password login is on.
    pub email_auth_enabled: bool,
    /// Usernames are email addresses (no LDAP).
    pub require_email_format_usernames: bool,
    /// Deprecated alias of `realm_url`.
    pub realm_uri: String,
    /// The organization's canonical URL.
    pub realm_url: String,
    /// Display name.
    pub realm_name: String,
    /// Square logo URL.
    pub realm_icon: String,
    /// HTML description.
    pub realm_description: String,
    /// Web-public channels exist and spectators may read them.
    pub realm_web_public_access_enabled: bool,
}

/// Builds the server settings from the organization row and the configuration.
pub async fn get_server_settings(ctx: &Context) -> ActionResult<ServerSettings> {
    let (realm, web_public_channel) = ctx
        .run(|conn| {
            let realm = realms::get(conn)?;
            let web_public = parley_storage::channels::all(conn)?
                .iter()
                .any(|c| c.is_web_public && !c.is_archived);
            Ok::<_, parley_storage::StorageError>((realm, web_public))
        })
        .await?;
    let spectators = realm.as_ref().is_some_and(|r| r.enable_spectator_access);
    let (name, description) = realm.map(|r| (r.name, r.description)).unwrap_or_default();
    let url = ctx.realm.url.clone();
    Ok(ServerSettings {
        authentication_methods: json!({
            "password": true, "dev": false, "email": true, "ldap": false,
            "remoteuser": false, "github": false, "azuread": false, "gitlab": false,
            "apple": false, "google": false, "saml": false, "openid connect": false,
        }),
        external_authentication_methods: Vec::new(),
        service_feature_level: version::FEATURE_LEVEL,
        service_version: version::service_version(),
        service_merge_base: version::service_merge_base(),
        zulip_feature_level: version::FEATURE_LEVEL,
        zulip_version: version::service_version(),
        zulip_merge_base: version::service_merge_base(),
        push_notifications_enabled: crate::push_devices::push_enabled(ctx),
        is_incompatible: false,
        email_auth_enabled: true,
        require_email_format_usernames: true,
        realm_uri: url.clone(),
        realm_icon: format!("{url}/static/images/logo/parley-icon.svg"),
        realm_url: url,
        realm_name: name,
        realm_description: parley_markdown::render(&description),
        realm_web_public_access_enabled: spectators && web_public_channel,
    })
}

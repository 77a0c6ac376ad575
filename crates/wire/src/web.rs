//! What the web client's HTML shell hands its script: the page params, read from
//! `<script id="page-params" type="application/json">` before the client registers its queue.

use parley_domain::UserId;
use serde::Serialize;

/// The page params of `GET /` (the contract with the web client; more fields may follow).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageParams {
    /// The session's CSRF token, for the `X-CSRFToken` header of every state-changing request.
    pub csrf_token: String,
    /// The signed-in user.
    pub user_id: UserId,
    /// Their API address.
    pub email: String,
    /// Their name.
    pub full_name: String,
    /// The organization's name.
    pub realm_name: String,
    /// The organization's icon.
    pub realm_icon_url: String,
    /// The server's URL (`realm_url`).
    pub server_url: String,
    /// The API feature level the server speaks.
    pub zulip_feature_level: i64,
}

//! What the web client's server-rendered pages show: the organization on the login and sign-up
//! pages, and the page params of the signed-in shell (`GET /`).

use crate::context::Context;
use crate::error::ActionResult;
use crate::sessions::ActiveSession;
use parley_domain::version;
use parley_storage::realms;
use parley_wire::web::PageParams;

/// The organization as its pages present it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Organization {
    /// Its name, as entered (the page escapes it).
    pub name: String,
    /// Its description rendered from Markdown: sanitized HTML, as `realm_description`.
    pub description_html: String,
    /// Its icon.
    pub icon_url: String,
    /// The server's URL, which the mobile, desktop and terminal apps ask for.
    pub url: String,
}

/// The organization's URL for its icon (the one `realm_icon` of `GET /server_settings` names).
pub fn icon_url(ctx: &Context) -> String {
    format!("{}/static/images/logo/parley-icon.svg", ctx.realm.url)
}

/// The organization, for the login and sign-up pages.
pub async fn organization(ctx: &Context) -> ActionResult<Organization> {
    let realm = ctx.run(realms::get).await?;
    let (name, description) = realm.map(|r| (r.name, r.description)).unwrap_or_default();
    Ok(Organization {
        name,
        description_html: parley_markdown::render(&description),
        icon_url: icon_url(ctx),
        url: ctx.realm.url.clone(),
    })
}

/// The page params of the shell a signed-in browser gets at `GET /`.
pub async fn page_params(ctx: &Context, session: &ActiveSession) -> ActionResult<PageParams> {
    let realm = ctx.run(realms::get).await?;
    let user = &session.user;
    Ok(PageParams {
        csrf_token: session.csrf_token.clone(),
        user_id: user.id,
        email: user.api_email(&ctx.realm.host),
        full_name: user.full_name.clone(),
        realm_name: realm.map(|r| r.name).unwrap_or_default(),
        realm_icon_url: icon_url(ctx),
        server_url: ctx.realm.url.clone(),
        zulip_feature_level: version::FEATURE_LEVEL,
    })
}

//! Rendering message Markdown against the organization's data: mentions find users, groups and
//! channels with small indexed queries, only when the text uses their syntax.

use parley_markdown::{
    Camo, Linkifier, Lookup, MentionChannel, MentionGroup, MentionUser, RealmEmoji, Rendered,
    UploadedImage,
};
use parley_storage::{channels, users, DbConn, StorageError};
use std::cell::RefCell;

/// A [`Lookup`] over the database, for one rendering inside a transaction.
pub struct DbLookup<'a> {
    conn: RefCell<&'a mut DbConn>,
    realm_url: String,
    camo: Option<Camo>,
    /// The linkifiers, read at most once per rendering, on first use.
    linkifiers: std::cell::OnceCell<Vec<Linkifier>>,
}

impl<'a> DbLookup<'a> {
    /// A lookup over this connection.
    pub fn new(conn: &'a mut DbConn, realm_url: &str) -> Self {
        DbLookup {
            conn: RefCell::new(conn),
            realm_url: realm_url.to_owned(),
            camo: None,
            linkifiers: std::cell::OnceCell::new(),
        }
    }
}

impl Lookup for DbLookup<'_> {
    fn users_by_name(&self, full_name: &str) -> Vec<MentionUser> {
        let mut conn = self.conn.borrow_mut();
        users::active_by_full_name(&mut conn, full_name)
            .map(|found| {
                found
                    .into_iter()
                    .map(|u| MentionUser {
                        id: u.id.0,
                        full_name: u.full_name,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn user_by_id(&self, id: i64) -> Option<MentionUser> {
        let mut conn = self.conn.borrow_mut();
        users::by_id(&mut conn, parley_domain::UserId(id))
            .ok()
            .flatten()
            .filter(|u| u.is_active)
            .map(|u| MentionUser {
                id: u.id.0,
                full_name: u.full_name,
            })
    }

    fn group_by_name(&self, name: &str) -> Option<MentionGroup> {
        // Active user groups only; system groups and deactivated groups are not mentionable.
        let mut conn = self.conn.borrow_mut();
        parley_storage::groups::active_user_group_by_name(&mut conn, name)
            .ok()
            .flatten()
            .map(|g| MentionGroup {
                id: g.id,
                name: g.name,
            })
    }

    fn channel_by_name(&self, name: &str) -> Option<MentionChannel> {
        let mut conn = self.conn.borrow_mut();
        channels::by_name(&mut conn, name)
            .ok()
            .flatten()
            .filter(|c| !c.invite_only)
            .map(|c| MentionChannel {
                id: c.id.0,
                name: c.name,
            })
    }

    fn realm_emoji(&self, name: &str) -> Option<RealmEmoji> {
        let mut conn = self.conn.borrow_mut();
        realm_emoji_for_rendering(&mut conn, name)
    }

    fn linkifiers(&self) -> &[Linkifier] {
        self.linkifiers.get_or_init(|| {
            let mut conn = self.conn.borrow_mut();
            linkifiers_for_rendering(&mut conn).unwrap_or_default()
        })
    }

    fn realm_url(&self) -> Option<&str> {
        Some(&self.realm_url)
    }

    fn knows_uploads(&self) -> bool {
        true
    }

    fn uploaded_image(&self, path_id: &str) -> Option<UploadedImage> {
        let mut conn = self.conn.borrow_mut();
        let path_id = parley_domain::upload::percent_decode(path_id);
        crate::image_previews::preview_for_rendering(&mut conn, &path_id)
            .ok()
            .flatten()
    }

    fn camo(&self) -> Option<&Camo> {
        self.camo.as_ref()
    }
}

impl DbLookup<'_> {
    /// The same lookup with the organization's camo proxy.
    pub fn with_camo(mut self, camo: Option<Camo>) -> Self {
        self.camo = camo;
        self
    }
}

/// Renders content (descriptions, settings) with the organization's data.
pub fn render(conn: &mut DbConn, realm_url: &str, content: &str) -> Rendered {
    render_message(conn, realm_url, None, content)
}

/// Renders a message with the organization's data, loading outside media through `camo`.
pub fn render_message(
    conn: &mut DbConn,
    realm_url: &str,
    camo: Option<&Camo>,
    content: &str,
) -> Rendered {
    let lookup = DbLookup::new(conn, realm_url).with_camo(camo.cloned());
    parley_markdown::render_message(content, &lookup)
}

/// `POST /messages/render`: the HTML a message would get.
pub async fn preview(ctx: &crate::Context, content: String) -> crate::error::ActionResult<String> {
    let url = ctx.realm.url.clone();
    let camo = ctx.camo.clone();
    ctx.run(move |conn| Ok(render_message(conn, &url, camo.as_ref(), &content).html))
        .await
}

/// The linkifiers as the Markdown renderer takes them, in processing order. Renderers load
/// them once per rendering (see [`DbLookup`]).
pub fn linkifiers_for_rendering(conn: &mut DbConn) -> Result<Vec<Linkifier>, StorageError> {
    Ok(crate::realm_cache::linkifiers(conn)?
        .iter()
        .map(|l| Linkifier {
            id: l.id,
            pattern: l.pattern.clone(),
            url_template: l.url_template.clone(),
        })
        .collect())
}

/// The active custom emoji of this name, as the renderer takes it.
fn realm_emoji_for_rendering(conn: &mut DbConn, name: &str) -> Option<RealmEmoji> {
    let emoji = crate::realm_cache::active_emoji_by_name(conn, name).ok()??;
    let realm = crate::realm_cache::realm_id(conn).ok()?;
    Some(RealmEmoji {
        id: emoji.id.to_string(),
        name: emoji.name.clone(),
        url: parley_domain::realm_emoji::image_url(realm, &emoji.file_name),
    })
}

/// A message's `topic_links`: the links found in its topic by these linkifiers and as bare
/// URLs.
pub fn topic_links(topic: &str, linkifiers: &[Linkifier]) -> Vec<parley_wire::message::TopicLink> {
    parley_markdown::topic_links(topic, linkifiers)
        .into_iter()
        .map(|link| parley_wire::message::TopicLink {
            text: link.text,
            url: link.url,
        })
        .collect()
}

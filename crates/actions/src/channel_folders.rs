//! Channel folders (`/channel_folders`): administrators group channels into named folders for
//! the left sidebar, in an order they choose; a channel's `folder_id` names its folder.

use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::channel_folders::{folder_added, folder_updated, folders_reordered};
use crate::present::channel_folders::channel_folder;
use crate::time::now;
use parley_domain::channel_folder::{check_description, check_name, is_complete_order};
use parley_domain::user::User;
use parley_domain::RequestError;
use parley_storage::channel_folders::{self as stored, ChannelFolder};
use parley_storage::DbConn;
use parley_wire::channel::ChannelFolder as WireFolder;
use parley_wire::Object;

/// Changes to a folder; what is `None` stays.
#[derive(Debug, Clone, Default)]
pub struct FolderChange {
    /// New name.
    pub name: Option<String>,
    /// New Markdown description.
    pub description: Option<String>,
    /// Archive (true) or unarchive (false).
    pub is_archived: Option<bool>,
}

fn must_be_admin(user: &User) -> Result<(), RequestError> {
    match user.role.is_admin() {
        true => Ok(()),
        false => Err(RequestError::bad_request(
            "Must be an organization administrator",
        )),
    }
}

fn invalid_folder() -> RequestError {
    RequestError::bad_request("Invalid channel folder ID")
}

/// Refuses a name another folder has (ignoring case), as the reference does.
fn check_unique(conn: &mut DbConn, name: &str, except: Option<i64>) -> ActionResult<()> {
    let taken = stored::all(conn)?
        .iter()
        .any(|f| Some(f.id) != except && f.name.to_lowercase() == name.to_lowercase());
    match taken {
        true => Err(RequestError::bad_request(format!(
            "Channel folder name already in use: {name}"
        ))
        .into()),
        false => Ok(()),
    }
}

/// A folder a channel may be put in: one that exists and is not archived.
pub(crate) fn check_folder_for_channel(conn: &mut DbConn, id: i64) -> ActionResult<()> {
    match stored::get(conn, id)? {
        Some(folder) if !folder.is_archived => Ok(()),
        _ => Err(RequestError::invalid_param("folder_id", "Invalid channel folder ID").into()),
    }
}

/// `GET /channel_folders`: the folders in their order, archived ones only when asked for.
pub async fn get_channel_folders(
    ctx: &Context,
    include_archived: bool,
) -> ActionResult<Vec<WireFolder>> {
    ctx.run(move |conn| {
        Ok(stored::all(conn)?
            .iter()
            .filter(|f| include_archived || !f.is_archived)
            .map(channel_folder)
            .collect())
    })
    .await
}

/// `POST /channel_folders/create`: an administrator creates a folder at the end of the order;
/// returns its ID.
pub async fn do_create_channel_folder(
    ctx: &Context,
    user: User,
    name: String,
    description: String,
) -> ActionResult<i64> {
    must_be_admin(&user)?;
    let name = check_name(&name)?;
    let description = check_description(&description)?;
    ctx.write(move |conn, events| {
        check_unique(conn, &name, None)?;
        let rendered = parley_markdown::render(&description);
        let folder = stored::insert(conn, &name, &description, &rendered, user.id.0, now())?;
        events.push(folder_added(&folder));
        Ok(folder.id)
    })
    .await
}

/// Applies a change to `folder`; returns the `update` event's data (empty: nothing changed).
fn apply(
    conn: &mut DbConn,
    folder: &mut ChannelFolder,
    change: &FolderChange,
) -> ActionResult<Object> {
    let mut data = Object::new();
    if let Some(name) = &change.name {
        let name = check_name(name)?;
        if name != folder.name {
            check_unique(conn, &name, Some(folder.id))?;
            data.insert("name".into(), name.clone().into());
            folder.name = name;
        }
    }
    if let Some(description) = &change.description {
        let description = check_description(description)?;
        if description != folder.description {
            folder.rendered_description = parley_markdown::render(&description);
            data.insert("description".into(), description.clone().into());
            data.insert(
                "rendered_description".into(),
                folder.rendered_description.clone().into(),
            );
            folder.description = description;
        }
    }
    if let Some(archived) = change.is_archived.filter(|a| *a != folder.is_archived) {
        if archived && stored::channel_count(conn, folder.id)? > 0 {
            return Err(RequestError::bad_request(
                "You need to remove all the channels from this folder to archive it.",
            )
            .into());
        }
        data.insert("is_archived".into(), archived.into());
        folder.is_archived = archived;
    }
    Ok(data)
}

/// `PATCH /channel_folders/{id}`: an administrator renames, describes, archives or unarchives
/// a folder (an archived folder holds no channels).
pub async fn do_update_channel_folder(
    ctx: &Context,
    user: User,
    id: i64,
    change: FolderChange,
) -> ActionResult<()> {
    must_be_admin(&user)?;
    ctx.write(move |conn, events| {
        let mut folder = stored::get(conn, id)?.ok_or_else(invalid_folder)?;
        let data = apply(conn, &mut folder, &change)?;
        if !data.is_empty() {
            stored::update(conn, &folder)?;
            events.push(folder_updated(id, data));
        }
        Ok(())
    })
    .await
}

/// `PATCH /channel_folders`: an administrator puts every folder in a new order.
pub async fn do_reorder_channel_folders(
    ctx: &Context,
    user: User,
    order: Vec<i64>,
) -> ActionResult<()> {
    must_be_admin(&user)?;
    ctx.write(move |conn, events| {
        let ids: Vec<i64> = stored::all(conn)?.iter().map(|f| f.id).collect();
        if !is_complete_order(&order, &ids) {
            return Err(RequestError::invalid_param("order", "Invalid order mapping").into());
        }
        stored::set_order(conn, &order)?;
        events.push(folders_reordered(order));
        Ok(())
    })
    .await
}

/// The snapshot's `channel_folders`: every folder, archived ones too, as the reference sends.
pub(crate) fn snapshot(conn: &mut DbConn) -> ActionResult<Vec<WireFolder>> {
    Ok(stored::all(conn)?.iter().map(channel_folder).collect())
}

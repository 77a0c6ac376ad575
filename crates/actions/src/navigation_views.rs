//! Navigation views (`/navigation_views`): the sidebar views a person pinned or hid, and the
//! custom views they named, each identified by its URL fragment.

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::personal::{
    navigation_view_added, navigation_view_removed, navigation_view_updated,
};
use parley_domain::navigation_view::{check_fragment, check_name, check_name_for};
use parley_domain::user::User;
use parley_domain::RequestError;
use parley_storage::navigation_views::{self, NavigationView};
use parley_storage::{DbConn, StorageError};
use parley_wire::personal::NavigationView as WireView;
use serde_json::Map;

fn not_found() -> RequestError {
    RequestError::bad_request("Navigation view does not exist.").with_status(404)
}

fn exists() -> RequestError {
    RequestError::bad_request("Navigation view already exists.")
}

/// A unique-key clash (a concurrent request took the fragment or name) reads as a duplicate.
fn duplicate_as_request_error(err: StorageError) -> ActionError {
    match err {
        StorageError::UniqueViolation(_) => exists().into(),
        other => other.into(),
    }
}

fn list(conn: &mut DbConn, user: &User) -> ActionResult<Vec<WireView>> {
    Ok(navigation_views::of_user(conn, user.id)?
        .iter()
        .map(crate::present::personal::navigation_view)
        .collect())
}

/// `GET /navigation_views`: the caller's views, in the order they were added.
pub async fn get_navigation_views(ctx: &Context, user: User) -> ActionResult<Vec<WireView>> {
    ctx.run(move |conn| list(conn, &user)).await
}

/// `POST /navigation_views`: adds a view (or the settings of a built-in one). Built-in views
/// take no name; custom views need one; fragments and names are unique per person.
pub async fn do_add_navigation_view(
    ctx: &Context,
    user: User,
    fragment: String,
    is_pinned: bool,
    name: Option<String>,
) -> ActionResult<()> {
    let fragment = check_fragment(&fragment)?;
    let name = name.as_deref().map(check_name).transpose()?;
    check_name_for(&fragment, name.as_deref(), true)?;
    ctx.write(move |conn, events| {
        if navigation_views::by_fragment(conn, user.id, &fragment)?.is_some() {
            return Err(exists().into());
        }
        if let Some(name) = &name {
            if navigation_views::by_name(conn, user.id, name)?.is_some() {
                return Err(exists().into());
            }
        }
        navigation_views::insert(conn, user.id, &fragment, is_pinned, name.as_deref())
            .map_err(duplicate_as_request_error)?;
        let view = NavigationView {
            id: 0,
            user_id: user.id.0,
            fragment,
            is_pinned,
            name,
        };
        events.push(navigation_view_added(user.id, &view));
        Ok(())
    })
    .await
}

/// `PATCH /navigation_views/{fragment}`: changes whether a view is pinned and/or its name.
/// The event carries only what was sent.
pub async fn do_update_navigation_view(
    ctx: &Context,
    user: User,
    fragment: String,
    is_pinned: Option<bool>,
    name: Option<String>,
) -> ActionResult<()> {
    let fragment = check_fragment(&fragment)?;
    let name = name.as_deref().map(check_name).transpose()?;
    check_name_for(&fragment, name.as_deref(), false)?;
    ctx.write(move |conn, events| {
        let mut view =
            navigation_views::by_fragment(conn, user.id, &fragment)?.ok_or_else(not_found)?;
        let mut data = Map::new();
        if let Some(name) = name {
            if navigation_views::by_name(conn, user.id, &name)?.is_some_and(|v| v.id != view.id) {
                return Err(exists().into());
            }
            data.insert("name".into(), name.clone().into());
            view.name = Some(name);
        }
        if let Some(is_pinned) = is_pinned {
            data.insert("is_pinned".into(), is_pinned.into());
            view.is_pinned = is_pinned;
        }
        if data.is_empty() {
            return Ok(());
        }
        navigation_views::update(
            conn,
            user.id,
            &fragment,
            view.is_pinned,
            view.name.as_deref(),
        )
        .map_err(duplicate_as_request_error)?;
        events.push(navigation_view_updated(user.id, &fragment, data));
        Ok(())
    })
    .await
}

/// `DELETE /navigation_views/{fragment}`: removes a view of the caller.
pub async fn do_remove_navigation_view(
    ctx: &Context,
    user: User,
    fragment: String,
) -> ActionResult<()> {
    let fragment = check_fragment(&fragment)?;
    ctx.write(move |conn, events| {
        if !navigation_views::delete(conn, user.id, &fragment)? {
            return Err(not_found().into());
        }
        events.push(navigation_view_removed(user.id, &fragment));
        Ok(())
    })
    .await
}

/// The snapshot's `navigation_views`.
pub(crate) fn snapshot(conn: &mut DbConn, user: &User) -> ActionResult<Vec<WireView>> {
    list(conn, user)
}

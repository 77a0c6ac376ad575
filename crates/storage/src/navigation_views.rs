//! People's navigation views: the sidebar views they pinned or hid, and custom views they
//! named. A view is identified by its URL fragment, unique per person.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::navigation_views;
use diesel::prelude::*;
use parley_domain::UserId;

/// A navigation view as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct NavigationView {
    /// Its row ID (not part of the API: views are addressed by fragment).
    pub id: i64,
    /// Whose.
    pub user_id: i64,
    /// The URL fragment the view denotes.
    pub fragment: String,
    /// Shown in the sidebar (true) or in the menu of more views.
    pub is_pinned: bool,
    /// The name of a custom view; None for built-in views.
    pub name: Option<String>,
}

type Columns = (
    navigation_views::id,
    navigation_views::user_id,
    navigation_views::fragment,
    navigation_views::is_pinned,
    navigation_views::name,
);

const COLUMNS: Columns = (
    navigation_views::id,
    navigation_views::user_id,
    navigation_views::fragment,
    navigation_views::is_pinned,
    navigation_views::name,
);

/// Every view of `user`, in the order they were added.
pub fn of_user(conn: &mut DbConn, user: UserId) -> Result<Vec<NavigationView>, StorageError> {
    Ok(navigation_views::table
        .filter(navigation_views::user_id.eq(user.0))
        .order(navigation_views::id)
        .select(COLUMNS)
        .load(conn)?)
}

/// The view of `user` with this fragment.
pub fn by_fragment(
    conn: &mut DbConn,
    user: UserId,
    fragment: &str,
) -> Result<Option<NavigationView>, StorageError> {
    Ok(navigation_views::table
        .filter(navigation_views::user_id.eq(user.0))
        .filter(navigation_views::fragment.eq(fragment))
        .select(COLUMNS)
        .first(conn)
        .optional()?)
}

/// The view of `user` with this name.
pub fn by_name(
    conn: &mut DbConn,
    user: UserId,
    name: &str,
) -> Result<Option<NavigationView>, StorageError> {
    Ok(navigation_views::table
        .filter(navigation_views::user_id.eq(user.0))
        .filter(navigation_views::name.eq(name))
        .select(COLUMNS)
        .first(conn)
        .optional()?)
}

/// Stores a new view of `user`; a taken fragment or name is a unique violation.
pub fn insert(
    conn: &mut DbConn,
    user: UserId,
    fragment: &str,
    is_pinned: bool,
    name: Option<&str>,
) -> Result<(), StorageError> {
    diesel::insert_into(navigation_views::table)
        .values((
            navigation_views::user_id.eq(user.0),
            navigation_views::fragment.eq(fragment),
            navigation_views::is_pinned.eq(is_pinned),
            navigation_views::name.eq(name),
        ))
        .execute(conn)?;
    Ok(())
}

/// Sets the pinning and the name of a view of `user`.
pub fn update(
    conn: &mut DbConn,
    user: UserId,
    fragment: &str,
    is_pinned: bool,
    name: Option<&str>,
) -> Result<bool, StorageError> {
    let changed = diesel::update(
        navigation_views::table
            .filter(navigation_views::user_id.eq(user.0))
            .filter(navigation_views::fragment.eq(fragment)),
    )
    .set((
        navigation_views::is_pinned.eq(is_pinned),
        navigation_views::name.eq(name),
    ))
    .execute(conn)?;
    Ok(changed > 0)
}

/// Deletes the view of `user` with this fragment; false when there was none.
pub fn delete(conn: &mut DbConn, user: UserId, fragment: &str) -> Result<bool, StorageError> {
    let deleted = diesel::delete(
        navigation_views::table
            .filter(navigation_views::user_id.eq(user.0))
            .filter(navigation_views::fragment.eq(fragment)),
    )
    .execute(conn)?;
    Ok(deleted > 0)
}

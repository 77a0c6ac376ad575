//! Reusable invitation links (`multiuse_invites`).

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::multiuse_invites;
use diesel::prelude::*;
use parley_domain::invite::{format_ids, parse_ids};
use parley_domain::UserId;

/// A stored invitation link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiuseInvite {
    /// Its ID.
    pub id: i64,
    /// The secret part of the link.
    pub key: String,
    /// Who created it.
    pub referred_by: UserId,
    /// The role code of accounts created through it.
    pub invited_as: i64,
    /// Channels new accounts join.
    pub stream_ids: Vec<i64>,
    /// Groups new accounts join.
    pub group_ids: Vec<i64>,
    /// Whether new accounts also join the default channels.
    pub include_realm_default_subscriptions: bool,
    /// The Welcome Bot text; None for the organization default, empty for none.
    pub welcome_message_custom_text: Option<String>,
    /// When created, Unix seconds.
    pub date_created: i64,
    /// When it stops working, Unix seconds; None never.
    pub expiry_date: Option<i64>,
    /// Revoked links never work again.
    pub revoked: bool,
}

/// What a new link holds; the storage assigns its ID.
#[derive(Debug, Clone)]
pub struct NewInvite<'a> {
    /// The secret part of the link.
    pub key: &'a str,
    /// Who creates it.
    pub referred_by: UserId,
    /// Role code.
    pub invited_as: i64,
    /// Channels.
    pub stream_ids: &'a [i64],
    /// Groups.
    pub group_ids: &'a [i64],
    /// Default channels too.
    pub include_realm_default_subscriptions: bool,
    /// Welcome Bot text.
    pub welcome_message_custom_text: Option<&'a str>,
    /// Now.
    pub date_created: i64,
    /// Expiry.
    pub expiry_date: Option<i64>,
}

type Row = (
    i64,
    String,
    i64,
    i64,
    String,
    String,
    bool,
    Option<String>,
    i64,
    Option<i64>,
    bool,
);

type Columns = (
    multiuse_invites::id,
    multiuse_invites::confirmation_key,
    multiuse_invites::referred_by,
    multiuse_invites::invited_as,
    multiuse_invites::stream_ids,
    multiuse_invites::group_ids,
    multiuse_invites::include_realm_default_subscriptions,
    multiuse_invites::welcome_message_custom_text,
    multiuse_invites::date_created,
    multiuse_invites::expiry_date,
    multiuse_invites::revoked,
);

const COLUMNS: Columns = (
    multiuse_invites::id,
    multiuse_invites::confirmation_key,
    multiuse_invites::referred_by,
    multiuse_invites::invited_as,
    multiuse_invites::stream_ids,
    multiuse_invites::group_ids,
    multiuse_invites::include_realm_default_subscriptions,
    multiuse_invites::welcome_message_custom_text,
    multiuse_invites::date_created,
    multiuse_invites::expiry_date,
    multiuse_invites::revoked,
);

fn from_row(row: Row) -> MultiuseInvite {
    let (
        id,
        key,
        referred_by,
        invited_as,
        streams,
        groups,
        defaults,
        text,
        created,
        expiry,
        revoked,
    ) = row;
    MultiuseInvite {
        id,
        key,
        referred_by: UserId(referred_by),
        invited_as,
        stream_ids: parse_ids(&streams),
        group_ids: parse_ids(&groups),
        include_realm_default_subscriptions: defaults,
        welcome_message_custom_text: text,
        date_created: created,
        expiry_date: expiry,
        revoked,
    }
}

/// Stores a new link; returns its ID.
pub fn insert(conn: &mut DbConn, new: &NewInvite<'_>) -> Result<i64, StorageError> {
    Ok(diesel::insert_into(multiuse_invites::table)
        .values((
            multiuse_invites::confirmation_key.eq(new.key),
            multiuse_invites::referred_by.eq(new.referred_by.0),
            multiuse_invites::invited_as.eq(new.invited_as),
            multiuse_invites::stream_ids.eq(format_ids(new.stream_ids)),
            multiuse_invites::group_ids.eq(format_ids(new.group_ids)),
            multiuse_invites::include_realm_default_subscriptions
                .eq(new.include_realm_default_subscriptions),
            multiuse_invites::welcome_message_custom_text.eq(new.welcome_message_custom_text),
            multiuse_invites::date_created.eq(new.date_created),
            multiuse_invites::expiry_date.eq(new.expiry_date),
            multiuse_invites::revoked.eq(false),
        ))
        .returning(multiuse_invites::id)
        .get_result(conn)?)
}

/// The link with this ID.
pub fn by_id(conn: &mut DbConn, id: i64) -> Result<Option<MultiuseInvite>, StorageError> {
    Ok(multiuse_invites::table
        .filter(multiuse_invites::id.eq(id))
        .select(COLUMNS)
        .first::<Row>(conn)
        .optional()?
        .map(from_row))
}

/// The link with this key.
pub fn by_key(conn: &mut DbConn, key: &str) -> Result<Option<MultiuseInvite>, StorageError> {
    Ok(multiuse_invites::table
        .filter(multiuse_invites::confirmation_key.eq(key))
        .select(COLUMNS)
        .first::<Row>(conn)
        .optional()?
        .map(from_row))
}

/// Links neither revoked nor expired at `now`, of `referrer` only or of everyone (None), oldest
/// first.
pub fn usable(
    conn: &mut DbConn,
    referrer: Option<UserId>,
    now: i64,
) -> Result<Vec<MultiuseInvite>, StorageError> {
    let mut query = multiuse_invites::table
        .filter(multiuse_invites::revoked.eq(false))
        .filter(
            multiuse_invites::expiry_date
                .is_null()
                .or(multiuse_invites::expiry_date.gt(now)),
        )
        .select(COLUMNS)
        .order(multiuse_invites::id)
        .into_boxed();
    if let Some(referrer) = referrer {
        query = query.filter(multiuse_invites::referred_by.eq(referrer.0));
    }
    Ok(query.load::<Row>(conn)?.into_iter().map(from_row).collect())
}

/// Marks a link revoked; false when there is no such link.
pub fn revoke(conn: &mut DbConn, id: i64) -> Result<bool, StorageError> {
    let changed = diesel::update(multiuse_invites::table.filter(multiuse_invites::id.eq(id)))
        .set(multiuse_invites::revoked.eq(true))
        .execute(conn)?;
    Ok(changed > 0)
}

/// Revokes every link `referrer` created; returns how many were not revoked yet.
pub fn revoke_by(conn: &mut DbConn, referrer: UserId) -> Result<usize, StorageError> {
    Ok(diesel::update(
        multiuse_invites::table
            .filter(multiuse_invites::referred_by.eq(referrer.0))
            .filter(multiuse_invites::revoked.eq(false)),
    )
    .set(multiuse_invites::revoked.eq(true))
    .execute(conn)?)
}

/// Moves a link's expiry (None: never); for administration and tests that need an expired link.
pub fn set_expiry_date(
    conn: &mut DbConn,
    id: i64,
    expiry: Option<i64>,
) -> Result<bool, StorageError> {
    let changed = diesel::update(multiuse_invites::table.filter(multiuse_invites::id.eq(id)))
        .set(multiuse_invites::expiry_date.eq(expiry))
        .execute(conn)?;
    Ok(changed > 0)
}

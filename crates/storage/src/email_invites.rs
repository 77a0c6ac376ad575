//! Email invitations (`email_invites`): one per invited address, used once through the mailed
//! link.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::invites::MultiuseInvite;
use crate::schema::email_invites;
use diesel::prelude::*;
use parley_domain::invite::{format_ids, parse_ids};
use parley_domain::UserId;

/// `status` of an invitation that may still be used.
pub const PENDING: i64 = 0;
/// `status` of an invitation someone signed up with.
pub const USED: i64 = 1;
/// `status` of a revoked invitation (by its referrer or an administrator, or because the address
/// got an account another way).
pub const REVOKED: i64 = 2;

/// A stored email invitation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailInvite {
    /// What it shares with a reusable link: its ID, key, referrer, role, channels, groups,
    /// welcome text, dates; `revoked` is true once it is no longer pending.
    pub link: MultiuseInvite,
    /// The invited address (normalized).
    pub email: String,
    /// Whether the referrer hears from the Notification Bot when the invitee joins.
    pub notify_referrer_on_join: bool,
    /// [`PENDING`], [`USED`] or [`REVOKED`].
    pub status: i64,
}

/// What a new invitation holds; the storage assigns its ID.
#[derive(Debug, Clone)]
pub struct NewEmailInvite<'a> {
    /// The secret part of the link.
    pub key: &'a str,
    /// The invited address.
    pub email: &'a str,
    /// Who invites.
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
    /// Tell the referrer when the invitee joins.
    pub notify_referrer_on_join: bool,
    /// Now.
    pub date_created: i64,
    /// Expiry.
    pub expiry_date: Option<i64>,
}

type Row = (
    (i64, String, String, i64, i64, String, String),
    (bool, Option<String>, bool, i64, Option<i64>, i64),
);

type Columns = (
    (
        email_invites::id,
        email_invites::confirmation_key,
        email_invites::email,
        email_invites::referred_by,
        email_invites::invited_as,
        email_invites::stream_ids,
        email_invites::group_ids,
    ),
    (
        email_invites::include_realm_default_subscriptions,
        email_invites::welcome_message_custom_text,
        email_invites::notify_referrer_on_join,
        email_invites::date_created,
        email_invites::expiry_date,
        email_invites::status,
    ),
);

const COLUMNS: Columns = (
    (
        email_invites::id,
        email_invites::confirmation_key,
        email_invites::email,
        email_invites::referred_by,
        email_invites::invited_as,
        email_invites::stream_ids,
        email_invites::group_ids,
    ),
    (
        email_invites::include_realm_default_subscriptions,
        email_invites::welcome_message_custom_text,
        email_invites::notify_referrer_on_join,
        email_invites::date_created,
        email_invites::expiry_date,
        email_invites::status,
    ),
);

fn from_row(row: Row) -> EmailInvite {
    let ((id, key, email, referred_by, invited_as, streams, groups), rest) = row;
    let (defaults, text, notify, created, expiry, status) = rest;
    EmailInvite {
        link: MultiuseInvite {
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
            revoked: status != PENDING,
        },
        email,
        notify_referrer_on_join: notify,
        status,
    }
}

/// Stores a new invitation; returns its ID.
pub fn insert(conn: &mut DbConn, new: &NewEmailInvite<'_>) -> Result<i64, StorageError> {
    Ok(diesel::insert_into(email_invites::table)
        .values((
            email_invites::confirmation_key.eq(new.key),
            email_invites::email.eq(new.email),
            email_invites::referred_by.eq(new.referred_by.0),
            email_invites::invited_as.eq(new.invited_as),
            email_invites::stream_ids.eq(format_ids(new.stream_ids)),
            email_invites::group_ids.eq(format_ids(new.group_ids)),
            email_invites::include_realm_default_subscriptions
                .eq(new.include_realm_default_subscriptions),
            email_invites::welcome_message_custom_text.eq(new.welcome_message_custom_text),
            email_invites::notify_referrer_on_join.eq(new.notify_referrer_on_join),
            email_invites::date_created.eq(new.date_created),
            email_invites::expiry_date.eq(new.expiry_date),
            email_invites::status.eq(PENDING),
        ))
        .returning(email_invites::id)
        .get_result(conn)?)
}

/// The invitation with this ID.
pub fn by_id(conn: &mut DbConn, id: i64) -> Result<Option<EmailInvite>, StorageError> {
    Ok(email_invites::table
        .filter(email_invites::id.eq(id))
        .select(COLUMNS)
        .first::<Row>(conn)
        .optional()?
        .map(from_row))
}

/// The invitation with this key.
pub fn by_key(conn: &mut DbConn, key: &str) -> Result<Option<EmailInvite>, StorageError> {
    Ok(email_invites::table
        .filter(email_invites::confirmation_key.eq(key))
        .select(COLUMNS)
        .first::<Row>(conn)
        .optional()?
        .map(from_row))
}

/// Pending invitations not expired at `now`, of `referrer` only or of everyone (None), oldest
/// first.
pub fn usable(
    conn: &mut DbConn,
    referrer: Option<UserId>,
    now: i64,
) -> Result<Vec<EmailInvite>, StorageError> {
    let mut query = email_invites::table
        .filter(email_invites::status.eq(PENDING))
        .filter(
            email_invites::expiry_date
                .is_null()
                .or(email_invites::expiry_date.gt(now)),
        )
        .select(COLUMNS)
        .order(email_invites::id)
        .into_boxed();
    if let Some(referrer) = referrer {
        query = query.filter(email_invites::referred_by.eq(referrer.0));
    }
    Ok(query.load::<Row>(conn)?.into_iter().map(from_row).collect())
}

/// Sets an invitation's status; false when there is no such invitation.
pub fn set_status(conn: &mut DbConn, id: i64, status: i64) -> Result<bool, StorageError> {
    let changed = diesel::update(email_invites::table.filter(email_invites::id.eq(id)))
        .set(email_invites::status.eq(status))
        .execute(conn)?;
    Ok(changed > 0)
}

/// Revokes every pending invitation of `email` (an account now has that address); returns the
/// referrers of the revoked ones.
pub fn revoke_pending_for(conn: &mut DbConn, email: &str) -> Result<Vec<UserId>, StorageError> {
    let pending = email_invites::table
        .filter(email_invites::email.eq(email))
        .filter(email_invites::status.eq(PENDING));
    let referrers: Vec<i64> = pending.select(email_invites::referred_by).load(conn)?;
    if !referrers.is_empty() {
        diesel::update(pending)
            .set(email_invites::status.eq(REVOKED))
            .execute(conn)?;
    }
    Ok(referrers.into_iter().map(UserId).collect())
}

/// Revokes every pending invitation `referrer` sent; returns how many.
pub fn revoke_pending_by(conn: &mut DbConn, referrer: UserId) -> Result<usize, StorageError> {
    Ok(diesel::update(
        email_invites::table
            .filter(email_invites::referred_by.eq(referrer.0))
            .filter(email_invites::status.eq(PENDING)),
    )
    .set(email_invites::status.eq(REVOKED))
    .execute(conn)?)
}

/// Moves an invitation's expiry (None: never); for tests that need an expired invitation.
pub fn set_expiry_date(
    conn: &mut DbConn,
    id: i64,
    expiry: Option<i64>,
) -> Result<bool, StorageError> {
    let changed = diesel::update(email_invites::table.filter(email_invites::id.eq(id)))
        .set(email_invites::expiry_date.eq(expiry))
        .execute(conn)?;
    Ok(changed > 0)
}

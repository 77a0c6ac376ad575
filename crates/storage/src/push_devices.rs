//! End-to-end encrypted push device registrations, one per (user, `push_account_id`).

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::push_devices;
use diesel::prelude::*;
use parley_domain::ids::UserId;
use parley_domain::push::{PushDevice, TokenKind};

#[derive(Queryable, Selectable)]
#[diesel(table_name = push_devices)]
struct PushDeviceRow {
    user_id: i64,
    push_account_id: i64,
    token_kind: String,
    push_public_key: String,
    bouncer_public_key: String,
    encrypted_push_registration: String,
}

impl PushDeviceRow {
    fn into_device(self) -> Option<PushDevice> {
        Some(PushDevice {
            user_id: UserId(self.user_id),
            push_account_id: self.push_account_id,
            token_kind: TokenKind::parse(&self.token_kind).ok()?,
            push_public_key: self.push_public_key,
            bouncer_public_key: self.bouncer_public_key,
            encrypted_push_registration: self.encrypted_push_registration,
        })
    }
}

/// Stores a registration, replacing the one the same user made with the same
/// `push_account_id` (a device re-registering after a key rotation). Run it in a transaction.
pub fn replace(conn: &mut DbConn, device: &PushDevice, now: i64) -> Result<(), StorageError> {
    diesel::delete(
        push_devices::table
            .filter(push_devices::user_id.eq(device.user_id.0))
            .filter(push_devices::push_account_id.eq(device.push_account_id)),
    )
    .execute(conn)?;
    diesel::insert_into(push_devices::table)
        .values((
            push_devices::user_id.eq(device.user_id.0),
            push_devices::push_account_id.eq(device.push_account_id),
            push_devices::token_kind.eq(device.token_kind.name()),
            push_devices::push_public_key.eq(&device.push_public_key),
            push_devices::bouncer_public_key.eq(&device.bouncer_public_key),
            push_devices::encrypted_push_registration.eq(&device.encrypted_push_registration),
            push_devices::created.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// A user's registrations, oldest first.
pub fn of_user(conn: &mut DbConn, user: UserId) -> Result<Vec<PushDevice>, StorageError> {
    Ok(push_devices::table
        .filter(push_devices::user_id.eq(user.0))
        .order(push_devices::id)
        .select(PushDeviceRow::as_select())
        .load(conn)?
        .into_iter()
        .filter_map(PushDeviceRow::into_device)
        .collect())
}

/// A push token registered through the legacy endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushToken {
    /// Push network.
    pub kind: TokenKind,
    /// The token as the device gave it.
    pub token: String,
    /// The iOS app's bundle ID, for APNs tokens.
    pub ios_app_id: Option<String>,
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = crate::schema::push_device_tokens)]
struct PushTokenRow {
    kind: String,
    token: String,
    ios_app_id: Option<String>,
}

impl PushTokenRow {
    fn into_token(self) -> Option<PushToken> {
        Some(PushToken {
            kind: TokenKind::parse(&self.kind).ok()?,
            token: self.token,
            ios_app_id: self.ios_app_id,
        })
    }
}

/// Stores `user`'s token, or refreshes its `last_updated` (and app ID) when it is stored already.
pub fn add_token(
    conn: &mut DbConn,
    user: UserId,
    token: &PushToken,
    now: i64,
) -> Result<(), StorageError> {
    use crate::schema::push_device_tokens as t;
    let updated = diesel::update(
        t::table
            .filter(t::user_id.eq(user.0))
            .filter(t::kind.eq(token.kind.name()))
            .filter(t::token.eq(&token.token)),
    )
    .set((t::last_updated.eq(now), t::ios_app_id.eq(&token.ios_app_id)))
    .execute(conn)?;
    if updated == 0 {
        diesel::insert_into(t::table)
            .values((
                t::user_id.eq(user.0),
                t::kind.eq(token.kind.name()),
                t::token.eq(&token.token),
                t::ios_app_id.eq(&token.ios_app_id),
                t::last_updated.eq(now),
            ))
            .execute(conn)?;
    }
    Ok(())
}

/// Removes `user`'s token of this kind; whether there was one.
pub fn remove_token(
    conn: &mut DbConn,
    user: UserId,
    kind: TokenKind,
    token: &str,
) -> Result<bool, StorageError> {
    use crate::schema::push_device_tokens as t;
    let removed = diesel::delete(
        t::table
            .filter(t::user_id.eq(user.0))
            .filter(t::kind.eq(kind.name()))
            .filter(t::token.eq(token)),
    )
    .execute(conn)?;
    Ok(removed > 0)
}

/// A user's legacy tokens, oldest first; only those equal to `token` when it is given.
pub fn tokens_of(
    conn: &mut DbConn,
    user: UserId,
    token: Option<&str>,
) -> Result<Vec<PushToken>, StorageError> {
    use crate::schema::push_device_tokens as t;
    let mut query = t::table
        .filter(t::user_id.eq(user.0))
        .order(t::id)
        .select(PushTokenRow::as_select())
        .into_boxed();
    if let Some(token) = token {
        query = query.filter(t::token.eq(token.to_owned()));
    }
    Ok(query
        .load(conn)?
        .into_iter()
        .filter_map(PushTokenRow::into_token)
        .collect())
}

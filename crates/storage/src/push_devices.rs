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

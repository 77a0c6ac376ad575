//! Users and their credentials. Credentials are read only by the functions that check them, so
//! that an API key or password hash never travels with an ordinary user record.

use crate::conn::DbConn;
use crate::error::StorageError;
use crate::schema::users;
use diesel::prelude::*;
use parley_domain::user::{AvatarSource, BotType, EmailAddressVisibility, User};
use parley_domain::{Role, UserId};

#[derive(Queryable, Selectable)]
#[diesel(table_name = users)]
struct UserRow {
    id: i64,
    delivery_email: String,
    full_name: String,
    role: i64,
    is_active: bool,
    bot_type: Option<i64>,
    bot_owner_id: Option<i64>,
    timezone: String,
    avatar_source: String,
    avatar_version: i64,
    date_joined: i64,
    email_address_visibility: i64,
    can_create_users: bool,
}

impl From<UserRow> for User {
    fn from(row: UserRow) -> User {
        User {
            id: UserId(row.id),
            delivery_email: row.delivery_email,
            full_name: row.full_name,
            role: Role::from_code(row.role).unwrap_or(Role::Guest),
            is_active: row.is_active,
            bot_type: row.bot_type.and_then(BotType::from_code),
            bot_owner_id: row.bot_owner_id.map(UserId),
            timezone: row.timezone,
            avatar_source: AvatarSource::from_code(&row.avatar_source),
            avatar_version: row.avatar_version,
            date_joined: row.date_joined,
            email_address_visibility: EmailAddressVisibility::from_code(
                row.email_address_visibility,
            )
            .unwrap_or(EmailAddressVisibility::Everyone),
            can_create_users: row.can_create_users,
        }
    }
}

/// What a new user row holds.
#[derive(Debug, Clone)]
pub struct NewUser {
    /// Normalised delivery address.
    pub delivery_email: String,
    /// Display name.
    pub full_name: String,
    /// Argon2 PHC string, or none for accounts that cannot log in with a password.
    pub password_hash: Option<String>,
    /// The API key.
    pub api_key: String,
    /// Role.
    pub role: Role,
    /// Bot type, for bots.
    pub bot_type: Option<BotType>,
    /// Bot owner, for bots.
    pub bot_owner_id: Option<UserId>,
    /// IANA time zone or empty.
    pub timezone: String,
    /// Creation time, Unix seconds.
    pub date_joined: i64,
    /// Who may see the delivery address.
    pub email_address_visibility: EmailAddressVisibility,
    /// The `can_create_users` permission.
    pub can_create_users: bool,
}

/// A user's secrets, for the code that checks them.
#[derive(Debug, Clone)]
pub struct Credentials {
    /// The API key.
    pub api_key: String,
    /// Argon2 PHC string, if the user has a password.
    pub password_hash: Option<String>,
}

/// Inserts a user; a taken address is [`StorageError::UniqueViolation`].
pub fn insert(conn: &mut DbConn, new: &NewUser) -> Result<UserId, StorageError> {
    let id = diesel::insert_into(users::table)
        .values((
            users::delivery_email.eq(&new.delivery_email),
            users::full_name.eq(&new.full_name),
            users::password_hash.eq(&new.password_hash),
            users::api_key.eq(&new.api_key),
            users::role.eq(new.role.code()),
            users::is_active.eq(true),
            users::bot_type.eq(new.bot_type.map(|t| t as i64)),
            users::bot_owner_id.eq(new.bot_owner_id.map(|id| id.0)),
            users::timezone.eq(&new.timezone),
            users::avatar_source.eq(AvatarSource::Gravatar.code()),
            users::avatar_version.eq(1),
            users::date_joined.eq(new.date_joined),
            users::email_address_visibility.eq(new.email_address_visibility as i64),
            users::can_create_users.eq(new.can_create_users),
        ))
        .returning(users::id)
        .get_result::<i64>(conn)?;
    Ok(UserId(id))
}

/// The user with this ID.
pub fn by_id(conn: &mut DbConn, id: UserId) -> Result<Option<User>, StorageError> {
    Ok(users::table
        .find(id.0)
        .select(UserRow::as_select())
        .get_result(conn)
        .optional()?
        .map(User::from))
}

/// The user with this (normalised) delivery address.
pub fn by_delivery_email(conn: &mut DbConn, email: &str) -> Result<Option<User>, StorageError> {
    Ok(users::table
        .filter(users::delivery_email.eq(email))
        .select(UserRow::as_select())
        .get_result(conn)
        .optional()?
        .map(User::from))
}

/// The user with this delivery address and their API key, in one statement: every API request
/// authenticates with both.
pub fn by_delivery_email_with_api_key(
    conn: &mut DbConn,
    email: &str,
) -> Result<Option<(User, String)>, StorageError> {
    Ok(users::table
        .filter(users::delivery_email.eq(email))
        .select((UserRow::as_select(), users::api_key))
        .get_result::<(UserRow, String)>(conn)
        .optional()?
        .map(|(row, api_key)| (User::from(row), api_key)))
}

/// Every user of the organization, active or not, in ID order (system bots are not theirs).
pub fn all(conn: &mut DbConn) -> Result<Vec<User>, StorageError> {
    by_kind(conn, false)
}

/// The organization's users (`system` false) or the system bots (`system` true), in ID order.
fn by_kind(conn: &mut DbConn, system: bool) -> Result<Vec<User>, StorageError> {
    Ok(users::table
        .filter(users::is_system_bot.eq(system))
        .order(users::id)
        .select(UserRow::as_select())
        .load(conn)?
        .into_iter()
        .map(User::from)
        .collect())
}

/// The users with these IDs that exist, in ID order.
pub fn by_ids(conn: &mut DbConn, ids: &[UserId]) -> Result<Vec<User>, StorageError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let raw: Vec<i64> = ids.iter().map(|id| id.0).collect();
    Ok(users::table
        .filter(users::id.eq_any(raw))
        .order(users::id)
        .select(UserRow::as_select())
        .load(conn)?
        .into_iter()
        .map(User::from)
        .collect())
}

/// A user's secrets.
pub fn credentials(conn: &mut DbConn, id: UserId) -> Result<Option<Credentials>, StorageError> {
    Ok(users::table
        .find(id.0)
        .select((users::api_key, users::password_hash))
        .get_result::<(String, Option<String>)>(conn)
        .optional()?
        .map(|(api_key, password_hash)| Credentials {
            api_key,
            password_hash,
        }))
}

/// Replaces a user's API key (key rotation).
pub fn set_api_key(conn: &mut DbConn, id: UserId, api_key: &str) -> Result<(), StorageError> {
    diesel::update(users::table.find(id.0))
        .set(users::api_key.eq(api_key))
        .execute(conn)?;
    Ok(())
}

/// Activates or deactivates a user.
pub fn set_active(conn: &mut DbConn, id: UserId, active: bool) -> Result<(), StorageError> {
    diesel::update(users::table.find(id.0))
        .set(users::is_active.eq(active))
        .execute(conn)?;
    crate::spans::sync_user(conn, id)?;
    Ok(())
}

/// Changes who may see a user's delivery address.
pub fn set_email_address_visibility(
    conn: &mut DbConn,
    id: UserId,
    visibility: EmailAddressVisibility,
) -> Result<(), StorageError> {
    diesel::update(users::table.find(id.0))
        .set(users::email_address_visibility.eq(visibility as i64))
        .execute(conn)?;
    Ok(())
}

/// How many users exist.
pub fn count(conn: &mut DbConn) -> Result<i64, StorageError> {
    Ok(users::table.count().get_result(conn)?)
}

/// Active users with exactly this display name (names are not unique).
pub fn active_by_full_name(conn: &mut DbConn, full_name: &str) -> Result<Vec<User>, StorageError> {
    Ok(users::table
        .filter(users::full_name.eq(full_name))
        .filter(users::is_active.eq(true))
        .order(users::id)
        .select(UserRow::as_select())
        .load(conn)?
        .into_iter()
        .map(User::from)
        .collect())
}

/// The system bot with this address, created (as a generic bot with an unusable key) when
/// missing.
pub fn system_bot(
    conn: &mut DbConn,
    email: &str,
    full_name: &str,
    api_key: &str,
    now: i64,
) -> Result<UserId, StorageError> {
    if let Some(id) = users::table
        .filter(users::delivery_email.eq(email))
        .filter(users::is_system_bot.eq(true))
        .select(users::id)
        .get_result::<i64>(conn)
        .optional()?
    {
        return Ok(UserId(id));
    }
    let id = diesel::insert_into(users::table)
        .values((
            users::delivery_email.eq(email),
            users::full_name.eq(full_name),
            users::api_key.eq(api_key),
            users::role.eq(Role::Member.code()),
            users::is_active.eq(true),
            users::bot_type.eq(Some(BotType::Generic as i64)),
            users::date_joined.eq(now),
            users::is_system_bot.eq(true),
        ))
        .returning(users::id)
        .get_result::<i64>(conn)?;
    Ok(UserId(id))
}

/// The system bots (the Notification Bot), which belong to no organization's user list.
pub fn system_bots(conn: &mut DbConn) -> Result<Vec<User>, StorageError> {
    by_kind(conn, true)
}

/// Changes a user's display name.
pub fn set_full_name(conn: &mut DbConn, id: UserId, full_name: &str) -> Result<(), StorageError> {
    diesel::update(users::table.find(id.0))
        .set(users::full_name.eq(full_name))
        .execute(conn)?;
    Ok(())
}

/// Changes a user's time zone.
pub fn set_timezone(conn: &mut DbConn, id: UserId, timezone: &str) -> Result<(), StorageError> {
    diesel::update(users::table.find(id.0))
        .set(users::timezone.eq(timezone))
        .execute(conn)?;
    Ok(())
}

/// Changes a user's password (an Argon2 PHC string).
pub fn set_password_hash(conn: &mut DbConn, id: UserId, hash: &str) -> Result<(), StorageError> {
    diesel::update(users::table.find(id.0))
        .set(users::password_hash.eq(Some(hash)))
        .execute(conn)?;
    Ok(())
}

/// Changes a user's role.
pub fn set_role(conn: &mut DbConn, id: UserId, role: Role) -> Result<(), StorageError> {
    diesel::update(users::table.find(id.0))
        .set(users::role.eq(role.code()))
        .execute(conn)?;
    Ok(())
}

/// Changes a bot's owner.
pub fn set_bot_owner(conn: &mut DbConn, id: UserId, owner: UserId) -> Result<(), StorageError> {
    diesel::update(users::table.find(id.0))
        .set(users::bot_owner_id.eq(Some(owner.0)))
        .execute(conn)?;
    Ok(())
}

/// The bots (active or not) this user owns, in ID order.
pub fn bots_owned_by(conn: &mut DbConn, owner: UserId) -> Result<Vec<User>, StorageError> {
    Ok(users::table
        .filter(users::bot_owner_id.eq(owner.0))
        .filter(users::is_system_bot.eq(false))
        .order(users::id)
        .select(UserRow::as_select())
        .load(conn)?
        .into_iter()
        .map(User::from)
        .collect())
}

/// The users who share an active channel subscription or a direct-message conversation with
/// `id` (`id` itself included when it has either): who a guest limited by
/// `can_access_all_users_group` may know about.
pub fn sharing_with(
    conn: &mut DbConn,
    id: UserId,
) -> Result<std::collections::HashSet<UserId>, StorageError> {
    use crate::schema::{messages, subscriptions as subs, user_messages};
    let channels = subs::table
        .filter(subs::user_id.eq(id.0))
        .filter(subs::active.eq(true))
        .select(subs::channel_id)
        .load::<i64>(conn)?;
    let mut out: std::collections::HashSet<UserId> = subs::table
        .filter(subs::channel_id.eq_any(channels))
        .filter(subs::active.eq(true))
        .select(subs::user_id)
        .distinct()
        .load::<i64>(conn)?
        .into_iter()
        .map(UserId)
        .collect();
    let dm_messages = messages::table
        .filter(messages::dm_key.is_not_null())
        .filter(
            messages::id.eq_any(
                user_messages::table
                    .filter(user_messages::user_id.eq(id.0))
                    .select(user_messages::message_id),
            ),
        )
        .select(messages::id)
        .load::<i64>(conn)?;
    for chunk in dm_messages.chunks(500) {
        out.extend(
            user_messages::table
                .filter(user_messages::message_id.eq_any(chunk))
                .select(user_messages::user_id)
                .distinct()
                .load::<i64>(conn)?
                .into_iter()
                .map(UserId),
        );
    }
    Ok(out)
}

/// The user groups (system groups excluded) that list this user as a direct member, in ID
/// order: kept while the user is deactivated, announced again on reactivation.
pub fn direct_group_ids(conn: &mut DbConn, id: UserId) -> Result<Vec<i64>, StorageError> {
    use crate::schema::user_group_members as members;
    Ok(members::table
        .filter(members::user_id.eq(id.0))
        .order(members::group_id)
        .select(members::group_id)
        .load::<i64>(conn)?)
}

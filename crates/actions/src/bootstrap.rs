//! First start: create the organization and its owner when the database is empty.

use crate::context::Context;
use crate::error::ActionResult;
use crate::secrets;
use crate::time::now;
use parley_domain::email::normalize_email;
use parley_domain::realm::Realm;
use parley_domain::user::{EmailAddressVisibility, User};
use parley_domain::Role;
use parley_storage::users::NewUser;
use parley_storage::{groups, realms, users, DbConn};

/// What the organization is created with.
#[derive(Debug, Clone)]
pub struct RealmInit {
    /// Display name of the organization.
    pub name: String,
    /// Address of the owner account created with it.
    pub owner_email: String,
}

/// The owner's credentials, known only at the moment the organization is created.
#[derive(Debug, Clone)]
pub struct OwnerCredentials {
    /// The owner account.
    pub user: User,
    /// Generated password, for logging in with `POST /fetch_api_key` or the apps.
    pub password: String,
    /// Generated API key.
    pub api_key: String,
}

/// The outcome of [`do_ensure_realm`].
#[derive(Debug, Clone)]
pub struct Bootstrap {
    /// The organization.
    pub realm: Realm,
    /// Set only when this call created the organization and its owner.
    pub created_owner: Option<OwnerCredentials>,
}

/// Creates the organization and its owner (role owner, allowed to create users, with a generated
/// password and API key) if the database has none; otherwise returns the existing organization
/// untouched. Runs in one transaction, so a crash never leaves an organization without an owner.
pub async fn do_ensure_realm(ctx: &Context, init: RealmInit) -> ActionResult<Bootstrap> {
    let owner_email = normalize_email(&init.owner_email, "owner_email")?;
    let password = secrets::generate_password();
    let password_hash = secrets::hash_password(&password).map_err(crate::ActionError::Internal)?;
    let api_key = secrets::generate_api_key();
    ctx.transaction(move |conn| {
        let now = now();
        if groups::graph(conn)?.system.is_empty() {
            crate::realm_cache::changing();
            groups::create_system_groups(conn, now)?;
        }
        // The system bots exist from the start: clients list them as cross-realm bots.
        crate::notices::notification_bot(conn)?;
        if let Some(realm) = realms::get(conn)? {
            return Ok(Bootstrap {
                realm,
                created_owner: None,
            });
        }
        crate::realm_cache::changing();
        let realm = realms::create(conn, &init.name, "", now)?;
        let owner = NewUser {
            delivery_email: owner_email,
            full_name: "Owner".to_owned(),
            password_hash: Some(password_hash),
            api_key: api_key.clone(),
            role: Role::Owner,
            bot_type: None,
            bot_owner_id: None,
            timezone: String::new(),
            date_joined: now,
            email_address_visibility: EmailAddressVisibility::Everyone,
            can_create_users: true,
        };
        let id = users::insert(conn, &owner)?;
        let user = users::by_id(conn, id)?
            .ok_or_else(|| crate::ActionError::Internal("owner vanished".into()))?;
        create_general_channel(conn, &user)?;
        Ok(Bootstrap {
            realm,
            created_owner: Some(OwnerCredentials {
                user,
                password,
                api_key,
            }),
        })
    })
    .await
}

/// The channel every organization starts with: default for new users, the owner subscribed.
fn create_general_channel(conn: &mut DbConn, owner: &User) -> ActionResult<()> {
    let policy = crate::policy::load(conn)?;
    let new = crate::channels::NewChannel {
        name: "general".to_owned(),
        description: "Everyone is added to this channel by default. Welcome! :octopus:".to_owned(),
        is_default_stream: true,
        ..Default::default()
    };
    let mut channel = crate::channels::build_channel(conn, &policy, Some(owner), &new)?;
    channel.id = crate::channels::insert_channel(conn, &channel)?;
    crate::new_subscriptions::subscribe_in_transaction(
        conn,
        channel.id,
        std::slice::from_ref(owner),
    )?;
    crate::realm_cache::changing();
    realms::set_permission(
        conn,
        crate::notices::ANNOUNCEMENTS_CHANNEL,
        &channel.id.0.to_string(),
    )?;
    Ok(())
}

/// Records the URL the server serves at, so that commands run beside it print credentials for
/// the running server (see [`recorded_server_url`]).
pub async fn do_record_server_url(ctx: &Context) -> ActionResult<()> {
    let url = ctx.realm.url.clone();
    ctx.transaction(move |conn| {
        crate::realm_cache::changing();
        Ok(realms::set_server_url(conn, &url)?)
    })
    .await
}

/// The URL the server last started at, if any server has started on this database.
pub async fn recorded_server_url(ctx: &Context) -> ActionResult<Option<String>> {
    ctx.run(|conn| Ok(realms::server_url(conn)?)).await
}

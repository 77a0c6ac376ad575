//! `parley create-user`: create an account from the command line and print its zuliprc.

use crate::config::Config;
use crate::{startup, zuliprc};
use anyhow::{anyhow, Context as _};
use parley_actions::bootstrap::recorded_server_url;
use parley_actions::secrets::generate_password;
use parley_actions::users::{do_create_user, CreateUser};
use parley_domain::Role;

/// Creates the user (and the organization first, on an empty database); prints the zuliprc.
pub async fn run(
    config: Config,
    email: String,
    full_name: String,
    role: String,
    password: Option<String>,
) -> anyhow::Result<()> {
    let role = Role::from_name(&role).ok_or_else(|| {
        anyhow!("--role '{role}' is not one of owner, admin, moderator, member, guest")
    })?;
    let (ctx, _) = startup::start(&config).await?;
    let generated = password.is_none();
    let password = password.unwrap_or_else(generate_password);
    let created = do_create_user(
        &ctx,
        CreateUser {
            email,
            full_name,
            password: Some(password.clone()),
            role,
        },
    )
    .await
    .map_err(|e| anyhow!("{e}"))
    .context("cannot create the user")?;
    let email = created.user.api_email(&ctx.realm.host);
    eprintln!(
        "Created user {} ({}) with role {}.",
        created.user.id,
        created.user.delivery_email,
        role.code()
    );
    if generated {
        eprintln!("Generated password: {password}");
    }
    // The zuliprc points at the running server: the URL it recorded at start, unless this
    // command was told another one.
    let recorded = match config.external_url_given {
        true => None,
        false => recorded_server_url(&ctx)
            .await
            .map_err(|e| anyhow!("{e}"))
            .context("cannot read the server's URL")?,
    };
    let site = recorded.unwrap_or_else(|| ctx.realm.url.clone());
    crate::output::emit(&zuliprc::render(&email, &created.api_key, &site))
        .context("cannot write the zuliprc to standard output")?;
    Ok(())
}

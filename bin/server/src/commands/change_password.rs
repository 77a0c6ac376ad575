//! `parley change-password`: an operator sets a user's password.

use crate::config::Config;
use crate::startup;
use anyhow::{anyhow, bail, Context as _};
use parley_actions::operator::do_set_password;
use std::io::BufRead;

/// Sets the password of the user with this address; it comes from `password` or else from the
/// first line of standard input.
pub async fn run(config: Config, email: String, password: Option<String>) -> anyhow::Result<()> {
    let password = match password {
        Some(password) => password,
        None => {
            let mut line = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut line)
                .context("cannot read the new password from standard input")?;
            line.trim_end_matches(['\r', '\n']).to_owned()
        }
    };
    if password.is_empty() {
        bail!("no password given: pass --password or write it to standard input");
    }
    let ctx = startup::connect(
        config.database_url.clone(),
        config.realm.clone(),
        parley_storage::PoolOptions {
            sqlite_synchronous: config.sqlite_synchronous,
            ..parley_storage::PoolOptions::default()
        },
    )
    .await?;
    let user = do_set_password(&ctx, &email, &password)
        .await
        .map_err(|e| anyhow!("{e}"))
        .context("cannot change the password")?;
    eprintln!(
        "Changed the password of user {} ({}); the API key is unchanged.",
        user.id, user.delivery_email
    );
    Ok(())
}

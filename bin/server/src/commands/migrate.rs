//! `parley migrate`: apply pending migrations and exit.

use crate::config::Config;
use anyhow::Context as _;
use parley_storage::{conn, migrate};

/// Applies pending migrations to the configured database and reports how many ran.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let url = config.database_url.clone();
    let described = format!("{} database {}", url.backend_name(), url.redacted());
    let applied = tokio::task::spawn_blocking(move || {
        let mut conn = conn::establish(&url)?;
        migrate::run_pending(&mut conn)
    })
    .await
    .context("migration task failed")?
    .with_context(|| format!("cannot migrate the {described}"))?;
    crate::say!("{described}: {applied} migration(s) applied; schema is up to date.");
    Ok(())
}

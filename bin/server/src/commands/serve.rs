//! `parley serve`: run the server until SIGINT or SIGTERM, then finish in-flight requests.

use crate::config::Config;
use crate::startup;
use actix_web::HttpServer;
use anyhow::Context as _;
use std::time::Duration;

/// How long in-flight requests may take to finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Starts the server and blocks until it has shut down.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let (ctx, bootstrap) = startup::start(&config).await?;
    let zuliprc = config.owner_zuliprc();
    println!(
        "Parley {} serving \"{}\" at {} ({} database {})",
        parley_domain::version::service_version(),
        bootstrap.realm.name,
        ctx.realm.url,
        config.database_url.backend_name(),
        config.database_url.redacted(),
    );
    match &bootstrap.created_owner {
        Some(owner) => {
            println!("Created the organization and its owner account:");
            println!("  email:    {}", owner.user.delivery_email);
            println!(
                "  password: {}   (shown only now; log in with it from the apps)",
                owner.password
            );
            println!("  API credentials written to {}", zuliprc.display());
        }
        None if zuliprc.exists() => {
            println!("Owner API credentials: {}", zuliprc.display());
        }
        None => {}
    }
    println!(
        "Try it: python3 -c 'import zulip; print(zulip.Client(config_file=\"{}\").get_members())'",
        zuliprc.display()
    );
    let server = HttpServer::new(move || parley_api::app(ctx.clone()))
        .shutdown_timeout(SHUTDOWN_GRACE.as_secs())
        .bind(config.bind)
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    tracing::info!(bind = %config.bind, "listening");
    server.run().await.context("server failed")?;
    tracing::info!("shut down");
    Ok(())
}

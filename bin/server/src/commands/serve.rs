//! `parley serve`: run the server until SIGINT or SIGTERM, then finish in-flight requests.

use crate::config::Config;
use crate::startup;
use anyhow::Context as _;
use std::time::Duration;

/// How long in-flight requests may take to finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// How often uploads that no message links are looked for (and old ones deleted).
const UNCLAIMED_CLEANUP_INTERVAL: Duration = Duration::from_secs(3600);

/// Starts the server and blocks until it has shut down.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let (ctx, bootstrap) = startup::start(&config).await?;
    parley_actions::bootstrap::do_record_server_url(&ctx)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("cannot record the server's URL")?;
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
    let engine = ctx.events.engine().clone();
    // Only the server restores queues (and dumps them at exit): other commands must leave the
    // saved file alone.
    let restored = engine
        .restore(&config.event_queues_file())
        .context("cannot restore the event queues")?;
    if restored > 0 {
        tracing::info!(queues = restored, "restored event queues");
    }
    let gc = engine.spawn_gc();
    // KaTeX loads in the background, so the first message with math does not wait for it.
    parley_markdown::warm_up_math();
    let scheduler = parley_actions::scheduler::spawn_scheduler(ctx.clone());
    let janitor = parley_actions::uploads::spawn_unclaimed_cleanup(
        ctx.clone(),
        config.unclaimed_upload_age,
        UNCLAIMED_CLEANUP_INTERVAL,
    );
    // Served through parley_api::h1 rather than HttpServer, so that requests the HTTP parser
    // refuses also get the JSON error envelope.
    let listener = std::net::TcpListener::bind(config.bind)
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    let server = parley_api::h1::serve(ctx, listener, SHUTDOWN_GRACE)
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    let handle = server.handle();
    let stopper = {
        let engine = engine.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            tracing::info!("shutting down");
            // Waiting long-polls answer now, so in-flight requests finish quickly.
            engine.close();
            handle.stop(true).await;
        })
    };
    tracing::info!(bind = %config.bind, "listening");
    server.await.context("server failed")?;
    stopper.abort();
    gc.abort();
    janitor.abort();
    scheduler.abort();
    let path = config.event_queues_file();
    let saved = engine
        .dump(&path)
        .with_context(|| format!("cannot save the event queues to {}", path.display()))?;
    tracing::info!(queues = saved, "shut down; event queues saved");
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

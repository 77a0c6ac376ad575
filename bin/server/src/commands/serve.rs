//! `parley serve`: run the server until SIGINT or SIGTERM, then finish in-flight requests.

use crate::config::Config;
use crate::say;
use crate::startup;
use actix_web::{web, App, HttpServer};
use anyhow::Context as _;
use parley_api::ops::AppOptions;
use std::time::Duration;

/// How long in-flight requests may take to finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// How often uploads that no message links are looked for (and old ones deleted).
const UNCLAIMED_CLEANUP_INTERVAL: Duration = Duration::from_secs(3600);

/// Starts the server and blocks until it has shut down.
pub async fn run(config: Config) -> anyhow::Result<()> {
    // The ports first: a server that cannot listen creates nothing and announces nothing.
    let listener = std::net::TcpListener::bind(config.bind)
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    let metrics_listener = match config.metrics_bind {
        Some(addr) => Some(
            std::net::TcpListener::bind(addr)
                .with_context(|| format!("cannot listen on {addr} (--metrics-bind)"))?,
        ),
        None => None,
    };
    // One server per SQLite database; PostgreSQL takes any number.
    let _serving = match &config.database_url {
        parley_storage::DatabaseUrl::Sqlite(path) => Some(crate::single_server::lock(path)?),
        parley_storage::DatabaseUrl::Postgres(_) => None,
    };
    let (ctx, bootstrap) = startup::start(&config).await?;
    parley_actions::bootstrap::do_record_server_url(&ctx)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("cannot record the server's URL")?;
    let export = match (&metrics_listener, &config.metrics_token) {
        (None, None) => None,
        _ => Some(crate::metrics::export(&ctx, config.metrics_token.clone())?),
    };
    tracing::debug!(
        metrics_public = config.metrics_token.is_some(),
        metrics_bind = ?config.metrics_bind,
        "metrics"
    );
    let zuliprc = config.owner_zuliprc();
    say!(
        "Parley {} serving \"{}\" at {} ({} database {})",
        parley_domain::version::service_version(),
        bootstrap.realm.name,
        ctx.realm.url,
        config.database_url.backend_name(),
        config.database_url.redacted(),
    );
    match &bootstrap.created_owner {
        Some(owner) => {
            say!("Created the organization and its owner account:");
            say!("  email:    {}", owner.user.delivery_email);
            say!(
                "  password: {}   (shown only now, and kept in {} until you delete it)",
                owner.password,
                config.owner_password_file().display()
            );
            say!("  API credentials written to {}", zuliprc.display());
        }
        None if zuliprc.exists() => {
            say!("Owner API credentials: {}", zuliprc.display());
        }
        None => {}
    }
    say!(
        "Try it: python3 -c 'import zulip; print(zulip.Client(config_file=\"{}\").get_members())'",
        zuliprc.display()
    );
    let engine = ctx.events.engine().clone();
    // Only the server restores queues (and dumps them at exit): other commands must leave the
    // saved file alone.
    // With the event log, queues are handed over through the database instead (adopted by
    // whichever process a request for them reaches).
    let logged = ctx.events.log().is_some();
    let restored = match logged {
        true => 0,
        false => engine
            .restore(&config.event_queues_file())
            .context("cannot restore the event queues")?,
    };
    if restored > 0 {
        tracing::info!(queues = restored, "restored event queues");
    }
    // With the event log (PostgreSQL), this process delivers it from here on: from where the
    // restored queues stopped, else from the log's head.
    ctx.events
        .follow()
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("cannot follow the event log")?;
    let gc = engine.spawn_gc();
    // KaTeX loads in the background, so the first message with math does not wait for it.
    parley_markdown::warm_up_math();
    let scheduler = parley_actions::scheduler::spawn_scheduler(ctx.clone());
    let memory = crate::memory::spawn_release_when_idle(ctx.db.clone(), crate::memory::IDLE_AFTER);
    let janitor = parley_actions::uploads::spawn_unclaimed_cleanup(
        ctx.clone(),
        config.unclaimed_upload_age,
        UNCLAIMED_CLEANUP_INTERVAL,
    );
    let options = AppOptions {
        // On the public port only behind the token.
        metrics: export.clone().filter(|e| e.token.is_some()),
    };
    // Served through parley_api::h1 rather than HttpServer, so that requests the HTTP parser
    // refuses also get the JSON error envelope.
    let hub = ctx.events.clone();
    let server = parley_api::h1::serve(ctx, options, listener, SHUTDOWN_GRACE)
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    let handle = server.handle();
    let metrics_server = match (metrics_listener, export) {
        (Some(listener), Some(export)) => {
            let server = HttpServer::new(move || {
                App::new()
                    .app_data(web::Data::new(export.clone()))
                    .route("/metrics", web::get().to(parley_api::ops::metrics))
            })
            .workers(1)
            .disable_signals()
            .listen(listener)
            .context("cannot serve metrics")?
            .run();
            Some(server)
        }
        _ => None,
    };
    let metrics_handle = metrics_server.as_ref().map(|s| s.handle());
    let metrics_task = metrics_server.map(actix_web::rt::spawn);
    let stopper = {
        let engine = engine.clone();
        let hub = hub.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            tracing::info!("shutting down");
            if let Some(log) = hub.log() {
                // Requests for this process's queues reaching the others wait for the hand-over.
                if let Err(e) = log.mark_stopping().await {
                    tracing::warn!(error = %e, "cannot announce the stop");
                }
            }
            // Waiting long-polls answer now, so in-flight requests finish quickly.
            engine.close();
            handle.stop(true).await;
            if let Some(metrics) = metrics_handle {
                metrics.stop(false).await;
            }
        })
    };
    tracing::info!(bind = %config.bind, "listening");
    server.await.context("server failed")?;
    stopper.abort();
    if let Some(task) = metrics_task {
        task.abort();
    }
    gc.abort();
    memory.abort();
    janitor.abort();
    scheduler.abort();
    if let Some(log) = hub.log() {
        let handed = log
            .hand_off()
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))
            .context("cannot hand the event queues over")?;
        tracing::info!(queues = handed, "shut down; event queues handed over");
        return Ok(());
    }
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

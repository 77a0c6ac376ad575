//! The `parley` binary: parse the command line, set up logging, run the subcommand.

use clap::Parser;
use parley_server::cli::{Cli, Command};
use parley_server::commands;
use parley_server::config::{Config, LogFormat};
use std::io::IsTerminal;
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

/// Logs to standard error: `PARLEY_LOG` (or `RUST_LOG`) sets the filter, `info` by default;
/// colour only on a terminal; JSON lines with `--log-format json`.
fn init_logging(format: LogFormat) {
    let given = std::env::var("PARLEY_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .ok()
        .filter(|f| !f.trim().is_empty());
    let mut filter = given
        .as_deref()
        .and_then(|f| EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| EnvFilter::new("info"));
    // The HTML parser logs every token at debug: keep it out of `PARLEY_LOG=debug` unless asked.
    if !given.as_deref().unwrap_or_default().contains("html5ever") {
        if let Ok(quiet) = "html5ever=info".parse() {
            filter = filter.add_directive(quiet);
        }
    }
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder.json().with_ansi(false).init(),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result =
        Config::resolve(cli.settings, std::env::var("DATABASE_URL").ok()).and_then(|config| {
            init_logging(config.log_format);
            tracing::debug!(
                bind = %config.bind,
                data_dir = %config.data_dir.display(),
                database = %config.database_url.redacted(),
                sqlite_synchronous = ?config.sqlite_synchronous,
                metrics_bind = ?config.metrics_bind,
                metrics_token = config.metrics_token.is_some(),
                external_url = %config.realm.url,
                "configuration"
            );
            actix_web::rt::System::new().block_on(async move {
                match cli.command.unwrap_or(Command::Serve) {
                    Command::Serve => commands::serve::run(config).await,
                    Command::Migrate => commands::migrate::run(config).await,
                    Command::CreateUser {
                        email,
                        full_name,
                        role,
                        password,
                    } => commands::create_user::run(config, email, full_name, role, password).await,
                    Command::ChangePassword { email, password } => {
                        commands::change_password::run(config, email, password).await
                    }
                    Command::Backup { dir } => commands::backup::backup(config, dir).await,
                    Command::Restore { dir, force } => {
                        commands::backup::restore(config, dir, force).await
                    }
                }
            })
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("parley: {err:#}");
            ExitCode::FAILURE
        }
    }
}

//! The `parley` binary: parse the command line, set up logging, run the subcommand.

use clap::Parser;
use parley_server::cli::{Cli, Command};
use parley_server::commands;
use parley_server::config::Config;
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("PARLEY_LOG")
                .or_else(|_| EnvFilter::try_from_default_env())
                .unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let result =
        Config::resolve(cli.settings, std::env::var("DATABASE_URL").ok()).and_then(|config| {
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

//! The command line.

use crate::config::Settings;
use clap::{Parser, Subcommand};

/// Parley: a fast team chat server speaking the Zulip API.
#[derive(Debug, Parser)]
#[command(name = "parley", version, about)]
pub struct Cli {
    /// Settings shared by every subcommand.
    #[command(flatten)]
    pub settings: Settings,

    /// What to do; `serve` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the server (the default).
    Serve,
    /// Create a user and print a zuliprc for it.
    CreateUser {
        /// Login and delivery address.
        #[arg(long)]
        email: String,
        /// Display name.
        #[arg(long)]
        full_name: String,
        /// owner, admin, moderator, member or guest.
        #[arg(long, default_value = "member")]
        role: String,
        /// Password; a random one is generated and printed when omitted.
        #[arg(long)]
        password: Option<String>,
    },
    /// Apply pending database migrations and exit.
    Migrate,
    /// Set a user's password (the API key stays as it is). The password is read from standard
    /// input (its first line) unless --password is given.
    ChangePassword {
        /// The user's delivery address.
        #[arg(long)]
        email: String,
        /// The new password; prefer standard input, which other users cannot see in `ps`.
        #[arg(long)]
        password: Option<String>,
    },
    /// Copy the database (SQLite, consistently, while the server runs) and the uploads into DIR,
    /// which must be missing or empty.
    Backup {
        /// Where to write the backup.
        dir: std::path::PathBuf,
    },
    /// Bring back a backup made by `parley backup` into the configured data directory and
    /// database; the server must be stopped.
    Restore {
        /// The backup's directory.
        dir: std::path::PathBuf,
        /// Replace an existing database and uploads.
        #[arg(long)]
        force: bool,
    },
}

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
}

//! The `parley` binary's library half: configuration, start-up wiring and the subcommands, kept
//! here so that the end-to-end tests start the server exactly as the binary does.

pub mod cli;
pub mod commands;
pub mod config;
pub mod mail;
pub mod memory;
pub mod metrics;
pub mod output;
pub mod single_server;
pub mod startup;
pub mod zuliprc;

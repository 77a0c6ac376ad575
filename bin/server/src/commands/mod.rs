//! The subcommands of `parley`.

pub mod create_user;
pub mod migrate;
pub mod serve;

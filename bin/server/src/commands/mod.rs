//! The subcommands of `parley`.

pub mod backup;
pub mod change_password;
pub mod create_user;
pub mod migrate;
pub mod serve;

//! Filling the API's shapes (`parley_wire`) from what is stored: each function loads what its
//! shape needs and builds it, so that a read endpoint, the register snapshot and an event that
//! show the same object build it the same way. Nothing here changes state or checks who may ask.

pub mod channel_folders;
pub mod groups;
pub mod messages;
pub mod personal;
pub mod realm;
pub mod scheduled;
pub mod users;

//! Builders of the events that actions publish: each computes the payload and its audience once,
//! inside the action's transaction, so that delivery to every queue is a cheap copy. Every body
//! is a typed [`parley_wire::Event`]; the objects inside come from [`crate::present`], as the
//! snapshot's and the read endpoints' do.

pub mod channel_folders;
pub mod channels;
mod emit;
pub mod groups;
pub mod messages;
pub mod people;
pub mod personal;
pub mod realm;
pub mod realm_config;
pub mod scheduled;
pub mod topics;
pub mod uploads;
pub mod users;

pub use emit::{body, to_everyone, to_users};

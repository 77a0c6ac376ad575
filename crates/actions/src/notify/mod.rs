//! Builders of the events that actions publish: each computes the payload and its audience once,
//! inside the action's transaction, so that delivery to every queue is a cheap copy.

pub mod channels;
pub mod groups;
pub mod messages;
pub mod people;
pub mod personal;
pub mod realm;
pub mod realm_config;
pub mod topics;
pub mod uploads;
pub mod users;

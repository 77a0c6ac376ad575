//! The API's shapes: every object Parley returns, written once as a typed serde struct and used
//! by the read endpoints, the `POST /register` snapshot and the events alike, so that a field
//! cannot exist in one and not in the other.
//!
//! Field names follow the API (`stream_id`, `subject`); a key the reference omits in some case is
//! an `Option` with `skip_serializing_if`, a key it sends as `null` is a plain `Option`. Nothing
//! here does I/O: the actions load what a shape needs and fill it in.
//!
//! Settings that are described by a registry (`domain::settings`, `domain::realm_settings`) keep
//! their registry as their one description and travel as maps of the registry's names.

pub mod channel;
pub mod event;
pub mod group;
pub mod message;
pub mod personal;
pub mod realm;
pub mod scheduled;
pub mod user;
pub mod web;

pub use channel::{Channel, Subscription};
pub use event::Event;
pub use group::{GroupSettingValue, UserGroup};
pub use message::{FoundMessage, Message, MessagesPage};
pub use user::{User, UserOptions};

/// A JSON object, for the shapes whose keys a registry decides.
pub type Object = serde_json::Map<String, serde_json::Value>;

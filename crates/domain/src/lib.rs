//! Parley's domain: the types, validation rules and permission predicates of a team chat
//! organization. Nothing here does I/O or is async, so every rule can be unit-tested exhaustively
//! and shared by every layer above.

pub mod access;
pub mod alert_words;
pub mod channel;
pub mod channel_folder;
pub mod draft;
pub mod email;
pub mod error;
pub mod group_permissions;
pub mod groups;
pub mod ids;
pub mod invite;
pub mod limits;
pub mod linkifier;
pub mod locale;
pub mod message;
pub mod narrow;
pub mod navigation_view;
pub mod permissions;
pub mod playground;
pub mod presence;
pub mod profile_field;
pub mod push;
pub mod reaction;
pub mod realm;
pub mod realm_emoji;
pub mod realm_settings;
pub mod role;
pub mod saved_snippet;
pub mod scheduled;
pub mod settings;
#[cfg(test)]
mod testing;
pub mod thumbnail;
pub mod upload;
pub mod url_template;
pub mod user;
pub mod user_status;
pub mod user_topic;
pub mod version;

pub use error::{ErrorCode, RequestError};
pub use ids::{ChannelId, MessageId, ProfileFieldId, UserId};
pub use role::Role;

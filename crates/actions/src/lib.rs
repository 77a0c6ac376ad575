//! Parley's use cases: everything the API (or any other embedder) does goes through here.
//!
//! Naming follows the reference server: `access_*` functions fetch something and check that the
//! caller may see it (failing the same way as for something that does not exist), and `do_*`
//! functions change state in one transaction. Handlers call exactly one function of this crate.

pub mod access;
pub mod alert_words;
pub mod auth;
pub mod avatars;
pub mod bootstrap;
pub mod bots;
pub mod calls;
pub mod channel_email;
pub mod channel_folders;
pub mod channels;
pub mod context;
pub mod drafts;
pub mod email_change;
pub mod emoji_data;
pub mod error;
pub mod event_log;
pub mod event_queues;
pub mod file_store;
pub mod full_members;
pub mod health;
pub mod images;
pub mod invites;
pub mod linkifiers;
pub mod mail;
pub mod message_flags;
pub mod messages_delete;
pub mod messages_edit;
pub mod messages_read;
pub mod messages_send;
pub mod moderation;
pub mod muted_users;
pub mod navigation_views;
pub mod notices;
pub mod notify;
pub mod operator;
pub mod playgrounds;
pub mod policy;
pub mod presence;
pub mod present;
pub mod profile_fields;
pub mod publish;
pub mod push_devices;
pub mod rate_limit;
pub mod reactions;
pub mod realm_cache;
pub mod realm_emoji;
pub mod realm_settings;
pub mod register;
pub mod reminders;
pub mod rendering;
pub mod saved_snippets;
pub mod scheduled_messages;
pub mod scheduler;
pub mod secrets;
pub mod server_settings;
pub mod sessions;
pub mod settings_changes;
pub mod signup;
pub mod subscriptions;
pub mod time;
pub mod typing;
pub mod uploads;
pub mod user_activation;
pub mod user_groups;
pub mod user_settings;
pub mod user_status;
pub mod user_topics;
pub mod users;
pub mod web_pages;
pub mod welcome_bot;

pub use context::{Context, RealmAddress};
pub use error::ActionError;

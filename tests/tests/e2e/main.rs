//! The end-to-end tests: one test binary, so that CI links once. Each module is one area of the
//! API, tested over HTTP against the real application on SQLite and (with `TEST_DATABASE_URL`)
//! PostgreSQL.

mod alert_words;
mod auth;
mod bots;
mod channels;
mod drafts;
mod events;
mod events_channels;
mod events_oracle;
mod events_oracle_org;
mod invites;
mod linkifiers;
mod media;
mod message_actions;
mod message_edits;
mod messages;
mod muted_users;
mod navigation_views;
mod people;
mod playgrounds;
mod presence;
mod profile_fields;
mod push;
mod realm_emoji;
mod realm_settings;
mod requests;
mod saved_snippets;
mod server_settings;
mod settings;
mod typing;
mod uploads;
mod user_groups;
mod user_status;
mod user_topics;
mod users;

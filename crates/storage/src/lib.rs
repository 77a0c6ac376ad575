//! Parley's storage: the diesel schema, models and queries, on SQLite (the embedded default) and
//! PostgreSQL through one connection type. Every function takes `&mut DbConn`, so a caller can
//! run several in one transaction, and returns `Result`; nothing here knows about HTTP or events.
//!
//! A lookup by a unique key reads with `get_result`, not `first`: `first` adds `LIMIT ?`, and
//! SQLite prepares a statement with a bound `LIMIT` again each time its parameters are bound,
//! which is every execution through diesel (on the send and authentication paths that was a
//! fifth of the CPU, `docs/benchmarks.md`). For the same reason `SqlBuilder::limit` writes
//! SQLite's limits as literals.

pub mod alert_words;
pub mod attachments;
pub mod backup;
pub mod bots;
pub mod channel_folders;
pub mod channels;
pub mod cluster;
pub mod conn;
pub mod drafts;
pub mod email_changes;
pub mod email_invites;
pub mod error;
pub mod event_log;
mod flag_pages;
pub mod groups;
pub mod image_attachments;
pub mod invites;
pub mod linkifiers;
mod message_ids;
mod message_query;
mod message_rows;
pub mod messages;
pub mod migrate;
pub mod muted_users;
pub mod navigation_views;
mod nearest_ids;
pub mod pg_listen;
pub mod playgrounds;
pub mod pool;
pub mod pooled;
mod prepared;
pub mod presence;
pub mod profile_fields;
pub mod push_devices;
pub mod rate_buckets;
pub mod reactions;
pub mod read_ranges;
pub mod reader_flags;
mod reader_spans;
pub mod realm_emoji;
pub mod realms;
pub mod saved_snippets;
pub mod savepoint;
pub mod scheduled_messages;
pub mod schema;
mod search_windows;
pub mod send_reads;
pub mod sessions;
pub mod settings;
pub mod shared_snapshot;
pub mod spans;
pub mod sql;
pub mod subscriptions;
pub mod summaries;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod transaction;
pub mod unread;
pub mod url;
pub mod user_status;
pub mod user_topics;
pub mod users;
mod writer;

pub use conn::{DbConn, SqliteSynchronous};
pub use error::StorageError;
pub use event_log::{CommitHook, LogEntry, OnCommit};
pub use pool::{Db, PoolOptions, PoolUse};
pub use transaction::transaction;
pub use url::DatabaseUrl;

//! What every action needs: the database and where the organization lives.

use crate::bigbluebutton::BigBlueButtonConfig;
use crate::error::{ActionError, ActionResult};
use crate::file_store::{FileStore, MemoryFileStore};
use crate::mail::{Mailer, MemoryMailer};
use crate::publish::{EventHub, Events};
use crate::rate_limit::RateLimits;
use crate::realm_cache::ChangeSlot;
use parley_events::Event;
use parley_storage::Db;
use parley_storage::DbConn;
use std::sync::Arc;

/// The organization's address, from the server's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealmAddress {
    /// `realm_url`: the canonical URL clients use, without a trailing slash.
    pub url: String,
    /// The host part of the URL, used in placeholder email addresses.
    pub host: String,
}

impl RealmAddress {
    /// Parses the external URL; fails when it is not an absolute http(s) URL with a host.
    pub fn parse(external_url: &str) -> Result<RealmAddress, String> {
        let parsed = url::Url::parse(external_url.trim())
            .map_err(|e| format!("invalid external URL '{external_url}': {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!(
                "external URL '{external_url}' must start with http:// or https://"
            ));
        }
        let host = parsed
            .host_str()
            .ok_or_else(|| format!("external URL '{external_url}' has no host"))?
            .to_owned();
        Ok(RealmAddress {
            url: parsed.as_str().trim_end_matches('/').to_owned(),
            host,
        })
    }
}

/// The push notification service the server forwards registrations to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushConfig {
    /// Base URL of the push service (bouncer).
    pub service_url: String,
}

/// Shared state of the actions; cheap to clone.
#[derive(Clone)]
pub struct Context {
    /// The database.
    pub db: Db,
    /// Where the organization is reached.
    pub realm: RealmAddress,
    /// Request and login rate limits, shared by every worker.
    pub limits: Arc<RateLimits>,
    /// Event queues and the bus that fills them.
    pub events: Arc<EventHub>,
    /// Where outgoing mail goes.
    pub mailer: Arc<dyn Mailer>,
    /// The push notification service, when one is configured.
    pub push: Option<PushConfig>,
    /// Lifetime of an invitation link whose creator did not choose one, in minutes (the
    /// reference's `INVITATION_LINK_VALIDITY_MINUTES`).
    pub invitation_link_validity_minutes: i64,
    /// Where uploaded files, custom emoji and avatars are kept.
    pub files: Arc<dyn FileStore>,
    /// The camo image proxy external images and videos in messages load through, if any.
    pub camo: Option<parley_markdown::Camo>,
    /// The BigBlueButton server video calls are made on, if any.
    pub bigbluebutton: Option<BigBlueButtonConfig>,
    /// Runs after each write this process commits.
    after_commit: AfterCommit,
}

/// What follows every write this process commits, given the events the write recorded: the
/// outgoing webhook calls its messages trigger. A function pointer that [`Context::new`]
/// (`crate::wiring`) fills in, so the write path every action takes does not import the
/// features that react to writes, whose own writes take it.
pub type AfterCommit = fn(&Context, &[Event]);

impl Context {
    /// A context over this database and address, with the default rate limits, that runs
    /// `after_commit` after each committed write; [`Context::new`] is the one to use.
    pub(crate) fn with_hook(db: Db, realm: RealmAddress, after_commit: AfterCommit) -> Self {
        Context {
            after_commit,
            db,
            realm,
            limits: Arc::new(RateLimits::default()),
            events: Arc::new(EventHub::in_process(Default::default())),
            mailer: Arc::new(MemoryMailer::default()),
            push: None,
            invitation_link_validity_minutes: parley_domain::invite::DEFAULT_VALIDITY_MINUTES,
            files: Arc::new(MemoryFileStore::default()),
            camo: None,
            bigbluebutton: None,
        }
    }

    /// The same context making video calls on this BigBlueButton server.
    pub fn with_bigbluebutton(mut self, bbb: Option<BigBlueButtonConfig>) -> Self {
        self.bigbluebutton = bbb;
        self
    }

    /// The same context loading external media in messages through this camo proxy.
    pub fn with_camo(mut self, camo: Option<parley_markdown::Camo>) -> Self {
        self.camo = camo;
        self
    }

    /// The same context with another event hub.
    pub fn with_events(mut self, events: EventHub) -> Self {
        self.events = Arc::new(events);
        self
    }

    /// The same context sending mail through `mailer`.
    pub fn with_mailer(mut self, mailer: Arc<dyn Mailer>) -> Self {
        self.mailer = mailer;
        self
    }

    /// The same context keeping uploaded files in `files`.
    pub fn with_files(mut self, files: Arc<dyn FileStore>) -> Self {
        self.files = files;
        self
    }

    /// The same context giving invitation links this default lifetime, in minutes.
    pub fn with_invitation_link_validity_minutes(mut self, minutes: i64) -> Self {
        self.invitation_link_validity_minutes = minutes;
        self
    }

    /// The same context using this push notification service.
    pub fn with_push(mut self, push: Option<PushConfig>) -> Self {
        self.push = push;
        self
    }

    /// The same context with other rate limits.
    pub fn with_limits(mut self, limits: RateLimits) -> Self {
        self.limits = Arc::new(limits);
        self
    }
}

impl Context {
    /// Runs `f` in one write transaction and publishes the events it recorded after the commit
    /// (with an event log: appends them in the transaction, and returns once this process has
    /// delivered them).
    /// Nested calls must not happen: an action calls this once.
    pub(crate) async fn write<F, R>(&self, f: F) -> ActionResult<R>
    where
        F: FnOnce(&mut DbConn, &mut Events) -> ActionResult<R> + Send + 'static,
        R: Send + 'static,
    {
        let ctx = self.clone();
        // A task of its own, so that everything after the commit happens even if the request is
        // dropped meanwhile: the committed entry is handed to this process's follower (with a
        // log), or the events are published (without one), and outgoing webhooks are sent.
        tokio::spawn(async move {
            let _turn = ctx.events.shared().await;
            let hub = Arc::clone(&ctx.events);
            let cache = Arc::clone(ctx.events.realm_cache());
            // Outlives the commit: a change of the organization cache ends after it.
            let change = Arc::new(ChangeSlot::default());
            let slot = Arc::clone(&change);
            let ((result, events, delivered), position) = ctx
                .db
                .logged_transaction(move |conn| {
                    crate::realm_cache::scoped(&cache, &slot, || {
                        let mut events = Events::default();
                        let result = f(conn, &mut events)?;
                        let events = Arc::new(events.0);
                        // With an event log, the events are appended last, in this transaction;
                        // without one, published right after the commit, in commit order.
                        let (on_commit, delivered) = hub.on_commit(&events)?;
                        Ok::<_, ActionError>(((result, events, delivered), on_commit))
                    })
                })
                .await?;
            ctx.events.hand_over(position, &events);
            (ctx.after_commit)(&ctx, &events);
            ctx.events.committed(position, delivered).await;
            drop(change);
            Ok(result)
        })
        .await
        .map_err(|e| ActionError::Internal(format!("a write task failed: {e}")))?
    }

    /// [`Db::run`] with the organization cache (`crate::realm_cache`) in scope.
    pub async fn run<F, R, E>(&self, f: F) -> Result<R, E>
    where
        F: FnOnce(&mut DbConn) -> Result<R, E> + Send + 'static,
        R: Send + 'static,
        E: From<parley_storage::StorageError> + Send + 'static,
    {
        let (change, f) = self.cache_scoped(f);
        let result = self.db.run(f).await;
        drop(change);
        result
    }

    /// [`Db::transaction`] with the organization cache (`crate::realm_cache`) in scope, for
    /// transactions that record no events.
    pub async fn transaction<F, R, E>(&self, f: F) -> Result<R, E>
    where
        F: FnOnce(&mut DbConn) -> Result<R, E> + Send + 'static,
        R: Send + 'static,
        E: From<parley_storage::StorageError> + Send + 'static,
    {
        let (change, f) = self.cache_scoped(f);
        let result = self.db.transaction(f).await;
        drop(change);
        result
    }

    /// `f` run with the organization cache in scope, and the slot recording whether it changed
    /// the cached tables, kept by the caller until the work has ended.
    fn cache_scoped<F, R, E>(
        &self,
        f: F,
    ) -> (
        Arc<ChangeSlot>,
        impl FnOnce(&mut DbConn) -> Result<R, E> + Send + 'static,
    )
    where
        F: FnOnce(&mut DbConn) -> Result<R, E> + Send + 'static,
    {
        let cache = Arc::clone(self.events.realm_cache());
        let change = Arc::new(ChangeSlot::default());
        let slot = Arc::clone(&change);
        let scoped = move |conn: &mut DbConn| crate::realm_cache::scoped(&cache, &slot, || f(conn));
        (change, scoped)
    }
}

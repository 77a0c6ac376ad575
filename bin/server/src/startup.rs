//! Wiring shared by the server and its tests: open the database (running migrations), make sure
//! the organization exists, and build the actions context.

use crate::config::{Config, UploadStore};
use crate::mail::{OutboxMailer, SmtpMailer};
use crate::zuliprc;
use anyhow::Context as _;
use parley_actions::bootstrap::{do_ensure_realm, Bootstrap, RealmInit};
use parley_actions::event_log::NodeIdentity;
use parley_actions::file_store::s3::S3FileStore;
use parley_actions::file_store::{FileStore, LocalFileStore};
use parley_actions::mail::Mailer;
use parley_actions::publish::EventHub;
use parley_actions::rate_limit::{RateLimits, RedisBuckets};
use parley_actions::{Context, RealmAddress};
use parley_events::EngineConfig;
use parley_storage::{DatabaseUrl, Db, PoolOptions};
use std::sync::Arc;
use std::time::Duration;

/// Opens the database on a blocking thread (connecting and migrating block) and returns the
/// actions context.
pub async fn connect(
    url: DatabaseUrl,
    realm: RealmAddress,
    pool: PoolOptions,
) -> anyhow::Result<Context> {
    let described = format!("{} database {}", url.backend_name(), url.redacted());
    let db = tokio::task::spawn_blocking(move || Db::open(url, pool))
        .await
        .context("database start-up task failed")?
        .with_context(|| format!("cannot open the {described}"))?;
    Ok(Context::new(db, realm))
}

/// Opens the configured database and creates the organization and its owner on first start,
/// writing the owner's zuliprc. Returns the context and what happened.
pub async fn start(config: &Config) -> anyhow::Result<(Context, Bootstrap)> {
    private_data_dir(&config.data_dir)?;
    let ctx = connect(
        config.database_url.clone(),
        config.realm.clone(),
        PoolOptions {
            sqlite_synchronous: config.sqlite_synchronous,
            postgres_group_commit: config.postgres_group_commit,
            ..PoolOptions::default()
        },
    )
    .await?;
    let limits = rate_limits(config, &ctx).await?;
    let ctx = ctx.with_limits(limits);
    let node = NodeIdentity::random(config.advertise_url());
    let db = ctx.db.clone();
    let ctx = ctx.with_events(EventHub::for_database(
        EngineConfig {
            heartbeat: config.heartbeat,
            queue_timeout: config.queue_timeout,
            // Collect at least twice per timeout, so short timeouts (in tests) take effect.
            gc_interval: (config.queue_timeout / 2)
                .clamp(Duration::from_millis(100), Duration::from_secs(60)),
            ..EngineConfig::default()
        },
        &db,
        node,
    ));
    let mailer: Arc<dyn Mailer> = match &config.smtp_url {
        Some(url) => Arc::new(SmtpMailer::new(url, config.mail_from.clone())),
        None => Arc::new(OutboxMailer {
            dir: config.outbox_dir(),
            from: config.mail_from.clone(),
        }),
    };
    let ctx = ctx.with_mailer(mailer);
    let ctx = ctx.with_push(config.push_service_url.as_ref().map(|url| {
        parley_actions::push_devices::PushConfig {
            service_url: url.as_str().trim_end_matches('/').to_owned(),
        }
    }));
    let ctx = ctx.with_files(file_store(config).await?);
    let ctx = ctx.with_invitation_link_validity_minutes(config.invitation_link_validity_minutes);
    let ctx = ctx.with_camo(config.camo.clone());
    let ctx = ctx.with_bigbluebutton(config.bigbluebutton.clone());
    let init = RealmInit {
        name: config.realm_name.clone(),
        owner_email: config.owner_email.clone(),
    };
    let bootstrap = do_ensure_realm(&ctx, init)
        .await
        .context("cannot create the organization")?;
    if let Some(owner) = &bootstrap.created_owner {
        let path = config.owner_zuliprc();
        let text = zuliprc::render(
            &owner.user.api_email(&ctx.realm.host),
            &owner.api_key,
            &ctx.realm.url,
        );
        zuliprc::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
        // Printed once at start, and kept here too, so that it is not lost with a closed or
        // discarded standard output.
        let path = config.owner_password_file();
        let text = format!(
            "{}\n# The owner's first password ({}). Delete this file once noted; change it with\n\
             # parley change-password --email {}\n",
            owner.password, owner.user.delivery_email, owner.user.delivery_email
        );
        zuliprc::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok((ctx, bootstrap))
}

/// The rate limits: in Redis when `--redis-url` is given; else, as several processes may serve
/// a PostgreSQL database, in it; in memory on SQLite. A Redis that does not answer at start is
/// a warning, not an error: each process limits in memory until it answers.
async fn rate_limits(config: &Config, ctx: &Context) -> anyhow::Result<RateLimits> {
    let limits = RateLimits::default();
    let Some(url) = &config.redis_url else {
        return Ok(limits.shared_in(&ctx.db));
    };
    let redis = RedisBuckets::open(url, &config.redis_key_prefix).context("--redis-url")?;
    match redis.ping().await {
        Ok(()) => tracing::info!(redis = %redis.shown(), "rate limits kept in Redis"),
        Err(e) => tracing::warn!(
            redis = %redis.shown(),
            error = %e,
            "Redis does not answer; limiting in memory until it does"
        ),
    }
    Ok(limits.in_redis(Arc::new(redis)))
}

/// The configured upload store; a bucket that cannot be reached (or written) stops the start,
/// with the reason.
pub async fn file_store(config: &Config) -> anyhow::Result<Arc<dyn FileStore>> {
    match &config.upload_store {
        UploadStore::Local => Ok(Arc::new(LocalFileStore::new(
            config.data_dir.join("uploads"),
        ))),
        UploadStore::S3(s3) => {
            let store = S3FileStore::new(s3).context("--upload-store")?;
            store.check().await.with_context(|| {
                format!(
                    "the upload store {} cannot be used (check the bucket, --s3-endpoint, \
                     --s3-region and AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)",
                    store.described()
                )
            })?;
            tracing::info!(store = store.described(), "uploads are kept in S3");
            Ok(Arc::new(store))
        }
    }
}

/// Creates the data directory readable by its owner only (it holds the database, credentials
/// and uploads), and narrows an existing one to that.
pub fn private_data_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .with_context(|| format!("cannot make {} private (0700)", dir.display()))?;
        }
    }
    Ok(())
}

//! Configuration: every setting is a command-line flag, a `PARLEY_<NAME>` environment variable
//! and a key of the optional TOML file given with `--config`. A flag beats the environment, which
//! beats the file, which beats the defaults.

use anyhow::{bail, Context as _};
use clap::Args;
use parley_actions::file_store::s3::S3Config;
use parley_actions::RealmAddress;
use parley_storage::{DatabaseUrl, SqliteSynchronous};
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The settings as given; each may be missing. The same struct reads flags, environment and the
/// TOML file, so a setting is declared once.
#[derive(Debug, Clone, Default, Args, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// TOML file with any of these settings (keys as the flags, with underscores).
    #[arg(long, global = true, env = "PARLEY_CONFIG", value_name = "FILE")]
    #[serde(skip)]
    pub config: Option<PathBuf>,

    /// Address and port to listen on [default: 127.0.0.1:9991].
    #[arg(long, global = true, env = "PARLEY_BIND", value_name = "ADDR")]
    pub bind: Option<String>,

    /// Directory for the SQLite database, owner.zuliprc and other state [default: ./data].
    #[arg(long, global = true, env = "PARLEY_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// sqlite://PATH or postgres://USER@HOST/DB; also read from DATABASE_URL
    /// [default: sqlite://<data-dir>/parley.db].
    #[arg(long, global = true, env = "PARLEY_DATABASE_URL", value_name = "URL")]
    pub database_url: Option<String>,

    /// The URL clients use to reach the server (realm_url) [default: http://<bind>].
    #[arg(long, global = true, env = "PARLEY_EXTERNAL_URL", value_name = "URL")]
    pub external_url: Option<String>,

    /// Name of the organization, used when it is first created [default: Parley].
    #[arg(long, global = true, env = "PARLEY_REALM_NAME", value_name = "NAME")]
    pub realm_name: Option<String>,

    /// Email of the owner account created on first start [default: owner@parley.local].
    #[arg(long, global = true, env = "PARLEY_OWNER_EMAIL", value_name = "EMAIL")]
    pub owner_email: Option<String>,

    /// Seconds a blocking GET /events waits before answering with a heartbeat [default: 60].
    #[arg(
        long,
        global = true,
        env = "PARLEY_HEARTBEAT_SECONDS",
        value_name = "SECONDS"
    )]
    pub heartbeat_seconds: Option<u64>,

    /// Seconds an unpolled event queue lives before it is collected [default: 600].
    #[arg(
        long,
        global = true,
        env = "PARLEY_QUEUE_TIMEOUT_SECONDS",
        value_name = "SECONDS"
    )]
    pub queue_timeout_seconds: Option<u64>,

    /// Send mail through this SMTP server, smtp://[USER:PASSWORD@]HOST[:PORT] (plain SMTP, for a
    /// local relay) [default: none: mail is written to <data-dir>/outbox].
    #[arg(long, global = true, env = "PARLEY_SMTP_URL", value_name = "URL")]
    pub smtp_url: Option<String>,

    /// Sender address of outgoing mail [default: noreply@<external host>].
    #[arg(long, global = true, env = "PARLEY_MAIL_FROM", value_name = "EMAIL")]
    pub mail_from: Option<String>,

    /// Base URL of the push notification service (bouncer) that mobile devices register with;
    /// without it push registration answers PUSH_SERVICE_NOT_CONFIGURED [default: none].
    #[arg(
        long,
        global = true,
        env = "PARLEY_PUSH_SERVICE_URL",
        value_name = "URL"
    )]
    pub push_service_url: Option<String>,

    /// Minutes an invitation link works when its creator does not say [default: 14400, ten days].
    #[arg(
        long,
        global = true,
        env = "PARLEY_INVITATION_LINK_VALIDITY_MINUTES",
        value_name = "MINUTES"
    )]
    pub invitation_link_validity_minutes: Option<i64>,

    /// Base URL of a camo image proxy that images and videos from other sites in messages load
    /// through, e.g. https://camo.example.com/external_content/ (needs --camo-key)
    /// [default: none: clients load them directly].
    #[arg(long, global = true, env = "PARLEY_CAMO_URL", value_name = "URL")]
    pub camo_url: Option<String>,

    /// The key shared with the camo proxy.
    #[arg(long, global = true, env = "PARLEY_CAMO_KEY", value_name = "KEY")]
    pub camo_key: Option<String>,

    /// Weeks after which an upload that no message links is deleted [default: 5].
    #[arg(
        long,
        global = true,
        env = "PARLEY_UNCLAIMED_UPLOAD_WEEKS",
        value_name = "WEEKS"
    )]
    pub unclaimed_upload_weeks: Option<i64>,

    /// SQLite's `synchronous`: `full` syncs the log at every commit, so nothing acknowledged is
    /// lost on power loss; `normal` is faster but may lose the last commits then [default: full].
    #[arg(
        long,
        global = true,
        env = "PARLEY_SQLITE_SYNCHRONOUS",
        value_name = "normal|full"
    )]
    pub sqlite_synchronous: Option<String>,

    /// On PostgreSQL, commit concurrent event-producing writes together, one flush for a batch
    /// (`docs/architecture.md`, "The writer"): worth it where a commit's flush is slow (a
    /// network disk); with a fast flush, writes side by side send faster [default: off].
    #[arg(
        long,
        global = true,
        env = "PARLEY_POSTGRES_GROUP_COMMIT",
        value_name = "on|off"
    )]
    pub postgres_group_commit: Option<String>,

    /// Serve Prometheus metrics at /metrics on this separate address, e.g. 127.0.0.1:9992
    /// [default: none].
    #[arg(long, global = true, env = "PARLEY_METRICS_BIND", value_name = "ADDR")]
    pub metrics_bind: Option<String>,

    /// Serve /metrics on the public port too, to scrapes with `Authorization: Bearer TOKEN` (also
    /// required on --metrics-bind when both are set) [default: none: no /metrics on the public port].
    #[arg(
        long,
        global = true,
        env = "PARLEY_METRICS_TOKEN",
        value_name = "TOKEN"
    )]
    pub metrics_token: Option<String>,

    /// The base URL other Parley processes on the same PostgreSQL database reach this one at,
    /// to forward long-polls of the event queues it holds, e.g. http://10.0.0.2:9991
    /// [default: http://<bind>].
    #[arg(long, global = true, env = "PARLEY_NODE_URL", value_name = "URL")]
    pub node_url: Option<String>,

    /// Keep the rate limits of every process in this Redis, redis://[:PASSWORD@]HOST[:PORT][/DB]
    /// or redis+unix:///PATH [default: none: in PostgreSQL on PostgreSQL, in memory on SQLite].
    #[arg(long, global = true, env = "PARLEY_REDIS_URL", value_name = "URL")]
    pub redis_url: Option<String>,

    /// The start of every rate-limit key in Redis, to keep deployments sharing one Redis apart
    /// [default: parley:ratelimit:].
    #[arg(
        long,
        global = true,
        env = "PARLEY_REDIS_KEY_PREFIX",
        value_name = "PREFIX"
    )]
    pub redis_key_prefix: Option<String>,

    /// Log line format on standard error: text or json [default: text].
    #[arg(
        long,
        global = true,
        env = "PARLEY_LOG_FORMAT",
        value_name = "text|json"
    )]
    pub log_format: Option<String>,
    /// Base URL of a BigBlueButton server for video calls, e.g.
    /// https://bbb.example.com/bigbluebutton/ (needs --bigbluebutton-secret) [default: none].
    #[arg(
        long,
        global = true,
        env = "PARLEY_BIGBLUEBUTTON_URL",
        value_name = "URL"
    )]
    pub bigbluebutton_url: Option<String>,

    /// The shared secret of the BigBlueButton server's API.
    #[arg(
        long,
        global = true,
        env = "PARLEY_BIGBLUEBUTTON_SECRET",
        value_name = "SECRET"
    )]
    pub bigbluebutton_secret: Option<String>,

    /// Where uploads, avatars and custom emoji are kept: `local` (<data-dir>/uploads) or an
    /// S3-compatible bucket, s3://BUCKET[/PREFIX], which several servers can share; its
    /// credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY [default: local].
    #[arg(
        long,
        global = true,
        env = "PARLEY_UPLOAD_STORE",
        value_name = "local|s3://BUCKET[/PREFIX]"
    )]
    pub upload_store: Option<String>,

    /// URL of an S3-compatible server other than AWS, e.g. http://127.0.0.1:9000 for MinIO
    /// [default: AWS, or AWS_ENDPOINT].
    #[arg(long, global = true, env = "PARLEY_S3_ENDPOINT", value_name = "URL")]
    pub s3_endpoint: Option<String>,

    /// The bucket's region [default: AWS_REGION or AWS_DEFAULT_REGION, else us-east-1].
    #[arg(long, global = true, env = "PARLEY_S3_REGION", value_name = "REGION")]
    pub s3_region: Option<String>,
}

impl Settings {
    /// Fills every setting missing here from `fallback`.
    fn or(self, fallback: Settings) -> Settings {
        Settings {
            config: self.config.or(fallback.config),
            bind: self.bind.or(fallback.bind),
            data_dir: self.data_dir.or(fallback.data_dir),
            database_url: self.database_url.or(fallback.database_url),
            external_url: self.external_url.or(fallback.external_url),
            realm_name: self.realm_name.or(fallback.realm_name),
            owner_email: self.owner_email.or(fallback.owner_email),
            heartbeat_seconds: self.heartbeat_seconds.or(fallback.heartbeat_seconds),
            queue_timeout_seconds: self
                .queue_timeout_seconds
                .or(fallback.queue_timeout_seconds),
            smtp_url: self.smtp_url.or(fallback.smtp_url),
            mail_from: self.mail_from.or(fallback.mail_from),
            push_service_url: self.push_service_url.or(fallback.push_service_url),
            invitation_link_validity_minutes: self
                .invitation_link_validity_minutes
                .or(fallback.invitation_link_validity_minutes),
            camo_url: self.camo_url.or(fallback.camo_url),
            camo_key: self.camo_key.or(fallback.camo_key),
            unclaimed_upload_weeks: self
                .unclaimed_upload_weeks
                .or(fallback.unclaimed_upload_weeks),
            sqlite_synchronous: self.sqlite_synchronous.or(fallback.sqlite_synchronous),
            postgres_group_commit: self
                .postgres_group_commit
                .or(fallback.postgres_group_commit),
            metrics_bind: self.metrics_bind.or(fallback.metrics_bind),
            metrics_token: self.metrics_token.or(fallback.metrics_token),
            node_url: self.node_url.or(fallback.node_url),
            redis_url: self.redis_url.or(fallback.redis_url),
            redis_key_prefix: self.redis_key_prefix.or(fallback.redis_key_prefix),
            log_format: self.log_format.or(fallback.log_format),
            bigbluebutton_url: self.bigbluebutton_url.or(fallback.bigbluebutton_url),
            bigbluebutton_secret: self.bigbluebutton_secret.or(fallback.bigbluebutton_secret),
            upload_store: self.upload_store.or(fallback.upload_store),
            s3_endpoint: self.s3_endpoint.or(fallback.s3_endpoint),
            s3_region: self.s3_region.or(fallback.s3_region),
        }
    }
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Listen address.
    pub bind: SocketAddr,
    /// State directory.
    pub data_dir: PathBuf,
    /// Database.
    pub database_url: DatabaseUrl,
    /// The organization's public address.
    pub realm: RealmAddress,
    /// Whether that address was configured (`--external-url`) rather than derived from `bind`.
    pub external_url_given: bool,
    /// Organization name on creation.
    pub realm_name: String,
    /// Owner address on creation.
    pub owner_email: String,
    /// Heartbeat interval of event queues.
    pub heartbeat: Duration,
    /// Idle lifetime of event queues.
    pub queue_timeout: Duration,
    /// SMTP relay, when mail leaves the machine.
    pub smtp_url: Option<url::Url>,
    /// Sender of outgoing mail.
    pub mail_from: String,
    /// The push notification service, when one is configured.
    pub push_service_url: Option<url::Url>,
    /// Default lifetime of invitation links, in minutes.
    pub invitation_link_validity_minutes: i64,
    /// The camo proxy outside media in messages loads through, when one is configured.
    pub camo: Option<parley_markdown::Camo>,
    /// How long an upload no message links is kept.
    pub unclaimed_upload_age: Duration,
    /// SQLite's `synchronous`.
    pub sqlite_synchronous: SqliteSynchronous,
    /// Whether PostgreSQL's event-producing writes commit in batches.
    pub postgres_group_commit: bool,
    /// The separate metrics address, when configured.
    pub metrics_bind: Option<SocketAddr>,
    /// The bearer token `/metrics` needs; with it, `/metrics` is also on the public port.
    pub metrics_token: Option<String>,
    /// The log format.
    pub log_format: LogFormat,
    /// Where other processes on the same PostgreSQL database reach this one, when configured.
    pub node_url: Option<String>,
    /// The Redis that keeps the rate limits, when configured.
    pub redis_url: Option<String>,
    /// The start of the rate-limit keys in Redis.
    pub redis_key_prefix: String,
    /// The BigBlueButton server for video calls, when one is configured.
    pub bigbluebutton: Option<parley_actions::calls::BigBlueButtonConfig>,
    /// Where uploads are kept.
    pub upload_store: UploadStore,
}

/// Where uploaded files are kept.
#[derive(Debug, Clone, Default)]
pub enum UploadStore {
    /// `<data-dir>/uploads`.
    #[default]
    Local,
    /// An S3-compatible bucket.
    S3(S3Config),
}

/// The upload store from `--upload-store`, `--s3-endpoint` and `--s3-region`.
fn upload_store(
    store: Option<String>,
    endpoint: Option<String>,
    region: Option<String>,
) -> anyhow::Result<UploadStore> {
    let endpoint = endpoint
        .map(|e| e.trim().to_owned())
        .filter(|e| !e.is_empty());
    let region = region
        .map(|r| r.trim().to_owned())
        .filter(|r| !r.is_empty());
    let store = store.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    let Some(text) = store.filter(|s| s != "local") else {
        if endpoint.is_some() || region.is_some() {
            bail!("--s3-endpoint and --s3-region need --upload-store s3://BUCKET[/PREFIX]");
        }
        return Ok(UploadStore::Local);
    };
    let mut config = S3Config::from_url(&text)
        .map_err(anyhow::Error::msg)
        .context("--upload-store must be local or s3://BUCKET[/PREFIX]")?;
    if let Some(raw) = endpoint {
        let parsed =
            url::Url::parse(&raw).with_context(|| format!("--s3-endpoint '{raw}' is not a URL"))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            bail!("--s3-endpoint '{raw}' must look like https://HOST[:PORT]");
        }
        config.endpoint = Some(raw.trim_end_matches('/').to_owned());
    }
    config.region = region;
    Ok(UploadStore::S3(config))
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Human-readable lines (coloured only on a terminal).
    #[default]
    Text,
    /// One JSON object per line, for log shippers.
    Json,
}

/// Resolves `host:port` (a literal address or a host name such as `localhost:9991`) to the first
/// address it names. `setting` names the flag in the error.
pub fn resolve_address(text: &str, setting: &str) -> anyhow::Result<SocketAddr> {
    use std::net::ToSocketAddrs;
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let wrong =
        || format!("{setting} '{text}' is not an address like 127.0.0.1:9991 or localhost:9991");
    let (host, port) = text.rsplit_once(':').with_context(wrong)?;
    if host.is_empty() || port.parse::<u16>().is_err() {
        bail!("{}", wrong());
    }
    let mut addrs = text
        .to_socket_addrs()
        .with_context(|| format!("{setting} '{text}': cannot resolve host '{host}'"))?;
    addrs
        .next()
        .with_context(|| format!("{setting} '{text}': host '{host}' has no address"))
}

/// The BigBlueButton server from its URL and secret, which come together or not at all.
fn bigbluebutton(
    url: Option<String>,
    secret: Option<String>,
) -> anyhow::Result<Option<parley_actions::calls::BigBlueButtonConfig>> {
    match (
        url.filter(|u| !u.trim().is_empty()),
        secret.filter(|s| !s.is_empty()),
    ) {
        (None, None) => Ok(None),
        (Some(raw), Some(secret)) => {
            let parsed = url::Url::parse(raw.trim())
                .with_context(|| format!("--bigbluebutton-url '{raw}' is not a URL"))?;
            if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
                bail!("--bigbluebutton-url '{raw}' must look like https://HOST/bigbluebutton/");
            }
            let url = format!("{}/", parsed.as_str().trim_end_matches('/'));
            Ok(Some(parley_actions::calls::BigBlueButtonConfig {
                url,
                secret,
            }))
        }
        (Some(_), None) => bail!("--bigbluebutton-url needs --bigbluebutton-secret"),
        (None, Some(_)) => bail!("--bigbluebutton-secret needs --bigbluebutton-url"),
    }
}

/// The camo proxy from its URL and key, which come together or not at all.
fn camo(url: Option<String>, key: Option<String>) -> anyhow::Result<Option<parley_markdown::Camo>> {
    let url = url.filter(|u| !u.trim().is_empty());
    let key = key.filter(|k| !k.is_empty());
    match (url, key) {
        (None, None) => Ok(None),
        (Some(raw), Some(key)) => {
            let parsed = url::Url::parse(raw.trim())
                .with_context(|| format!("--camo-url '{raw}' is not a URL"))?;
            if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
                bail!("--camo-url '{raw}' must look like https://HOST/PATH/");
            }
            Ok(Some(parley_markdown::Camo::new(parsed.as_str(), &key)))
        }
        (Some(_), None) => bail!("--camo-url needs --camo-key"),
        (None, Some(_)) => bail!("--camo-key needs --camo-url"),
    }
}

/// Reads the TOML file's settings.
fn read_file(path: &Path) -> anyhow::Result<Settings> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read config file {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("invalid config file {}", path.display()))
}

impl Config {
    /// Resolves flags and environment (`given`), the generic `DATABASE_URL` (`database_url_env`),
    /// the TOML file and the defaults into one configuration, or says which setting is wrong.
    pub fn resolve(given: Settings, database_url_env: Option<String>) -> anyhow::Result<Config> {
        let mut given = given;
        if given.database_url.is_none() {
            given.database_url = database_url_env.filter(|s| !s.trim().is_empty());
        }
        let settings = match &given.config {
            Some(path) => given.clone().or(read_file(path)?),
            None => given,
        };
        let bind_text = settings.bind.unwrap_or_else(|| "127.0.0.1:9991".to_owned());
        let bind = resolve_address(bind_text.trim(), "--bind")?;
        // A host name given to --bind is what clients use by default, not the address it
        // resolved to.
        let bind_shown = match bind_text.trim().parse::<SocketAddr>() {
            Ok(addr) => addr.to_string(),
            Err(_) => bind_text.trim().to_owned(),
        };
        let data_dir = settings.data_dir.unwrap_or_else(|| PathBuf::from("data"));
        let database_url = match settings.database_url {
            Some(url) => DatabaseUrl::parse(&url).context("--database-url")?,
            None => DatabaseUrl::Sqlite(data_dir.join("parley.db")),
        };
        let external_url_given = settings.external_url.is_some();
        let external = settings
            .external_url
            .unwrap_or_else(|| format!("http://{bind_shown}"));
        let realm = RealmAddress::parse(&external)
            .map_err(anyhow::Error::msg)
            .context("--external-url")?;
        let heartbeat = settings.heartbeat_seconds.unwrap_or(60);
        let queue_timeout = settings.queue_timeout_seconds.unwrap_or(600);
        if heartbeat == 0 {
            bail!("--heartbeat-seconds must be at least 1");
        }
        if queue_timeout == 0 {
            bail!("--queue-timeout-seconds must be at least 1");
        }
        let smtp_url = match settings.smtp_url.filter(|u| !u.trim().is_empty()) {
            Some(raw) => {
                let parsed = url::Url::parse(raw.trim())
                    .with_context(|| format!("--smtp-url '{raw}' is not a URL"))?;
                if parsed.scheme() != "smtp" || parsed.host_str().is_none() {
                    bail!("--smtp-url '{raw}' must look like smtp://HOST[:PORT]");
                }
                Some(parsed)
            }
            None => None,
        };
        let invitation_link_validity_minutes = settings
            .invitation_link_validity_minutes
            .unwrap_or(parley_domain::invite::DEFAULT_VALIDITY_MINUTES);
        if invitation_link_validity_minutes < 1 {
            bail!("--invitation-link-validity-minutes must be at least 1");
        }
        let push_service_url = match settings.push_service_url.filter(|u| !u.trim().is_empty()) {
            Some(raw) => {
                let parsed = url::Url::parse(raw.trim())
                    .with_context(|| format!("--push-service-url '{raw}' is not a URL"))?;
                if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
                    bail!("--push-service-url '{raw}' must look like https://HOST");
                }
                Some(parsed)
            }
            None => None,
        };
        let mail_from = settings
            .mail_from
            .unwrap_or_else(|| format!("noreply@{}", realm.host));
        let camo = camo(settings.camo_url, settings.camo_key)?;
        let bigbluebutton =
            bigbluebutton(settings.bigbluebutton_url, settings.bigbluebutton_secret)?;
        let unclaimed_weeks = settings.unclaimed_upload_weeks.unwrap_or(5);
        if unclaimed_weeks < 1 {
            bail!("--unclaimed-upload-weeks must be at least 1");
        }
        let sqlite_synchronous = match settings.sqlite_synchronous {
            None => SqliteSynchronous::Full,
            Some(text) => SqliteSynchronous::parse(&text).with_context(|| {
                format!("--sqlite-synchronous '{text}' is not one of normal, full")
            })?,
        };
        let postgres_group_commit = match settings.postgres_group_commit.as_deref() {
            None | Some("off") => false,
            Some("on") => true,
            Some(other) => bail!("--postgres-group-commit '{other}' is not one of on, off"),
        };
        let metrics_bind = match settings.metrics_bind.filter(|b| !b.trim().is_empty()) {
            Some(text) => Some(resolve_address(text.trim(), "--metrics-bind")?),
            None => None,
        };
        let metrics_token = settings.metrics_token.filter(|t| !t.trim().is_empty());
        if let Some(token) = &metrics_token {
            if token.trim().len() < 16 {
                bail!("--metrics-token must be at least 16 characters");
            }
        }
        let log_format = match settings.log_format.as_deref().map(str::trim) {
            None | Some("text") => LogFormat::Text,
            Some("json") => LogFormat::Json,
            Some(other) => bail!("--log-format '{other}' is not one of text, json"),
        };
        let upload_store = upload_store(
            settings.upload_store,
            settings.s3_endpoint,
            settings.s3_region,
        )?;
        let node_url = match settings.node_url.filter(|u| !u.trim().is_empty()) {
            Some(raw) => {
                let parsed = url::Url::parse(raw.trim())
                    .with_context(|| format!("--node-url '{raw}' is not a URL"))?;
                if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
                    bail!("--node-url '{raw}' must look like http://HOST:PORT");
                }
                Some(parsed.as_str().trim_end_matches('/').to_owned())
            }
            None => None,
        };
        let redis_url = match settings.redis_url.filter(|u| !u.trim().is_empty()) {
            Some(raw) => {
                let parsed = url::Url::parse(raw.trim())
                    .with_context(|| format!("--redis-url '{raw}' is not a URL"))?;
                let usable = match parsed.scheme() {
                    "redis" => parsed.host_str().is_some(),
                    "redis+unix" | "unix" => !parsed.path().is_empty(),
                    _ => false,
                };
                if !usable {
                    bail!(
                        "--redis-url '{raw}' must look like redis://HOST[:PORT][/DB] or \
                         redis+unix:///PATH"
                    );
                }
                Some(raw.trim().to_owned())
            }
            None => None,
        };
        let redis_key_prefix = settings
            .redis_key_prefix
            .filter(|p| !p.trim().is_empty())
            .map(|p| p.trim().to_owned())
            .unwrap_or_else(|| parley_actions::rate_limit::REDIS_KEY_PREFIX.to_owned());
        Ok(Config {
            upload_store,
            node_url,
            redis_url,
            redis_key_prefix,
            sqlite_synchronous,
            postgres_group_commit,
            metrics_bind,
            metrics_token: metrics_token.map(|t| t.trim().to_owned()),
            log_format,
            camo,
            bigbluebutton,
            unclaimed_upload_age: Duration::from_secs(unclaimed_weeks as u64 * 7 * 24 * 3600),
            push_service_url,
            smtp_url,
            mail_from,
            invitation_link_validity_minutes,
            bind,
            data_dir,
            database_url,
            realm,
            external_url_given,
            realm_name: settings.realm_name.unwrap_or_else(|| "Parley".to_owned()),
            owner_email: settings
                .owner_email
                .unwrap_or_else(|| "owner@parley.local".to_owned()),
            heartbeat: Duration::from_secs(heartbeat),
            queue_timeout: Duration::from_secs(queue_timeout),
        })
    }

    /// Where mail goes when no SMTP server is configured.
    pub fn outbox_dir(&self) -> PathBuf {
        self.data_dir.join("outbox")
    }

    /// Where event queues are kept across a restart.
    pub fn event_queues_file(&self) -> PathBuf {
        self.data_dir.join("event_queues.json")
    }

    /// Where the owner's one-time password is kept after the first start, in case standard output
    /// went nowhere; the operator deletes it once noted.
    pub fn owner_password_file(&self) -> PathBuf {
        self.data_dir.join("owner-password.txt")
    }

    /// The base URL other server processes reach this one at (forwarded long-polls).
    pub fn advertise_url(&self) -> String {
        match &self.node_url {
            Some(url) => url.clone(),
            None => format!("http://{}", self.bind),
        }
    }

    /// Where the owner's API credentials are written on the first start.
    pub fn owner_zuliprc(&self) -> PathBuf {
        self.data_dir.join("owner.zuliprc")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults() {
        let config = Config::resolve(Settings::default(), None).unwrap();
        assert_eq!(config.bind.to_string(), "127.0.0.1:9991");
        assert_eq!(
            config.database_url,
            DatabaseUrl::Sqlite("data/parley.db".into())
        );
        assert_eq!(config.realm.url, "http://127.0.0.1:9991");
        assert_eq!(config.heartbeat, Duration::from_secs(60));
        assert_eq!(config.queue_timeout, Duration::from_secs(600));
        assert_eq!(config.owner_zuliprc(), PathBuf::from("data/owner.zuliprc"));
    }

    #[test]
    fn flags_beat_database_url_env_beats_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("parley.toml");
        std::fs::write(
            &file,
            "bind = \"0.0.0.0:8080\"\nrealm_name = \"From file\"\ndatabase_url = \"sqlite://file.db\"\n",
        )
        .unwrap();
        let given = Settings {
            config: Some(file),
            realm_name: Some("From flag".into()),
            ..Settings::default()
        };
        let config = Config::resolve(given.clone(), None).unwrap();
        assert_eq!(config.bind.to_string(), "0.0.0.0:8080");
        assert_eq!(config.realm_name, "From flag");
        assert_eq!(config.database_url, DatabaseUrl::Sqlite("file.db".into()));
        let config = Config::resolve(given, Some("postgres://root@localhost/x".into())).unwrap();
        // A local server is reached without TLS unless the URL says otherwise.
        assert_eq!(
            config.database_url,
            DatabaseUrl::Postgres("postgres://root@localhost/x?sslmode=disable".into())
        );
    }

    #[test]
    fn invitation_link_validity_has_a_default_and_a_minimum() {
        let config = Config::resolve(Settings::default(), None).unwrap();
        assert_eq!(config.invitation_link_validity_minutes, 14400);
        let given = Settings {
            invitation_link_validity_minutes: Some(90),
            ..Settings::default()
        };
        assert_eq!(
            Config::resolve(given, None)
                .unwrap()
                .invitation_link_validity_minutes,
            90
        );
        let zero = Settings {
            invitation_link_validity_minutes: Some(0),
            ..Settings::default()
        };
        let err = format!("{:#}", Config::resolve(zero, None).unwrap_err());
        assert!(err.contains("--invitation-link-validity-minutes"), "{err}");
    }

    #[test]
    fn wrong_settings_are_named() {
        let bad_bind = Settings {
            bind: Some("nowhere".into()),
            ..Settings::default()
        };
        assert!(format!("{:#}", Config::resolve(bad_bind, None).unwrap_err()).contains("--bind"));
        let bad_url = Settings {
            database_url: Some("mysql://x".into()),
            ..Settings::default()
        };
        let err = format!("{:#}", Config::resolve(bad_url, None).unwrap_err());
        assert!(
            err.contains("--database-url") && err.contains("mysql"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("typo.toml");
        std::fs::write(&file, "bnd = \"x\"\n").unwrap();
        let typo = Settings {
            config: Some(file),
            ..Settings::default()
        };
        assert!(Config::resolve(typo, None).is_err());
    }

    #[test]
    fn camo_needs_url_and_key_and_cleanup_has_a_default() {
        let config = Config::resolve(Settings::default(), None).unwrap();
        assert!(config.camo.is_none());
        assert_eq!(config.unclaimed_upload_age.as_secs(), 5 * 7 * 24 * 3600);
        let given = Settings {
            camo_url: Some("https://camo.example.com/external_content/".into()),
            camo_key: Some("secret".into()),
            unclaimed_upload_weeks: Some(2),
            ..Settings::default()
        };
        let config = Config::resolve(given, None).unwrap();
        let camo = config.camo.unwrap();
        assert!(camo
            .url("https://x.org/a.mp4")
            .starts_with("https://camo.example.com/external_content/"));
        assert_eq!(config.unclaimed_upload_age.as_secs(), 2 * 7 * 24 * 3600);
        for (url, key, message) in [
            (
                Some("https://camo.example.com/"),
                None,
                "--camo-url needs --camo-key",
            ),
            (None, Some("k"), "--camo-key needs --camo-url"),
            (Some("ftp://camo"), Some("k"), "--camo-url"),
        ] {
            let bad = Settings {
                camo_url: url.map(str::to_owned),
                camo_key: key.map(str::to_owned),
                ..Settings::default()
            };
            let err = format!("{:#}", Config::resolve(bad, None).unwrap_err());
            assert!(err.contains(message), "{err}");
        }
        let bad = Settings {
            unclaimed_upload_weeks: Some(0),
            ..Settings::default()
        };
        assert!(Config::resolve(bad, None).is_err());
    }

    #[test]
    fn bigbluebutton_needs_url_and_secret() {
        assert!(Config::resolve(Settings::default(), None)
            .unwrap()
            .bigbluebutton
            .is_none());
        let given = Settings {
            bigbluebutton_url: Some("https://bbb.example.com/bigbluebutton".into()),
            bigbluebutton_secret: Some("s".into()),
            ..Settings::default()
        };
        let bbb = Config::resolve(given, None).unwrap().bigbluebutton.unwrap();
        assert_eq!(bbb.url, "https://bbb.example.com/bigbluebutton/");
        let half = Settings {
            bigbluebutton_url: Some("https://bbb.example.com/".into()),
            ..Settings::default()
        };
        let err = format!("{:#}", Config::resolve(half, None).unwrap_err());
        assert!(err.contains("--bigbluebutton-secret"), "{err}");
    }

    #[test]
    fn upload_store_is_local_or_a_bucket() {
        let config = Config::resolve(Settings::default(), None).unwrap();
        assert!(matches!(config.upload_store, UploadStore::Local));
        let given = Settings {
            upload_store: Some("s3://parley-files/prod/uploads".into()),
            s3_endpoint: Some("http://127.0.0.1:9000/".into()),
            s3_region: Some("eu-west-1".into()),
            ..Settings::default()
        };
        let UploadStore::S3(s3) = Config::resolve(given, None).unwrap().upload_store else {
            panic!("not S3");
        };
        assert_eq!(s3.bucket, "parley-files");
        assert_eq!(s3.prefix, "prod/uploads");
        assert_eq!(s3.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(s3.region.as_deref(), Some("eu-west-1"));
        for (bad, named) in [
            (
                Settings {
                    upload_store: Some("/srv/uploads".into()),
                    ..Settings::default()
                },
                "--upload-store",
            ),
            (
                Settings {
                    upload_store: Some("s3://Bad_Bucket".into()),
                    ..Settings::default()
                },
                "--upload-store",
            ),
            (
                Settings {
                    s3_endpoint: Some("http://127.0.0.1:9000".into()),
                    ..Settings::default()
                },
                "--s3-endpoint",
            ),
            (
                Settings {
                    upload_store: Some("s3://files".into()),
                    s3_endpoint: Some("ftp://x".into()),
                    ..Settings::default()
                },
                "--s3-endpoint",
            ),
        ] {
            let err = format!("{:#}", Config::resolve(bad, None).unwrap_err());
            assert!(err.contains(named), "{err}");
        }
    }

    #[test]
    fn push_service_url_is_optional_and_checked() {
        assert!(Config::resolve(Settings::default(), None)
            .unwrap()
            .push_service_url
            .is_none());
        let given = Settings {
            push_service_url: Some("https://push.example.com/".into()),
            ..Settings::default()
        };
        let config = Config::resolve(given, None).unwrap();
        assert_eq!(
            config.push_service_url.unwrap().as_str(),
            "https://push.example.com/"
        );
        let bad = Settings {
            push_service_url: Some("ftp://push".into()),
            ..Settings::default()
        };
        let err = format!("{:#}", Config::resolve(bad, None).unwrap_err());
        assert!(err.contains("--push-service-url"), "{err}");
    }

    #[test]
    fn redis_url_is_optional_and_checked() {
        assert!(Config::resolve(Settings::default(), None)
            .unwrap()
            .redis_url
            .is_none());
        for good in [
            "redis://127.0.0.1:6379/0",
            "redis://:secret@cache.internal",
            "redis+unix:///run/redis.sock",
        ] {
            let given = Settings {
                redis_url: Some(format!(" {good} ")),
                ..Settings::default()
            };
            let config = Config::resolve(given, None).unwrap();
            assert_eq!(config.redis_url.as_deref(), Some(good));
            assert_eq!(config.redis_key_prefix, "parley:ratelimit:");
        }
        let given = Settings {
            redis_key_prefix: Some("staging:limits:".into()),
            ..Settings::default()
        };
        let config = Config::resolve(given, None).unwrap();
        assert_eq!(config.redis_key_prefix, "staging:limits:");
        for bad in ["http://cache", "redis://", "not a url"] {
            let given = Settings {
                redis_url: Some(bad.into()),
                ..Settings::default()
            };
            let err = format!("{:#}", Config::resolve(given, None).unwrap_err());
            assert!(err.contains("--redis-url"), "{bad}: {err}");
        }
        // From the file too.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("parley.toml");
        std::fs::write(&file, "redis_url = \"redis://10.0.0.5\"\n").unwrap();
        let given = Settings {
            config: Some(file),
            ..Settings::default()
        };
        let config = Config::resolve(given, None).unwrap();
        assert_eq!(config.redis_url.as_deref(), Some("redis://10.0.0.5"));
    }

    #[test]
    fn durability_metrics_logs_and_host_names() {
        let config = Config::resolve(Settings::default(), None).unwrap();
        assert_eq!(config.sqlite_synchronous, SqliteSynchronous::Full);
        assert!(!config.postgres_group_commit);
        assert_eq!(config.log_format, LogFormat::Text);
        assert!(config.metrics_bind.is_none() && config.metrics_token.is_none());
        let given = Settings {
            sqlite_synchronous: Some("normal".into()),
            postgres_group_commit: Some("on".into()),
            log_format: Some("json".into()),
            metrics_bind: Some("127.0.0.1:9992".into()),
            metrics_token: Some("0123456789abcdef".into()),
            bind: Some("localhost:9991".into()),
            ..Settings::default()
        };
        let config = Config::resolve(given, None).unwrap();
        assert_eq!(config.sqlite_synchronous, SqliteSynchronous::Normal);
        assert!(config.postgres_group_commit);
        assert_eq!(config.log_format, LogFormat::Json);
        assert_eq!(config.metrics_bind.unwrap().to_string(), "127.0.0.1:9992");
        assert!(config.bind.ip().is_loopback());
        assert_eq!(config.realm.url, "http://localhost:9991");
        for (bad, named) in [
            (
                Settings {
                    sqlite_synchronous: Some("off".into()),
                    ..Settings::default()
                },
                "--sqlite-synchronous",
            ),
            (
                Settings {
                    postgres_group_commit: Some("yes".into()),
                    ..Settings::default()
                },
                "--postgres-group-commit",
            ),
            (
                Settings {
                    metrics_token: Some("short".into()),
                    ..Settings::default()
                },
                "--metrics-token",
            ),
            (
                Settings {
                    log_format: Some("xml".into()),
                    ..Settings::default()
                },
                "--log-format",
            ),
            (
                Settings {
                    bind: Some("localhost".into()),
                    ..Settings::default()
                },
                "--bind",
            ),
        ] {
            let err = format!("{:#}", Config::resolve(bad, None).unwrap_err());
            assert!(err.contains(named), "{err}");
        }
    }
}

//! Rate limits, as the reference server applies them: API requests per user, and failed password
//! logins per username. Token buckets: each key refills at `max / window` per second up to
//! `max`, so bursts are allowed and a steady client never waits longer than it must. In memory
//! for one process; shared by several processes serving one database, so that a client
//! spreading its requests over them gets the same allowance as with one: in Redis when one is
//! configured ([`RateLimits::in_redis`], `redis_buckets`), else in PostgreSQL
//! ([`RateLimits::shared_in`]). When the shared store cannot be reached, each process limits
//! in its own memory until it can.
//!
//! In PostgreSQL a process takes several tokens at once (a twentieth of the allowance, up to
//! [`MAX_LEASE`]) and spends them itself, so a busy client's requests do not each wait for a
//! statement: a lease. Tokens only ever come out of the shared bucket, so no client gets more
//! than its allowance; a client spreading its requests over several processes may be limited
//! up to a lease's worth early, by tokens another process holds for it.

mod redis_buckets;

pub use redis_buckets::{RedisBuckets, RedisUnavailable, DEFAULT_PREFIX as REDIS_KEY_PREFIX};

use parley_domain::{ErrorCode, RequestError};
use parley_storage::rate_buckets::Taken;
use parley_storage::Db;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When a map holds more keys than this, full (idle) buckets are dropped, bounding memory.
const PRUNE_ABOVE: usize = 10_000;

/// The most tokens one take from a shared bucket in PostgreSQL leases to this process.
const MAX_LEASE: u32 = 16;

/// Where the buckets every process shares are kept.
enum Store {
    /// The `rate_limit_buckets` table of a PostgreSQL database.
    Postgres(Db),
    /// A Redis server.
    Redis(Arc<RedisBuckets>),
}

/// One limit: at most `max` events per `window`, per key.
pub struct RateLimiter {
    max: f64,
    per_second: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
    /// Where the buckets every process shares are kept, and this limit's name there.
    shared: Option<(Store, &'static str)>,
    /// Tokens taken from the shared buckets in PostgreSQL and not spent yet, per key.
    leased: Mutex<HashMap<String, u32>>,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter")
            .field("max", &self.max)
            .field("per_second", &self.per_second)
            .field(
                "shared",
                &self.shared.as_ref().map(|(store, name)| {
                    let kind = match store {
                        Store::Postgres(_) => "postgres",
                        Store::Redis(_) => "redis",
                    };
                    (kind, name)
                }),
            )
            .finish()
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl RateLimiter {
    /// A limit of `max` events per `window` for each key.
    pub fn new(max: u32, window: Duration) -> Self {
        let max = f64::from(max.max(1));
        RateLimiter {
            max,
            per_second: max / window.as_secs_f64().max(0.001),
            buckets: Mutex::new(HashMap::new()),
            shared: None,
            leased: Mutex::new(HashMap::new()),
        }
    }

    /// The same limit kept in `db` under `name` when `db` is PostgreSQL (several processes
    /// may serve it); unchanged on SQLite, and when the limit is already kept in Redis.
    pub fn shared_in(mut self, db: &Db, name: &'static str) -> Self {
        let in_redis = matches!(self.shared, Some((Store::Redis(_), _)));
        if !in_redis && matches!(db.url(), parley_storage::DatabaseUrl::Postgres(_)) {
            self.shared = Some((Store::Postgres(db.clone()), name));
        }
        self
    }

    /// The same limit kept in Redis under `name`, whatever the database.
    pub fn in_redis(mut self, redis: Arc<RedisBuckets>, name: &'static str) -> Self {
        self.shared = Some((Store::Redis(redis), name));
        self
    }

    /// Uses one event of `key`'s allowance, or fails with `RATE_LIMIT_HIT` and `retry-after`:
    /// in the shared buckets when there are some (falling back to this process's own when
    /// their store cannot be reached), else in memory.
    pub async fn take(&self, key: &str) -> Result<(), RequestError> {
        let Some((store, name)) = &self.shared else {
            return self.hit(key);
        };
        if self.max >= f64::from(u32::MAX) {
            return Ok(());
        }
        let (max, per_second) = (self.max, self.per_second);
        match store {
            Store::Postgres(db) => {
                if self.spend_leased(key) {
                    return Ok(());
                }
                let bucket = format!("{name}:{key}");
                let want = self.lease_size();
                let taken = db
                    .run(move |conn| {
                        parley_storage::rate_buckets::take_tokens(
                            conn, &bucket, max, per_second, want,
                        )
                    })
                    .await;
                match taken {
                    Ok(Taken::Tokens(granted)) => {
                        self.lease(key, granted.saturating_sub(1));
                        Ok(())
                    }
                    Ok(Taken::Wait(wait)) => Err(rate_limited(wait)),
                    Err(e) => {
                        tracing::warn!(error = %e, "shared rate limit unavailable; limiting in memory");
                        self.hit(key)
                    }
                }
            }
            // Failures are logged (sparingly) by the Redis buckets themselves.
            Store::Redis(redis) => match redis.take(name, key, max, per_second).await {
                Ok(None) => Ok(()),
                Ok(Some(wait)) => Err(rate_limited(wait)),
                Err(_) => self.hit(key),
            },
        }
    }

    /// Gives back one event of `key`'s allowance, wherever [`RateLimiter::take`] took it.
    pub async fn give_back(&self, key: &str) {
        let Some((store, name)) = &self.shared else {
            return self.refund(key);
        };
        let max = self.max;
        match store {
            // The token stays out of the shared bucket, leased to this process.
            Store::Postgres(_) => self.lease(key, 1),
            Store::Redis(redis) => {
                if redis.give(name, key, max, self.per_second).await.is_err() {
                    self.refund(key);
                }
            }
        }
    }

    /// How many tokens a take from a shared bucket in PostgreSQL asks for: a twentieth of the
    /// allowance, so that tokens another process holds for a client are a small part of it;
    /// one (no lease) for small allowances such as failed logins.
    fn lease_size(&self) -> u32 {
        // At most MAX_LEASE, so the cast cannot truncate.
        (self.max / 20.0).floor().clamp(1.0, f64::from(MAX_LEASE)) as u32
    }

    /// Spends one of the tokens leased for `key`, if there is one.
    fn spend_leased(&self, key: &str) -> bool {
        let mut leased = self.leased.lock().unwrap_or_else(|p| p.into_inner());
        match leased.get_mut(key) {
            Some(tokens) if *tokens > 0 => {
                *tokens -= 1;
                true
            }
            _ => false,
        }
    }

    /// Keeps `tokens` more for `key`, up to a lease's size. Leases are dropped when too many
    /// keys hold one (their tokens stay out of the shared buckets until those refill).
    fn lease(&self, key: &str, tokens: u32) {
        if tokens == 0 {
            return;
        }
        let mut leased = self.leased.lock().unwrap_or_else(|p| p.into_inner());
        if leased.len() > PRUNE_ABOVE {
            leased.retain(|_, held| *held > 0);
            if leased.len() > PRUNE_ABOVE {
                leased.clear();
            }
        }
        let held = leased.entry(key.to_owned()).or_insert(0);
        *held = (*held + tokens).min(self.lease_size());
    }

    fn refilled(&self, bucket: Bucket, now: Instant) -> Bucket {
        let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
        Bucket {
            tokens: (bucket.tokens + elapsed * self.per_second).min(self.max),
            updated: now,
        }
    }

    /// Seconds until `key` may act again, without using anything; 0 when it may act now.
    pub fn wait_seconds(&self, key: &str) -> f64 {
        let now = Instant::now();
        let buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        match buckets.get(key) {
            Some(bucket) => {
                let bucket = self.refilled(*bucket, now);
                if bucket.tokens >= 1.0 {
                    0.0
                } else {
                    (1.0 - bucket.tokens) / self.per_second
                }
            }
            None => 0.0,
        }
    }

    /// Uses one event of `key`'s allowance, or fails with `RATE_LIMIT_HIT` and `retry-after`.
    pub fn hit(&self, key: &str) -> Result<(), RequestError> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() > PRUNE_ABOVE {
            let max = self.max;
            buckets.retain(|_, b| {
                b.tokens + now.saturating_duration_since(b.updated).as_secs_f64() * self.per_second
                    < max
            });
        }
        let bucket = buckets.entry(key.to_owned()).or_insert(Bucket {
            tokens: self.max,
            updated: now,
        });
        *bucket = self.refilled(*bucket, now);
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(rate_limited((1.0 - bucket.tokens) / self.per_second))
        }
    }

    /// Gives back one event of `key`'s allowance (an attempt that turned out not to count).
    pub fn refund(&self, key: &str) {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bucket) = buckets.get_mut(key) {
            let mut refilled = self.refilled(*bucket, now);
            refilled.tokens = (refilled.tokens + 1.0).min(self.max);
            *bucket = refilled;
        }
    }
}

/// The reference server's rate-limit error.
pub fn rate_limited(retry_after: f64) -> RequestError {
    RequestError::new(ErrorCode::RateLimitHit, "API usage exceeded rate limit")
        .with("retry-after", retry_after)
}

/// How far each event queue's client has been served, so that `GET /events` can tell a client
/// that follows its queue (each poll acknowledges everything the last one returned) from one
/// that re-reads it. Following long-polls are free; see [`crate::event_queues::get_events`].
#[derive(Debug, Default)]
pub struct PollLedger {
    served: Mutex<HashMap<String, (i64, Instant)>>,
}

/// Entries untouched this long are dropped when the ledger is pruned; a queue idle that long
/// has been collected by the event engine.
const LEDGER_IDLE: Duration = Duration::from_secs(60 * 60);

impl PollLedger {
    /// Whether a poll of `queue_id` acknowledging `last_event_id` follows the queue: it
    /// acknowledges every event served before (or nothing was served yet).
    pub fn follows(&self, queue_id: &str, last_event_id: Option<i64>) -> bool {
        let served = self.served.lock().unwrap_or_else(|p| p.into_inner());
        match (served.get(queue_id), last_event_id) {
            (None, _) => true,
            (Some((highest, _)), Some(last)) => last >= *highest,
            (Some(_), None) => false,
        }
    }

    /// Records that a poll of `queue_id` returned events up to `highest`.
    pub fn served(&self, queue_id: &str, highest: i64) {
        let now = Instant::now();
        let mut served = self.served.lock().unwrap_or_else(|p| p.into_inner());
        if served.len() > PRUNE_ABOVE {
            served.retain(|_, (_, at)| now.saturating_duration_since(*at) < LEDGER_IDLE);
        }
        let entry = served.entry(queue_id.to_owned()).or_insert((highest, now));
        *entry = (entry.0.max(highest), now);
    }

    /// Forgets a deleted queue.
    pub fn forget(&self, queue_id: &str) {
        let mut served = self.served.lock().unwrap_or_else(|p| p.into_inner());
        served.remove(queue_id);
    }
}

/// The limits a server applies.
#[derive(Debug)]
pub struct RateLimits {
    /// API requests per authenticated user.
    pub api_by_user: RateLimiter,
    /// Failed password logins per account (both its addresses), or per address that matches
    /// no account. Every attempt is counted before the password is checked; a correct one is
    /// given back.
    pub login_failures_by_username: RateLimiter,
    /// How far each event queue was served, for metering `GET /events`.
    pub polls: PollLedger,
}

impl RateLimits {
    /// The same limits kept in `db` when it is PostgreSQL (see [`RateLimiter::shared_in`]),
    /// unless they are kept in Redis.
    pub fn shared_in(self, db: &Db) -> Self {
        RateLimits {
            api_by_user: self.api_by_user.shared_in(db, "api"),
            login_failures_by_username: self.login_failures_by_username.shared_in(db, "login"),
            polls: self.polls,
        }
    }

    /// The same limits kept in Redis (see [`RateLimiter::in_redis`]).
    pub fn in_redis(self, redis: Arc<RedisBuckets>) -> Self {
        RateLimits {
            api_by_user: self.api_by_user.in_redis(redis.clone(), "api"),
            login_failures_by_username: self.login_failures_by_username.in_redis(redis, "login"),
            polls: self.polls,
        }
    }
}

impl Default for RateLimits {
    /// The reference server's defaults: 200 requests a minute per user, 5 failed logins per
    /// username in 30 minutes.
    fn default() -> Self {
        RateLimits {
            api_by_user: RateLimiter::new(200, Duration::from_secs(60)),
            login_failures_by_username: RateLimiter::new(5, Duration::from_secs(30 * 60)),
            polls: PollLedger::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allows_up_to_max_then_refuses_with_retry_after() {
        let limiter = RateLimiter::new(3, Duration::from_secs(60));
        for _ in 0..3 {
            limiter.hit("a").unwrap();
        }
        let err = limiter.hit("a").unwrap_err();
        assert_eq!(err.code, ErrorCode::RateLimitHit);
        assert_eq!(err.status, 429);
        let retry = err.data["retry-after"].as_f64().unwrap();
        assert!(retry > 0.0 && retry <= 20.0, "{retry}");
        assert!(limiter.wait_seconds("a") > 0.0);
        // Keys are independent.
        limiter.hit("b").unwrap();
        assert_eq!(limiter.wait_seconds("b"), 0.0);
    }

    #[test]
    fn refills_over_time() {
        let limiter = RateLimiter::new(2, Duration::from_millis(20));
        limiter.hit("a").unwrap();
        limiter.hit("a").unwrap();
        assert!(limiter.hit("a").is_err());
        std::thread::sleep(Duration::from_millis(30));
        limiter.hit("a").unwrap();
    }

    #[test]
    fn refunds_give_back_one_event_up_to_max() {
        let limiter = RateLimiter::new(2, Duration::from_secs(60));
        limiter.hit("a").unwrap();
        limiter.hit("a").unwrap();
        assert!(limiter.hit("a").is_err());
        limiter.refund("a");
        limiter.hit("a").unwrap();
        assert!(limiter.hit("a").is_err());
        // Never above the maximum.
        limiter.refund("b");
        limiter.hit("c").unwrap();
        limiter.refund("c");
        limiter.refund("c");
        limiter.hit("c").unwrap();
        limiter.hit("c").unwrap();
        assert!(limiter.hit("c").is_err());
    }

    #[test]
    fn the_ledger_tells_following_polls_from_re_reads() {
        let ledger = PollLedger::default();
        assert!(ledger.follows("q", None));
        assert!(ledger.follows("q", Some(-1)));
        ledger.served("q", 4);
        assert!(ledger.follows("q", Some(4)));
        assert!(!ledger.follows("q", Some(3)));
        assert!(!ledger.follows("q", None));
        ledger.served("q", 2);
        assert!(!ledger.follows("q", Some(3)), "never lowered");
        ledger.forget("q");
        assert!(ledger.follows("q", None));
    }
}

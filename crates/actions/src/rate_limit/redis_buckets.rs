//! Token buckets in Redis, for several processes behind one balancer (`--redis-url`). Each
//! take or give-back is one Lua script run atomically by Redis (`EVALSHA`, loaded again after
//! a Redis restart): it refills the bucket from the time Redis last touched it, by Redis's
//! clock (`TIME`), so the processes' clocks do not matter, takes or gives one token, and sets
//! the key to expire when the bucket would be full again; a full bucket is no key at all. The
//! semantics are those of the in-memory and PostgreSQL buckets (see the parent module).
//!
//! When Redis cannot be reached (or does not answer within [`TIMEOUT`]), the caller limits in
//! its own memory: one warning per [`WARN_EVERY`] says so, and Redis is left alone for
//! [`BACK_OFF`] so that requests do not each wait for a connection that will fail.

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The prefix of the keys the server keeps its buckets under: `<prefix><limit>:<key>`.
pub const DEFAULT_PREFIX: &str = "parley:ratelimit:";

/// How long one call to Redis (connecting included) may take before the process limits in
/// memory instead.
pub const TIMEOUT: Duration = Duration::from_millis(500);

/// After a failure, how long the process limits in memory before it tries Redis again.
pub const BACK_OFF: Duration = Duration::from_secs(1);

/// At most one warning about Redis being unreachable this often.
pub const WARN_EVERY: Duration = Duration::from_secs(60);

/// The bucket script. KEYS[1] is the bucket; ARGV: the maximum, the refill per second, and
/// `take` or `give`. Returns `{allowed, tokens}`: 1 when a token was taken (or given back), 0
/// when there was none to take; `tokens` (a string: Lua numbers become integers in replies)
/// is what the bucket holds afterwards. Times are microseconds of Redis's clock; a bucket is
/// stored as a hash of `t` (tokens) and `u` (when they were counted).
const SCRIPT: &str = r"
local max = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local stored = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = tonumber(stored[1])
local at = tonumber(stored[2])
if tokens == nil or at == nil then
  if ARGV[3] == 'give' then
    return {1, string.format('%.17g', max)}
  end
  tokens = max
  at = now
end
tokens = math.min(max, tokens + math.max(0, now - at) * rate / 1000000)
local allowed = 0
if ARGV[3] == 'give' then
  tokens = math.min(max, tokens + 1)
  allowed = 1
elseif tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
if tokens >= max then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'u', string.format('%.17g', now))
  redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((max - tokens) / rate * 1000)))
end
return {allowed, string.format('%.17g', tokens)}
";

/// Why Redis could not be used; the caller limits in memory.
#[derive(Debug, thiserror::Error)]
pub enum RedisUnavailable {
    /// The URL is not one Redis understands.
    #[error("invalid Redis URL: {0}")]
    Url(String),
    /// Redis failed or was left alone after a recent failure.
    #[error("{0}")]
    Down(String),
}

/// The buckets of every limit of one process, kept in one Redis. Clone-free: share it in an
/// `Arc`. Connecting is lazy and reconnects after failures, so a process starts (and limits
/// in memory) while Redis is down, and uses it once it is back.
pub struct RedisBuckets {
    manager: ConnectionManager,
    script: redis::Script,
    prefix: String,
    /// Where Redis is, without a password, for logs.
    shown: String,
    health: Mutex<Health>,
}

#[derive(Default)]
struct Health {
    /// Whether the last call failed.
    down: bool,
    /// Redis is not tried before this instant (a recent failure).
    skip_until: Option<Instant>,
    /// When the last warning was logged, and how many failures went unreported since.
    warned_at: Option<Instant>,
    unreported: u64,
}

impl std::fmt::Debug for RedisBuckets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBuckets")
            .field("at", &self.shown)
            .field("prefix", &self.prefix)
            .finish()
    }
}

/// What a take found, in the shape the other backends return: `None` when a token was taken,
/// else the seconds until one is there.
pub(crate) type Taken = Option<f64>;

impl RedisBuckets {
    /// Buckets in the Redis at `url` (`redis://[:PASSWORD@]HOST[:PORT][/DB]`, or
    /// `redis+unix:///PATH`), under keys starting with `prefix`. Does not connect yet; fails
    /// only on a URL that cannot be used. Must be called inside a tokio runtime.
    pub fn open(url: &str, prefix: &str) -> Result<RedisBuckets, RedisUnavailable> {
        let client = redis::Client::open(url).map_err(|e| RedisUnavailable::Url(e.to_string()))?;
        let shown = shown(url);
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(200));
        let manager = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(|e| RedisUnavailable::Url(e.to_string()))?;
        Ok(RedisBuckets {
            manager,
            script: redis::Script::new(SCRIPT),
            prefix: prefix.to_owned(),
            shown,
            health: Mutex::new(Health::default()),
        })
    }

    /// Where the buckets are, without credentials.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Whether Redis answers a `PING` now (within [`TIMEOUT`]).
    pub async fn ping(&self) -> Result<(), RedisUnavailable> {
        let mut conn = self.manager.clone();
        let answer = tokio::time::timeout(
            TIMEOUT * 2,
            redis::cmd("PING").query_async::<String>(&mut conn),
        )
        .await;
        match answer {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(RedisUnavailable::Down(e.to_string())),
            Err(_) => Err(RedisUnavailable::Down("no answer in time".into())),
        }
    }

    /// The key of `key`'s bucket for the limit `name`.
    fn key(&self, name: &str, key: &str) -> String {
        format!("{}{name}:{key}", self.prefix)
    }

    /// Takes one token of `key`'s bucket for the limit `name` (`max` tokens, refilled at
    /// `per_second`).
    pub(crate) async fn take(
        &self,
        name: &str,
        key: &str,
        max: f64,
        per_second: f64,
    ) -> Result<Taken, RedisUnavailable> {
        let (allowed, tokens) = self.run(name, key, max, per_second, "take").await?;
        Ok(match allowed {
            true => None,
            false => Some((1.0 - tokens) / per_second.max(f64::MIN_POSITIVE)),
        })
    }

    /// Gives one token back to `key`'s bucket for the limit `name`, up to `max`.
    pub(crate) async fn give(
        &self,
        name: &str,
        key: &str,
        max: f64,
        per_second: f64,
    ) -> Result<(), RedisUnavailable> {
        self.run(name, key, max, per_second, "give").await?;
        Ok(())
    }

    async fn run(
        &self,
        name: &str,
        key: &str,
        max: f64,
        per_second: f64,
        op: &str,
    ) -> Result<(bool, f64), RedisUnavailable> {
        if self.skipping() {
            return Err(RedisUnavailable::Down(
                "failed recently; trying again shortly".into(),
            ));
        }
        let mut conn = self.manager.clone();
        let mut invocation = self.script.key(self.key(name, key));
        invocation.arg(max).arg(per_second).arg(op);
        let answer = tokio::time::timeout(
            TIMEOUT * 2,
            invocation.invoke_async::<(i64, String)>(&mut conn),
        )
        .await;
        let failure = match answer {
            Ok(Ok((allowed, tokens))) => match tokens.parse::<f64>() {
                Ok(tokens) => {
                    self.recovered();
                    return Ok((allowed == 1, tokens));
                }
                Err(_) => format!("the bucket script returned {tokens:?}"),
            },
            Ok(Err(e)) => e.to_string(),
            Err(_) => "no answer in time".to_owned(),
        };
        self.failed(&failure);
        Err(RedisUnavailable::Down(failure))
    }

    fn skipping(&self) -> bool {
        let health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        health.skip_until.is_some_and(|t| Instant::now() < t)
    }

    /// Records a failure: Redis is left alone for [`BACK_OFF`]; warns at most once per
    /// [`WARN_EVERY`].
    fn failed(&self, why: &str) {
        let now = Instant::now();
        let mut health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        health.down = true;
        health.skip_until = Some(now + BACK_OFF);
        let due = health
            .warned_at
            .is_none_or(|at| now.saturating_duration_since(at) >= WARN_EVERY);
        if due {
            tracing::warn!(
                redis = %self.shown,
                error = %why,
                failures_since_last_warning = health.unreported,
                "Redis rate limits unavailable; limiting in this process's memory"
            );
            health.warned_at = Some(now);
            health.unreported = 0;
        } else {
            health.unreported += 1;
        }
    }

    fn recovered(&self) {
        let mut health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        if health.down {
            // Warnings stay rate-limited across a flapping connection.
            tracing::info!(redis = %self.shown, "Redis rate limits available again");
            health.down = false;
            health.skip_until = None;
        }
    }
}

/// `url` without its password, for logs.
fn shown(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            parsed.to_string()
        }
        Err(_) => "(unparsable URL)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::rate_limit::RateLimiter;
    use parley_domain::ErrorCode;
    use std::sync::Arc;

    /// The Redis of the tests, from `TEST_REDIS_URL`; without it the test says so and passes.
    fn test_redis(test: &str) -> Option<String> {
        match std::env::var("TEST_REDIS_URL") {
            Ok(url) if !url.trim().is_empty() => Some(url),
            _ => {
                eprintln!("{test}: skipped, TEST_REDIS_URL is not set");
                None
            }
        }
    }

    /// A key prefix of this test alone, so tests running at once (or again) do not meet.
    fn prefix(test: &str) -> String {
        format!("parley-test:{test}:{}:", uuid::Uuid::new_v4().simple())
    }

    /// Two processes' buckets on one Redis and one prefix.
    fn two_nodes(url: &str, prefix: &str) -> (Arc<RedisBuckets>, Arc<RedisBuckets>) {
        (
            Arc::new(RedisBuckets::open(url, prefix).unwrap()),
            Arc::new(RedisBuckets::open(url, prefix).unwrap()),
        )
    }

    fn retry_after(err: &parley_domain::RequestError) -> f64 {
        assert_eq!(err.code, ErrorCode::RateLimitHit);
        assert_eq!(err.status, 429);
        err.data["retry-after"].as_f64().unwrap()
    }

    #[tokio::test]
    async fn two_nodes_share_one_allowance_with_retry_after() {
        let Some(url) = test_redis("two_nodes_share_one_allowance_with_retry_after") else {
            return;
        };
        let (a, b) = two_nodes(&url, &prefix("share"));
        let one = RateLimiter::new(4, Duration::from_secs(60)).in_redis(a, "api");
        let two = RateLimiter::new(4, Duration::from_secs(60)).in_redis(b, "api");
        one.take("user1").await.unwrap();
        two.take("user1").await.unwrap();
        one.take("user1").await.unwrap();
        two.take("user1").await.unwrap();
        // Four taken over two nodes: both refuse the fifth, with the wait for one token
        // (60 s / 4 = 15 s a token).
        for node in [&one, &two] {
            let err = node.take("user1").await.unwrap_err();
            let wait = retry_after(&err);
            assert!(wait > 14.0 && wait <= 15.0, "{wait}");
        }
        // Another key, and the same key under another limit's name, are untouched.
        one.take("user2").await.unwrap();
        let (c, _) = two_nodes(&url, &prefix("share-other"));
        RateLimiter::new(4, Duration::from_secs(60))
            .in_redis(c, "api")
            .take("user1")
            .await
            .unwrap();
        // A token given back on one node is taken on the other, once.
        one.give_back("user1").await;
        two.take("user1").await.unwrap();
        assert!(one.take("user1").await.is_err());
    }

    #[tokio::test]
    async fn buckets_refill_and_expire_when_full() {
        let Some(url) = test_redis("buckets_refill_and_expire_when_full") else {
            return;
        };
        let prefix = prefix("refill");
        let (a, b) = two_nodes(&url, &prefix);
        let one = RateLimiter::new(2, Duration::from_millis(400)).in_redis(a.clone(), "api");
        let two = RateLimiter::new(2, Duration::from_millis(400)).in_redis(b, "api");
        one.take("k").await.unwrap();
        two.take("k").await.unwrap();
        let wait = retry_after(&one.take("k").await.unwrap_err());
        assert!(wait > 0.0 && wait <= 0.2, "{wait}");
        // The key lives until the bucket is full again (two tokens at 5 a second: 400 ms).
        let mut conn = a.manager.clone();
        let key = format!("{prefix}api:k");
        let ttl: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(ttl > 0 && ttl <= 400, "{ttl}");
        tokio::time::sleep(Duration::from_millis(250)).await;
        two.take("k").await.unwrap();
        assert!(one.take("k").await.is_err());
        tokio::time::sleep(Duration::from_millis(500)).await;
        let exists: i64 = redis::cmd("EXISTS")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(exists, 0, "a full bucket is no key");
        one.take("k").await.unwrap();
        two.take("k").await.unwrap();
        assert!(one.take("k").await.is_err());
        // Giving back to a full bucket keeps no key.
        one.give_back("never-used").await;
        let exists: i64 = redis::cmd("EXISTS")
            .arg(format!("{prefix}api:never-used"))
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(exists, 0);
    }

    #[tokio::test]
    async fn nodes_limit_in_memory_when_redis_is_down() {
        // Nothing listens on port 1: every call fails at once, and the limiter falls back to
        // its own buckets. No Redis is needed for this test.
        let down =
            Arc::new(RedisBuckets::open("redis://127.0.0.1:1/", "parley-test:down:").unwrap());
        assert!(down.ping().await.is_err());
        let limiter = RateLimiter::new(3, Duration::from_secs(60)).in_redis(down.clone(), "api");
        let started = Instant::now();
        for _ in 0..3 {
            limiter.take("k").await.unwrap();
        }
        let wait = retry_after(&limiter.take("k").await.unwrap_err());
        assert!(wait > 0.0 && wait <= 20.0, "{wait}");
        limiter.give_back("k").await;
        limiter.take("k").await.unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "falling back does not wait: {:?}",
            started.elapsed()
        );
        assert!(
            down.skipping(),
            "Redis is left alone for a while after a failure"
        );
        // A URL Redis cannot use is refused when the buckets are made.
        assert!(matches!(
            RedisBuckets::open("http://127.0.0.1/", "x"),
            Err(RedisUnavailable::Url(_))
        ));
    }

    #[tokio::test]
    async fn a_node_uses_redis_again_once_it_answers() {
        let Some(url) = test_redis("a_node_uses_redis_again_once_it_answers") else {
            return;
        };
        let prefix = prefix("recover");
        let buckets = Arc::new(RedisBuckets::open(&url, &prefix).unwrap());
        // As after a failure: skipped, so limited in memory.
        buckets.failed("test");
        let limiter = RateLimiter::new(1, Duration::from_secs(60)).in_redis(buckets.clone(), "api");
        limiter.take("k").await.unwrap();
        let other = RateLimiter::new(1, Duration::from_secs(60))
            .in_redis(Arc::new(RedisBuckets::open(&url, &prefix).unwrap()), "api");
        // Redis never saw that take.
        other.take("k").await.unwrap();
        tokio::time::sleep(BACK_OFF + Duration::from_millis(100)).await;
        // Back on Redis, where the other node took the one token.
        assert!(limiter.take("k").await.is_err());
        assert!(!buckets.health.lock().unwrap().down);
    }
}

//! [`RedisStore`]: token buckets in Redis, shared by every replica, with ToolHive's key layout
//! (`thv:rl:{<namespace>:<name>}:shared`, `...:shared:tool:<tool>`, `...:user:<sub>`,
//! `...:user-tool:<tool>:<sub>`; hash fields `tokens` and `last_refill` in microseconds; each
//! key expires after twice its refill period). One script refills and draws every bucket of a
//! request atomically, on Redis's clock, so replicas with skewed clocks still agree.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures_util::future::BoxFuture;
use vmcp_redis::{Client, RedisError, Value};

use super::lease::{Leases, Reserved};
use super::{BucketKey, BucketStore, Draw, StoreError, Verdict};

/// KEYS: the buckets. ARGV: per bucket, max tokens, refill period (µs), expiry (s) and how many
/// tokens to take at most (a lease; at least one is needed from each). Returns `{1, taken...}`
/// when every bucket had a token, else `{0, i...}` with the 1-based indices of those that had
/// less than one (nothing taken).
const SCRIPT: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local level = {}
local empty = {0}
for i, key in ipairs(KEYS) do
  local max = tonumber(ARGV[4 * i - 3])
  local period = tonumber(ARGV[4 * i - 2])
  local state = redis.call('HMGET', key, 'tokens', 'last_refill')
  local tokens = tonumber(state[1])
  local last = tonumber(state[2])
  if tokens == nil or last == nil then
    tokens = max
  elseif now > last then
    tokens = math.min(max, tokens + (now - last) * max / period)
  end
  level[i] = tokens
  if tokens < 1 then empty[#empty + 1] = i end
end
local taken = {1}
for i, key in ipairs(KEYS) do
  local take = 0
  if #empty == 1 then
    take = math.min(tonumber(ARGV[4 * i]), math.floor(level[i]))
    taken[i + 1] = take
  end
  redis.call('HSET', key, 'tokens', string.format('%.6f', level[i] - take),
    'last_refill', string.format('%.0f', now))
  redis.call('EXPIRE', key, ARGV[4 * i - 1])
end
if #empty > 1 then return empty end
return taken
"#;

/// Buckets in Redis.
pub struct RedisStore {
    client: Arc<Client>,
    /// `thv:rl:{<namespace>:<name>}:`.
    prefix: String,
    /// The script's SHA1 once Redis has it (reloaded after a Redis restart forgets it).
    sha: Mutex<Option<String>>,
    /// Tokens this replica drew ahead of need from busy buckets (see `lease`).
    leases: Leases,
}

impl RedisStore {
    /// Buckets of the gateway `name` in Kubernetes namespace `namespace` (ToolHive uses the
    /// `VMCP_NAMESPACE` variable, `local` outside a cluster).
    pub fn new(client: Arc<Client>, namespace: &str, name: &str) -> Self {
        Self {
            client,
            prefix: format!("thv:rl:{{{namespace}:{name}}}:"),
            sha: Mutex::new(None),
            leases: Leases::default(),
        }
    }

    /// The Redis key of a bucket.
    pub fn key(&self, bucket: &BucketKey) -> String {
        let p = &self.prefix;
        match bucket {
            BucketKey::Shared => format!("{p}shared"),
            BucketKey::Tool(tool) => format!("{p}shared:tool:{tool}"),
            BucketKey::User(user) => format!("{p}user:{user}"),
            BucketKey::UserTool { tool, user } => format!("{p}user-tool:{tool}:{user}"),
        }
    }

    /// Takes a token from every bucket of `draws`: from this replica's leases where it can,
    /// else from Redis in one script call (which also leases spare tokens of busy buckets).
    async fn take_all(&self, draws: &[Draw]) -> Result<Verdict, RedisError> {
        let need = match self.leases.reserve(draws, Instant::now()) {
            Reserved::All => return Ok(Verdict::Allowed),
            Reserved::Need(need) => need,
        };
        let needed: Vec<&Draw> = need.iter().map(|&(i, _)| &draws[i]).collect();
        let wants: Vec<u32> = need.iter().map(|&(_, want)| want).collect();
        match self.run(&needed, &wants).await {
            Ok(Ok(taken)) => {
                let grants: Vec<(usize, u32)> =
                    need.iter().zip(taken).map(|(&(i, _), t)| (i, t)).collect();
                self.leases.granted(draws, &grants, Instant::now());
                Ok(Verdict::Allowed)
            }
            Ok(Err(retry_after)) => {
                self.leases.refused(draws, &need);
                Ok(Verdict::Rejected { retry_after })
            }
            Err(e) => {
                self.leases.refused(draws, &need);
                Err(e)
            }
        }
    }

    /// One script call over `draws`, taking up to `wants` tokens from each: how many it took
    /// from each, or (nothing taken) how long to wait.
    async fn run(
        &self,
        draws: &[&Draw],
        wants: &[u32],
    ) -> Result<Result<Vec<u32>, std::time::Duration>, RedisError> {
        let keys: Vec<String> = draws.iter().map(|d| self.key(&d.key)).collect();
        let mut argv = Vec::with_capacity(draws.len() * 4);
        for (d, want) in draws.iter().zip(wants) {
            let period_us = d.limit.refill_period.as_micros().max(1);
            let expiry = (d.limit.refill_period.as_secs_f64() * 2.0).ceil().max(1.0);
            argv.push(d.limit.max_tokens.to_string());
            argv.push(period_us.to_string());
            argv.push(format!("{expiry:.0}"));
            argv.push(want.max(&1).to_string());
        }
        let count = keys.len().to_string();
        let cached = self.sha.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let reply = match cached {
            Some(sha) => {
                let reply = self
                    .eval(b"EVALSHA", sha.as_bytes(), &count, &keys, &argv)
                    .await;
                match reply {
                    Err(RedisError::Refused(e)) if e.starts_with("NOSCRIPT") => {
                        self.load_and_eval(&count, &keys, &argv).await?
                    }
                    other => other?,
                }
            }
            None => self.load_and_eval(&count, &keys, &argv).await?,
        };
        let unexpected = || RedisError::Refused(format!("unexpected script reply {reply:?}"));
        let Value::Array(items) = &reply else {
            return Err(unexpected());
        };
        let numbers: Vec<i64> = items
            .iter()
            .map(|v| match v {
                Value::Int(i) => Ok(*i),
                _ => Err(unexpected()),
            })
            .collect::<Result<_, _>>()?;
        match numbers.split_first() {
            Some((1, taken)) if taken.len() == draws.len() => Ok(Ok(taken
                .iter()
                .map(|&t| u32::try_from(t).unwrap_or(1).max(1))
                .collect())),
            Some((0, empty)) => Ok(Err(empty
                .iter()
                .filter_map(|&i| {
                    usize::try_from(i)
                        .ok()
                        .and_then(|i| draws.get(i.checked_sub(1)?))
                })
                .map(|d| d.limit.retry_after())
                .max()
                .unwrap_or(std::time::Duration::from_secs(1)))),
            _ => Err(unexpected()),
        }
    }

    async fn load_and_eval(
        &self,
        count: &str,
        keys: &[String],
        argv: &[String],
    ) -> Result<Value, RedisError> {
        let sha = match self
            .client
            .call(&[b"SCRIPT", b"LOAD", SCRIPT.as_bytes()])
            .await?
        {
            Value::Data(d) => String::from_utf8_lossy(&d).into_owned(),
            other => {
                return Err(RedisError::Refused(format!(
                    "SCRIPT LOAD answered {other:?}"
                )));
            }
        };
        let reply = self
            .eval(b"EVALSHA", sha.as_bytes(), count, keys, argv)
            .await;
        *self.sha.lock().unwrap_or_else(|p| p.into_inner()) = Some(sha);
        reply
    }

    async fn eval(
        &self,
        verb: &[u8],
        script: &[u8],
        count: &str,
        keys: &[String],
        argv: &[String],
    ) -> Result<Value, RedisError> {
        let mut args: Vec<&[u8]> = vec![verb, script, count.as_bytes()];
        args.extend(keys.iter().map(|k| k.as_bytes()));
        args.extend(argv.iter().map(|a| a.as_bytes()));
        self.client.call(&args).await
    }
}

impl BucketStore for RedisStore {
    fn take<'a>(&'a self, draws: &'a [Draw]) -> BoxFuture<'a, Result<Verdict, StoreError>> {
        Box::pin(async move {
            self.take_all(draws)
                .await
                .map_err(|e| StoreError(e.to_string()))
        })
    }
}

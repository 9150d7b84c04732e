//! [`MemoryStore`]: token buckets in this process, behind one mutex (a take is a few integer
//! operations per bucket, so the lock is held for well under a microsecond).
//!
//! Memory stays bounded however many callers there are: a full bucket is the same as no bucket,
//! so full ones are dropped whenever the map has doubled since the last sweep; and past
//! [`MAX_BUCKETS`] the per-caller buckets nearest to full are dropped too, which can only let
//! those callers through a little early (by the few tokens they were short of full).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures_util::future::BoxFuture;

use super::{BucketKey, BucketStore, Draw, Limit, StoreError, Verdict};

/// Most buckets kept by default (about 100 bytes each plus the caller's subject).
pub const MAX_BUCKETS: usize = 100_000;

/// Sweeps never run below this many buckets: a small map costs nothing.
const MIN_SWEEP: usize = 1024;

/// The time source (a test moves its own).
pub(crate) type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// Token buckets in memory, for a single gateway instance.
pub struct MemoryStore {
    state: Mutex<State>,
    clock: Clock,
    max_buckets: usize,
}

struct State {
    buckets: HashMap<BucketKey, Bucket>,
    /// The map size at which the next sweep runs.
    next_sweep: usize,
}

/// A bucket's level in exact integer units: one token is `refill_period` nanoseconds' worth,
/// and each elapsed nanosecond adds `max_tokens` units, so refills never round. The limit it
/// was last drawn under is kept so a sweep can tell when it is full.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    level: u128,
    at: Instant,
    limit: Limit,
}

/// Units in one token.
fn unit(limit: &Limit) -> u128 {
    limit.refill_period.as_nanos().max(1)
}

/// Units in a full bucket.
fn capacity(limit: &Limit) -> u128 {
    unit(limit) * u128::from(limit.max_tokens)
}

impl Bucket {
    fn full(limit: &Limit, now: Instant) -> Self {
        Self {
            level: capacity(limit),
            at: now,
            limit: *limit,
        }
    }

    /// The bucket refilled up to `now`, under `limit` (a reloaded config may have changed it).
    fn refilled(self, limit: &Limit, now: Instant) -> Self {
        let elapsed = now.saturating_duration_since(self.at).as_nanos();
        let added = elapsed.saturating_mul(u128::from(limit.max_tokens));
        Self {
            level: self.level.saturating_add(added).min(capacity(limit)),
            at: now.max(self.at),
            limit: *limit,
        }
    }

    /// Thousandths of full at `now`, so buckets of different sizes compare.
    fn fill(self, now: Instant) -> u128 {
        let limit = self.limit;
        self.refilled(&limit, now).level * 1000 / capacity(&limit)
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStore {
    /// An empty store on the system clock, keeping at most [`MAX_BUCKETS`] buckets.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(Instant::now), MAX_BUCKETS)
    }

    /// An empty store on `clock`, keeping at most `max_buckets` buckets.
    pub(crate) fn with_clock(clock: Clock, max_buckets: usize) -> Self {
        Self {
            state: Mutex::new(State {
                buckets: HashMap::new(),
                next_sweep: MIN_SWEEP.min(max_buckets),
            }),
            clock,
            max_buckets: max_buckets.max(1),
        }
    }

    /// How many buckets are held.
    pub fn len(&self) -> usize {
        self.lock().buckets.len()
    }

    /// Whether no bucket is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the store holds a bucket for `key` (a full one may have been dropped).
    #[cfg(test)]
    pub(crate) fn holds(&self, key: &BucketKey) -> bool {
        self.lock().buckets.contains_key(key)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is consistent between statements, so a panic elsewhere leaves it usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The decision, made under the lock.
    pub(crate) fn decide(&self, draws: &[Draw]) -> Verdict {
        let now = (self.clock)();
        let mut state = self.lock();
        let levels: Vec<Bucket> = draws
            .iter()
            .map(|d| match state.buckets.get(&d.key) {
                Some(b) => b.refilled(&d.limit, now),
                None => Bucket::full(&d.limit, now),
            })
            .collect();
        let retry_after = draws
            .iter()
            .zip(&levels)
            .filter(|(d, b)| b.level < unit(&d.limit))
            .map(|(d, _)| d.limit.retry_after())
            .max();
        if let Some(retry_after) = retry_after {
            // Nothing is taken; refilled levels need not be written back (refilling is a
            // function of time, so it comes out the same next time).
            return Verdict::Rejected { retry_after };
        }
        for (d, mut b) in draws.iter().zip(levels) {
            b.level -= unit(&d.limit);
            state.buckets.insert(d.key.clone(), b);
        }
        if state.buckets.len() >= state.next_sweep {
            self.sweep(&mut state, now);
        }
        Verdict::Allowed
    }

    /// Drops full buckets; past the cap, also the per-caller buckets nearest to full.
    fn sweep(&self, state: &mut State, now: Instant) {
        state.buckets.retain(|_, b| b.fill(now) < 1000);
        if state.buckets.len() >= self.max_buckets {
            let keep = self.max_buckets - self.max_buckets / 10;
            let mut by_fill: Vec<(u128, BucketKey)> = state
                .buckets
                .iter()
                .filter(|(k, _)| k.is_per_user())
                .map(|(k, b)| (b.fill(now), k.clone()))
                .collect();
            by_fill.sort_unstable_by_key(|(fill, _)| std::cmp::Reverse(*fill));
            let excess = state.buckets.len().saturating_sub(keep);
            for (_, key) in by_fill.into_iter().take(excess) {
                state.buckets.remove(&key);
            }
        }
        state.next_sweep = (state.buckets.len() * 2)
            .max(MIN_SWEEP)
            .min(self.max_buckets);
    }
}

impl BucketStore for MemoryStore {
    fn take<'a>(&'a self, draws: &'a [Draw]) -> BoxFuture<'a, Result<Verdict, StoreError>> {
        let verdict = self.decide(draws);
        Box::pin(std::future::ready(Ok(verdict)))
    }
}

//! Leases: tokens a replica draws from a shared bucket ahead of need, so that a busy bucket costs
//! one Redis round trip per lease instead of one per request.
//!
//! A lease never breaks a limit: its tokens were taken from the shared bucket, so every replica
//! together never admits more than the bucket allows. What a lease can do is hold tokens another
//! replica would have used, so the limits are kept from below, by at most one lease per replica
//! per bucket. That is why a lease is small: at most what the bucket refills in [`LEASE_FOR`],
//! at most a sixteenth of its size, at most [`MAX_LEASE`] tokens; and why it is short-lived
//! (unused tokens lapse after [`LEASE_FOR`]). A bucket slower than that (most per-user and
//! per-tool limits) leases one token at a time, which is exactly a draw per request.
//!
//! A lease's size adapts: it doubles when the previous one ran out within [`LEASE_FOR`] and
//! falls back to one when the bucket has been quiet, so a replica with little traffic on a bucket
//! holds almost nothing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{BucketKey, Draw, Limit};

/// How long leased tokens stay usable.
pub(super) const LEASE_FOR: Duration = Duration::from_millis(50);

/// The most tokens one lease holds.
pub(super) const MAX_LEASE: u32 = 64;

/// Leases kept before lapsed ones are swept (one per bucket this replica drew from recently).
const SWEEP_ABOVE: usize = 4096;

/// The largest lease `limit` allows (at least 1: a plain draw).
pub(super) fn cap(limit: &Limit) -> u32 {
    let refilled = f64::from(limit.max_tokens) * LEASE_FOR.as_secs_f64()
        / limit.refill_period.as_secs_f64().max(1e-9);
    let by_rate = refilled.floor().min(f64::from(MAX_LEASE)) as u32;
    by_rate.min(limit.max_tokens / 16).clamp(1, MAX_LEASE)
}

#[derive(Debug)]
struct Lease {
    /// Tokens left to hand out.
    tokens: u32,
    /// When the last lease was granted.
    granted: Instant,
    /// How many tokens the next lease asks for.
    next: u32,
}

impl Lease {
    fn live(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.granted) < LEASE_FOR
    }

    /// Unused for a while: the next lease starts over at one token.
    fn quiet(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.granted) > LEASE_FOR * 4
    }
}

/// What [`Leases::reserve`] decided.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Reserved {
    /// Every bucket had a leased token; one was taken from each.
    All,
    /// These buckets (indices into the draws) need a lease, of these sizes; a token was taken
    /// from each of the others, to be kept with [`Leases::granted`] or returned with
    /// [`Leases::refused`].
    Need(Vec<(usize, u32)>),
}

/// This replica's leases, by bucket.
#[derive(Default)]
pub(super) struct Leases {
    by_bucket: Mutex<HashMap<BucketKey, Lease>>,
}

impl Leases {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<BucketKey, Lease>> {
        self.by_bucket.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes one leased token from every bucket of `draws` that has one, or says which need a
    /// lease first (and how big).
    pub(super) fn reserve(&self, draws: &[Draw], now: Instant) -> Reserved {
        let mut leases = self.lock();
        let mut need = Vec::new();
        for (i, d) in draws.iter().enumerate() {
            match leases.get(&d.key) {
                Some(l) if l.tokens > 0 && l.live(now) => {}
                Some(l) if l.quiet(now) => need.push((i, 1)),
                Some(l) => need.push((i, l.next.min(cap(&d.limit)))),
                None => need.push((i, 1)),
            }
        }
        for (i, d) in draws.iter().enumerate() {
            if need.iter().all(|(n, _)| *n != i)
                && let Some(l) = leases.get_mut(&d.key)
            {
                l.tokens -= 1;
            }
        }
        if need.is_empty() {
            Reserved::All
        } else {
            Reserved::Need(need)
        }
    }

    /// Redis granted `grants` (per needed bucket, at least one token each): one of each is the
    /// request's, the rest is leased.
    pub(super) fn granted(&self, draws: &[Draw], grants: &[(usize, u32)], now: Instant) {
        let mut leases = self.lock();
        if leases.len() > SWEEP_ABOVE {
            leases.retain(|_, l| l.live(now));
        }
        for &(i, granted) in grants {
            let d = &draws[i];
            let cap = cap(&d.limit);
            match leases.get_mut(&d.key) {
                Some(l) => {
                    let quick = l.live(now);
                    l.next = if quick {
                        (l.next * 2).min(cap)
                    } else if l.quiet(now) {
                        1
                    } else {
                        l.next.min(cap)
                    };
                    // What an earlier lease still holds lapses unless it is live.
                    l.tokens = if quick { l.tokens } else { 0 } + granted.saturating_sub(1);
                    l.granted = now;
                }
                None => {
                    leases.insert(
                        d.key.clone(),
                        Lease {
                            tokens: granted.saturating_sub(1),
                            granted: now,
                            next: 2.min(cap),
                        },
                    );
                }
            }
        }
    }

    /// Redis refused (or could not answer): the tokens reserved from the other buckets go back.
    pub(super) fn refused(&self, draws: &[Draw], need: &[(usize, u32)]) {
        let mut leases = self.lock();
        for (i, d) in draws.iter().enumerate() {
            if need.iter().all(|(n, _)| *n != i)
                && let Some(l) = leases.get_mut(&d.key)
            {
                l.tokens += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(key: BucketKey, max_tokens: u32, period: Duration) -> Draw {
        Draw {
            key,
            limit: Limit {
                max_tokens,
                refill_period: period,
            },
        }
    }

    #[test]
    fn slow_or_small_buckets_lease_one_token_a_time() {
        let limit = |max, secs| Limit {
            max_tokens: max,
            refill_period: Duration::from_secs(secs),
        };
        // 100 a minute refills 0.08 tokens in 50 ms; 10 a second is 0.5.
        assert_eq!(cap(&limit(100, 60)), 1);
        assert_eq!(cap(&limit(10, 1)), 1);
        // 1000 a second: 50 in 50 ms, 62 is a sixteenth.
        assert_eq!(cap(&limit(1000, 1)), 50);
        // Huge buckets stop at MAX_LEASE; a fast but small one at a sixteenth of its size.
        assert_eq!(cap(&limit(1_000_000_000, 1)), MAX_LEASE);
        assert_eq!(cap(&limit(40, 0)), 2);
    }

    #[test]
    fn a_busy_bucket_grows_its_lease_and_a_quiet_one_shrinks_it() {
        let leases = Leases::default();
        let draws = [draw(BucketKey::Shared, 1_000_000, Duration::from_secs(1))];
        let t0 = Instant::now();
        assert_eq!(leases.reserve(&draws, t0), Reserved::Need(vec![(0, 1)]));
        leases.granted(&draws, &[(0, 1)], t0);
        // Used up at once: each next lease doubles, and its spare tokens serve without Redis.
        let mut now = t0;
        let mut sizes = Vec::new();
        for _ in 0..8 {
            now += Duration::from_millis(1);
            match leases.reserve(&draws, now) {
                Reserved::Need(need) => {
                    sizes.push(need[0].1);
                    leases.granted(&draws, &need, now);
                    for _ in 1..need[0].1 {
                        assert_eq!(leases.reserve(&draws, now), Reserved::All);
                    }
                }
                Reserved::All => panic!("a lease handed out more than it held"),
            }
        }
        assert_eq!(sizes, [2, 4, 8, 16, 32, 64, 64, 64]);
        // Tokens left in a lease lapse after LEASE_FOR.
        leases.granted(&draws, &[(0, 10)], now);
        assert_eq!(leases.reserve(&draws, now), Reserved::All);
        now += LEASE_FOR;
        assert!(matches!(leases.reserve(&draws, now), Reserved::Need(_)));
        // A second later the bucket has been quiet: the next lease starts over at one token.
        now += Duration::from_secs(1);
        assert_eq!(leases.reserve(&draws, now), Reserved::Need(vec![(0, 1)]));
        leases.granted(&draws, &[(0, 1)], now);
        assert_eq!(leases.lock()[&BucketKey::Shared].next, 1);
    }

    #[test]
    fn a_refused_request_keeps_nothing_it_reserved() {
        let leases = Leases::default();
        let fast = draw(BucketKey::Shared, 1_000_000, Duration::from_secs(1));
        let slow = draw(BucketKey::User("u".into()), 3, Duration::from_secs(3600));
        let now = Instant::now();
        leases.granted(std::slice::from_ref(&fast), &[(0, 5)], now);
        let draws = [fast, slow];
        let Reserved::Need(need) = leases.reserve(&draws, now) else {
            panic!("the per-user bucket has no lease");
        };
        assert_eq!(need, vec![(1, 1)]);
        assert_eq!(leases.lock()[&BucketKey::Shared].tokens, 3);
        leases.refused(&draws, &need);
        assert_eq!(leases.lock()[&BucketKey::Shared].tokens, 4);
    }
}

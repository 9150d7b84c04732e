use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use super::memory::Clock;
use super::*;

/// A clock that only moves when told.
#[derive(Clone)]
struct Manual(Arc<Mutex<Instant>>);

impl Manual {
    fn new() -> Self {
        Self(Arc::new(Mutex::new(Instant::now())))
    }

    fn advance(&self, d: Duration) {
        *self.0.lock().unwrap() += d;
    }

    fn clock(&self) -> Clock {
        let me = self.clone();
        Arc::new(move || *me.0.lock().unwrap())
    }
}

fn limit(max_tokens: u32, refill: Duration) -> Limit {
    Limit {
        max_tokens,
        refill_period: refill,
    }
}

fn who(sub: &str) -> Identity {
    Identity {
        subject: Some(sub.to_owned()),
        ..Identity::default()
    }
}

fn limiter(limits: RateLimits, max_buckets: usize) -> (RateLimiter, Manual, Arc<MemoryStore>) {
    let clock = Manual::new();
    let store = Arc::new(MemoryStore::with_clock(clock.clock(), max_buckets));
    (RateLimiter::new(limits, store.clone()), clock, store)
}

fn ok(r: Result<(), CoreError>) -> bool {
    match r {
        Ok(()) => true,
        Err(CoreError::RateLimited { .. }) => false,
        Err(e) => panic!("unexpected {e}"),
    }
}

async fn allowed_calls(l: &RateLimiter, id: &Identity, tool: &str, tries: usize) -> usize {
    let mut n = 0;
    for _ in 0..tries {
        n += usize::from(ok(l.call(id, tool).await));
    }
    n
}

#[tokio::test]
async fn refill_is_exact_and_capped_at_max_tokens() {
    let limits = RateLimits {
        shared: Some(limit(3, Duration::from_secs(3))),
        ..RateLimits::default()
    };
    let (l, clock, _) = limiter(limits, MAX_BUCKETS);
    let id = who("alice");
    assert_eq!(allowed_calls(&l, &id, "t", 5).await, 3);
    // One token takes 1 s to come back, not a nanosecond less.
    clock.advance(Duration::from_nanos(999_999_999));
    assert!(!ok(l.call(&id, "t").await));
    clock.advance(Duration::from_nanos(1));
    assert!(ok(l.call(&id, "t").await));
    assert!(!ok(l.call(&id, "t").await));
    // A long idle time refills to the bucket size, no further.
    clock.advance(Duration::from_secs(3600));
    assert_eq!(allowed_calls(&l, &id, "t", 10).await, 3);
}

#[tokio::test]
async fn a_rejection_takes_no_token_from_any_bucket() {
    let limits = RateLimits {
        shared: Some(limit(5, Duration::from_secs(3600))),
        per_user: Some(limit(1, Duration::from_secs(3600))),
        ..RateLimits::default()
    };
    let (l, _, _) = limiter(limits, MAX_BUCKETS);
    let alice = who("alice");
    assert!(ok(l.call(&alice, "t").await));
    // Alice's own bucket is empty: ten rejections must not drain the shared bucket.
    assert_eq!(allowed_calls(&l, &alice, "t", 10).await, 0);
    // So the shared bucket still has 4 tokens for everyone else.
    let mut others = 0;
    for i in 0..10 {
        others += usize::from(ok(l.call(&who(&format!("u{i}")), "t").await));
    }
    assert_eq!(others, 4);
}

#[tokio::test]
async fn tool_buckets_apply_to_their_tool_only_and_not_to_lists() {
    let mut tools = HashMap::new();
    tools.insert(
        "slow".to_owned(),
        ToolLimits {
            shared: Some(limit(3, Duration::from_secs(3600))),
            per_user: Some(limit(2, Duration::from_secs(3600))),
        },
    );
    let limits = RateLimits {
        tools,
        ..RateLimits::default()
    };
    let (l, _, _) = limiter(limits, MAX_BUCKETS);
    let (alice, bob) = (who("alice"), who("bob"));
    assert_eq!(allowed_calls(&l, &alice, "slow", 5).await, 2, "per user");
    assert_eq!(allowed_calls(&l, &bob, "slow", 5).await, 1, "shared of 3");
    assert_eq!(allowed_calls(&l, &alice, "fast", 50).await, 50);
    for _ in 0..50 {
        assert!(ok(l.request(&alice).await));
    }
}

#[tokio::test]
async fn callers_without_a_subject_share_the_anonymous_bucket() {
    let limits = RateLimits {
        per_user: Some(limit(2, Duration::from_secs(3600))),
        ..RateLimits::default()
    };
    let (l, _, store) = limiter(limits, MAX_BUCKETS);
    let anon = Identity::anonymous();
    let empty = who("");
    assert!(ok(l.request(&anon).await));
    assert!(ok(l.call(&empty, "t").await));
    assert!(!ok(l.call(&anon, "t").await));
    assert!(ok(l.call(&who("alice"), "t").await));
    assert!(store.holds(&BucketKey::User(ANONYMOUS.into())));
}

#[test]
fn retry_after_is_one_tokens_refill_rounded_up_at_least_a_second() {
    let s = Duration::from_secs;
    assert_eq!(limit(10, s(60)).retry_after(), s(6));
    assert_eq!(limit(3, s(10)).retry_after(), s(4));
    assert_eq!(limit(1, s(90)).retry_after(), s(90));
    assert_eq!(limit(100, s(1)).retry_after(), s(1));
    assert_eq!(limit(1, Duration::from_millis(1500)).retry_after(), s(2));
    assert_eq!(limit(1, Duration::from_millis(10)).retry_after(), s(1));
}

#[tokio::test]
async fn the_rejection_names_the_longest_wait_of_the_empty_buckets() {
    let mut tools = HashMap::new();
    tools.insert(
        "t".to_owned(),
        ToolLimits {
            shared: None,
            per_user: Some(limit(1, Duration::from_secs(120))),
        },
    );
    let limits = RateLimits {
        shared: Some(limit(1, Duration::from_secs(30))),
        per_user: Some(limit(1000, Duration::from_secs(1))),
        tools,
    };
    let (l, _, _) = limiter(limits, MAX_BUCKETS);
    let id = who("alice");
    assert!(ok(l.call(&id, "t").await));
    // Shared (30 s) and alice's tool bucket (120 s) are both empty; her own bucket is not.
    match l.call(&id, "t").await {
        Err(CoreError::RateLimited { retry_after }) => {
            assert_eq!(retry_after, Duration::from_secs(120));
        }
        other => panic!("{other:?}"),
    }
    // Only the shared bucket is empty for another tool.
    match l.call(&id, "u").await {
        Err(CoreError::RateLimited { retry_after }) => {
            assert_eq!(retry_after, Duration::from_secs(30));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_flood_of_subjects_keeps_only_buckets_that_are_not_full() {
    let limits = RateLimits {
        per_user: Some(limit(1, Duration::from_secs(1))),
        ..RateLimits::default()
    };
    let (l, clock, store) = limiter(limits, MAX_BUCKETS);
    let mut most = 0;
    // 1,000 new callers a second, each bucket full again after 1 s: about 1,000 are ever
    // not full, whatever the number of callers.
    for i in 0..50_000 {
        assert!(ok(l.request(&who(&format!("user-{i}"))).await));
        clock.advance(Duration::from_millis(1));
        most = most.max(store.len());
    }
    assert!(most <= 2 * 1024 + 1, "held {most} buckets");
    // Dropping a full bucket changes nothing: a caller seen long ago starts full.
    clock.advance(Duration::from_secs(1));
    assert!(ok(l.request(&who("user-0")).await));
    assert!(!ok(l.request(&who("user-0")).await));
}

#[tokio::test]
async fn past_the_cap_the_fullest_caller_buckets_go_and_shared_ones_stay() {
    let limits = RateLimits {
        shared: Some(limit(1_000_000, Duration::from_secs(3600))),
        per_user: Some(limit(2, Duration::from_secs(3600))),
        ..RateLimits::default()
    };
    let (l, _, store) = limiter(limits, 500);
    // A caller that used both tokens, so its bucket is the emptiest there is.
    let heavy = who("heavy");
    assert!(ok(l.request(&heavy).await) && ok(l.request(&heavy).await));
    for i in 0..10_000 {
        assert!(ok(l.request(&who(&format!("user-{i}"))).await));
        assert!(store.len() <= 500, "held {} buckets", store.len());
    }
    assert!(store.holds(&BucketKey::Shared));
    assert!(!ok(l.request(&heavy).await), "the emptiest bucket is kept");
}

#[test]
fn concurrent_takes_never_overdraw() {
    let store = MemoryStore::with_clock(Manual::new().clock(), MAX_BUCKETS);
    let draws = [Draw {
        key: BucketKey::Shared,
        limit: limit(37, Duration::from_secs(3600)),
    }];
    let allowed = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    (0..50)
                        .filter(|_| store.decide(&draws) == Verdict::Allowed)
                        .count()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .sum::<usize>()
    });
    assert_eq!(allowed, 37);
}

struct Broken;

impl BucketStore for Broken {
    fn take<'a>(&'a self, _: &'a [Draw]) -> BoxFuture<'a, Result<Verdict, StoreError>> {
        Box::pin(std::future::ready(Err(StoreError("down".into()))))
    }
}

#[tokio::test]
async fn a_store_that_cannot_answer_lets_requests_through() {
    let limits = RateLimits {
        shared: Some(limit(1, Duration::from_secs(3600))),
        ..RateLimits::default()
    };
    let l = RateLimiter::new(limits, Arc::new(Broken));
    assert_eq!(allowed_calls(&l, &who("a"), "t", 3).await, 3);
}

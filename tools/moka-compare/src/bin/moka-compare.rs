//! Cost per cache hit, vmcp's auth caches against moka 0.12's `future::Cache`, on one
//! current-thread tokio runtime (as vmcp serves requests), 10,000 entries present.
//!
//! Variants, each looked up in the same shuffled order over all 10,000 keys:
//! - `std-mutex`: `Mutex<HashMap<K, (Arc<str>, Instant)>>`: lock, `get`, `Instant::now() < until`,
//!   clone the `Arc<str>`: what `TokenExchange::cached` (crates/auth/src/outgoing.rs) does.
//! - `moka-get`: `future::Cache<K, Entry>` with `max_capacity(10_000)` and a per-entry `Expiry`
//!   (the token's lifetime, as ours keeps), `cache.get(&key).await`.
//! - `moka-try_get_with`: the same cache, `try_get_with_by_ref(&key, init).await` on a hit (the
//!   call a swap would make, giving every waiter one outcome); `_by_ref` so the key is cloned
//!   only on a miss. `moka-try_get_with-owned` passes an owned key, cloned per call, as
//!   `try_get_with(key, init)` takes it.
//!
//! Each key type is measured: `str40` (a 40-byte token string, owned `String` keys) and `sha32`
//! (a 32-byte array, as ours keys by the token's SHA-256; the hash is the same work in either
//! design and is not timed).
//!
//! Usage: moka-compare [--iters N] [--reps R]   (defaults 1,000,000 and 5)

use std::collections::HashMap;
use std::hash::Hash;
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use moka::Expiry;
use moka::future::Cache;

const ENTRIES: usize = 10_000;

/// What a hit returns in both designs: the cached token, and (moka) its lifetime for `Expiry`.
#[derive(Clone)]
struct Entry(Arc<str>, Duration);

struct PerEntry;

impl<K> Expiry<K, Entry> for PerEntry {
    fn expire_after_create(&self, _: &K, value: &Entry, _: Instant) -> Option<Duration> {
        Some(value.1)
    }
}

/// splitmix64: deterministic keys and order without a `rand` dependency.
fn mix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn str_keys() -> Vec<String> {
    let mut s = 1;
    (0..ENTRIES)
        .map(|_| {
            // 40 bytes, like a short opaque token: "tok_" + 36 hex-ish characters.
            let k = format!(
                "tok_{:016x}{:016x}{:04x}",
                mix(&mut s),
                mix(&mut s),
                mix(&mut s) & 0xffff
            );
            assert_eq!(k.len(), 40);
            k
        })
        .collect()
}

fn sha_keys() -> Vec<[u8; 32]> {
    let mut s = 2;
    (0..ENTRIES)
        .map(|_| {
            let mut k = [0u8; 32];
            for c in k.chunks_mut(8) {
                c.copy_from_slice(&mix(&mut s).to_le_bytes());
            }
            k
        })
        .collect()
}

/// A lookup order that visits every key, shuffled (Fisher-Yates), so hits do not walk memory in
/// insertion order.
fn order() -> Vec<usize> {
    let mut o: Vec<usize> = (0..ENTRIES).collect();
    let mut s = 3;
    for i in (1..o.len()).rev() {
        o.swap(i, (mix(&mut s) % (i as u64 + 1)) as usize);
    }
    o
}

struct Caches<K> {
    keys: Vec<K>,
    ours: Mutex<HashMap<K, (Arc<str>, Instant)>>,
    moka: Cache<K, Entry>,
}

async fn build<K>(keys: Vec<K>) -> Caches<K>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    let lifetime = Duration::from_secs(3600);
    let until = Instant::now() + lifetime;
    let ours = Mutex::new(HashMap::new());
    let moka = Cache::builder()
        .max_capacity(ENTRIES as u64)
        .expire_after(PerEntry)
        .build();
    for (i, k) in keys.iter().enumerate() {
        let token: Arc<str> = format!("exchanged-token-{i:024}").into();
        ours.lock()
            .unwrap()
            .insert(k.clone(), (token.clone(), until));
        moka.insert(k.clone(), Entry(token, lifetime)).await;
    }
    moka.run_pending_tasks().await;
    assert_eq!(moka.entry_count(), ENTRIES as u64, "moka kept every entry");
    assert_eq!(ours.lock().unwrap().len(), ENTRIES);
    Caches { keys, ours, moka }
}

/// What `TokenExchange::cached` does on a hit.
fn ours_hit<K: Hash + Eq>(
    ours: &Mutex<HashMap<K, (Arc<str>, Instant)>>,
    key: &K,
) -> Option<Arc<str>> {
    let cache = ours.lock().unwrap_or_else(|p| p.into_inner());
    let (token, until) = cache.get(key)?;
    (Instant::now() < *until).then(|| token.clone())
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Variant {
    Ours,
    MokaGet,
    MokaTryGetWith,
    MokaTryGetWithOwned,
}

const VARIANTS: [Variant; 4] = [
    Variant::Ours,
    Variant::MokaGet,
    Variant::MokaTryGetWith,
    Variant::MokaTryGetWithOwned,
];

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Ours => "std-mutex (ours)",
            Variant::MokaGet => "moka get",
            Variant::MokaTryGetWith => "moka try_get_with_by_ref",
            Variant::MokaTryGetWithOwned => "moka try_get_with (owned key)",
        }
    }
}

/// ns per hit over `iters` lookups.
async fn run<K>(c: &Caches<K>, order: &[usize], v: Variant, iters: usize) -> f64
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    let mut misses = 0usize;
    let start = Instant::now();
    for i in 0..iters {
        let key = &c.keys[order[i % ENTRIES]];
        let hit = match v {
            Variant::Ours => ours_hit(&c.ours, black_box(key)).map(|t| t.len()),
            Variant::MokaGet => c.moka.get(black_box(key)).await.map(|e| e.0.len()),
            Variant::MokaTryGetWith => c
                .moka
                .try_get_with_by_ref(black_box(key), async { Err::<Entry, ()>(()) })
                .await
                .ok()
                .map(|e| e.0.len()),
            Variant::MokaTryGetWithOwned => c
                .moka
                .try_get_with(black_box(key).clone(), async { Err::<Entry, ()>(()) })
                .await
                .ok()
                .map(|e| e.0.len()),
        };
        match hit {
            Some(n) => {
                black_box(n);
            }
            None => misses += 1,
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / iters as f64;
    assert_eq!(misses, 0, "{}: every lookup must hit", v.name());
    ns
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

async fn measure<K>(label: &str, keys: Vec<K>, iters: usize, reps: usize)
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    let c = build(keys).await;
    let order = order();
    // Warm-up: one pass over every key with each variant.
    for v in VARIANTS {
        run(&c, &order, v, ENTRIES).await;
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
    for rep in 0..reps {
        // Interleaved, the order rotating each repetition.
        for j in 0..VARIANTS.len() {
            let idx = (j + rep) % VARIANTS.len();
            samples[idx].push(run(&c, &order, VARIANTS[idx], iters).await);
        }
    }
    for (v, s) in VARIANTS.iter().zip(samples) {
        let lo = s.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = s.iter().cloned().fold(0.0, f64::max);
        println!(
            "| {label} | {} | {:.1} | {:.1}-{:.1} |",
            v.name(),
            median(s),
            lo,
            hi
        );
    }
}

fn main() {
    let mut iters = 1_000_000;
    let mut reps = 5;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let n = args.next().and_then(|n| n.parse().ok());
        match (a.as_str(), n) {
            ("--iters", Some(n)) => iters = n,
            ("--reps", Some(n)) => reps = n,
            _ => {
                eprintln!("usage: moka-compare [--iters N] [--reps R]");
                std::process::exit(2);
            }
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        println!(
            "{ENTRIES} entries, {iters} hits per sample, {reps} samples each (median, range), ns per hit"
        );
        println!();
        println!("| key | cache | median ns | range |");
        println!("|---|---|---:|---:|");
        measure("str40", str_keys(), iters, reps).await;
        measure("sha32", sha_keys(), iters, reps).await;
    });
}

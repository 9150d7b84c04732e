//! The smallest program that caches a token and reads it back, with exactly one cache: std's
//! `HashMap` under a `Mutex` (no features) or moka's `future::Cache` (`--features moka`). Built
//! to measure what each adds to a clean release build and to the stripped binary (README.md).

use std::sync::Arc;

fn main() {
    let key = std::env::args().nth(1).unwrap_or_else(|| "tok".to_owned());
    let token: Arc<str> = Arc::from("exchanged");
    println!("{}", lookup(key, token).map_or(0, |t| t.len()));
}

#[cfg(not(feature = "moka"))]
fn lookup(key: String, token: Arc<str>) -> Option<Arc<str>> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};
    let cache: Mutex<HashMap<String, (Arc<str>, Instant)>> = Mutex::new(HashMap::new());
    let until = Instant::now() + Duration::from_secs(60);
    cache.lock().unwrap().insert(key.clone(), (token, until));
    let cache = cache.lock().unwrap();
    let (t, until) = cache.get(&key)?;
    (Instant::now() < *until).then(|| t.clone())
}

#[cfg(feature = "moka")]
fn lookup(key: String, token: Arc<str>) -> Option<Arc<str>> {
    use std::time::Duration;
    let cache: moka::future::Cache<String, Arc<str>> = moka::future::Cache::builder()
        .max_capacity(10_000)
        .time_to_live(Duration::from_secs(60))
        .build();
    block_on(async {
        cache
            .try_get_with_by_ref(&key, async { Ok::<_, ()>(token) })
            .await
            .ok()?;
        cache.get(&key).await
    })
}

/// Polls to completion with std's no-op waker: no executor crate in the measurement.
#[cfg(feature = "moka")]
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    use std::task::{Context, Poll, Waker};
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

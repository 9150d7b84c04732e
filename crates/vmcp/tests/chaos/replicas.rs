//! Faults of the shared state and of replicas: Redis stopped and restarted under two replicas,
//! and one of two replicas killed. Sessions live in Redis; a session Redis holds must keep
//! working on whichever replica serves it.

use vmcp_testkit::{FixtureProcess, RedisServer};

use super::load::{Load, Plan, Route, Target, WORKERS, Worker};
use super::{BACKEND_TIMEOUT, SERIAL, Timeline, operational};
use crate::common::{Gateway, http_backend};

/// Two replicas in front of `svc1`, sessions in `redis`.
fn replicas(redis: &RedisServer, svc1: &str) -> (Gateway, Gateway) {
    let yaml = format!(
        "name: chaos\nbackends:\n{}sessionStorage:\n  provider: redis\n  address: {}\n{}",
        http_backend("svc1", svc1),
        redis.address(),
        operational()
    );
    (Gateway::start(&yaml), Gateway::start(&yaml))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_stopped_and_restarted_under_two_replicas() {
    let _one_at_a_time = SERIAL.lock().await;
    // Persistent, as a production Redis is: a session stored before the outage is still held
    // after it, so it must still work.
    let Some(mut redis) = RedisServer::start_persistent() else {
        return;
    };
    let t = Timeline::from_env();
    let svc1 = FixtureProcess::spawn_http(&["--name", "svc1"]).await;
    let (a, b) = replicas(&redis, &svc1.url);
    // Each client's requests alternate between the replicas, as a round-robin balancer sends
    // them; every third opens a new session on one replica and calls on the other.
    let plan = Plan {
        fault: "Redis stopped and restarted (two replicas)".into(),
        parts: vec!["session storage".into(), "redis".into()],
        bound: BACKEND_TIMEOUT,
        workers: (0..WORKERS)
            .map(|n| {
                let urls = if n % 2 == 0 {
                    vec![a.url.clone(), b.url.clone()]
                } else {
                    vec![b.url.clone(), a.url.clone()]
                };
                Worker {
                    route: Route::Alternate(urls),
                    targets: vec![
                        Target::echo("svc1_echo", false),
                        Target::echo("svc1_echo", false),
                        Target::fresh_session("svc1_echo"),
                    ],
                    bearer: None,
                    faulted: false,
                }
            })
            .collect(),
    };
    let load = Load::start(plan, t).await;
    load.before().await;
    load.fault_begins();
    redis.kill();
    tokio::time::sleep(t.during).await;
    redis.restart();
    load.fault_ends();
    load.after().await;
    let report = load.finish().await;
    report.publish();
    report.assert_clean();
    report.assert_felt();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_killed() {
    let _one_at_a_time = SERIAL.lock().await;
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let t = Timeline::from_env();
    let svc1 = FixtureProcess::spawn_http(&["--name", "svc1"]).await;
    let (mut a, b) = replicas(&redis, &svc1.url);
    // Half the clients start on a, half on b; each stays on its replica until it cannot reach
    // it, then goes to the other, as a failing-over balancer does. Those that started on a
    // carry the fault.
    let plan = Plan {
        fault: "a replica SIGKILLed (of two)".into(),
        parts: vec![a.base.clone()],
        bound: BACKEND_TIMEOUT,
        workers: (0..WORKERS)
            .map(|n| {
                let on_a = n % 2 == 0;
                let urls = if on_a {
                    vec![a.url.clone(), b.url.clone()]
                } else {
                    vec![b.url.clone(), a.url.clone()]
                };
                Worker {
                    route: Route::Failover(urls),
                    targets: vec![Target::echo("svc1_echo", false)],
                    bearer: None,
                    faulted: on_a,
                }
            })
            .collect(),
    };
    let load = Load::start(plan, t).await;
    load.before().await;
    load.fault_begins();
    a.kill();
    // The fault is the kill itself: a stays dead, and recovery is b serving a's sessions.
    load.fault_ends();
    tokio::time::sleep(t.during).await;
    load.after().await;
    let report = load.finish().await;
    report.publish();
    report.assert_clean();
    report.assert_felt();
}

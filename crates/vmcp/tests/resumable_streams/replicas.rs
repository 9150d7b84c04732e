//! Two replicas sharing sessions through a real `redis-server`: a stream a client was reading on
//! one replica resumes on the other (the load balancer's choice), nothing lost, nothing twice.
//! Skipped with a note when redis-server is missing, except under `CI=true`.

use serde_json::json;
use vmcp_testkit::{FixtureOptions, RedisServer};

use super::*;

/// Replicas in front of the 2025-11-25 conformance fixture and a JSON fixture, sessions in Redis.
struct Pair {
    _redis: RedisServer,
    a: Gateway,
    b: Gateway,
    _backends: [tokio::task::JoinHandle<()>; 2],
}

async fn pair() -> Option<Pair> {
    let redis = RedisServer::start()?;
    let (conf, c) = serve_legacy_conformance_in_process().await;
    let (plain, p) = serve_http_in_process(FixtureOptions::default()).await;
    let yaml = format!(
        "name: pair\nbackends:\n{}{}sessionStorage:\n  provider: redis\n  address: {}\nserver:\n  sseKeepAlive: 100ms\n",
        http_backend("conf", &conf),
        http_backend("plain", &plain),
        redis.address()
    );
    Some(Pair {
        a: Gateway::start(&yaml),
        b: Gateway::start(&yaml),
        _redis: redis,
        _backends: [c, p],
    })
}

/// Calls the plain backend's `sleep` for `ms` (silent: its stream carries keep-alives) and cuts
/// the connection after the priming event, which it returns (it has an id to resume from).
async fn sleep_cut_after_priming(client: &Client, id: u64, ms: u64) -> Event {
    let resp = post(client, &call(id, "plain_sleep", json!({"ms": ms})))
        .send()
        .await
        .unwrap();
    let priming = Events::new(resp).next().await.unwrap();
    assert!(priming.id.is_some(), "{priming:?}");
    priming
}

/// Reads `events` until (and including) the first event whose JSON satisfies `stop`.
async fn read_until(events: &mut Events, stop: impl Fn(&Value) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    while let Some(ev) = events.next().await {
        if ev.comment {
            continue;
        }
        let done = stop(&ev.json());
        seen.push(ev);
        if done {
            return seen;
        }
    }
    panic!("the stream ended first: {seen:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_call_cut_on_one_replica_resumes_on_the_other() {
    // Bound whole: the Redis server and the backends live as long as it.
    let Some(pair) = pair().await else {
        return;
    };
    let on_a = Client::connect(&pair.a.url).await;
    let on_b = on_a.at(&pair.b.url);

    // A long call on replica A (silent: the stream carries keep-alives), cut after its priming.
    let priming = sleep_cut_after_priming(&on_a, 21, 1500).await;
    assert!(priming.data.is_empty(), "{priming:?}");
    // The client comes back through the load balancer, which picks replica B.
    let resumed = get(&on_b, priming.id.as_deref()).await;
    assert_eq!(resumed.status(), 200);
    let rest = Events::new(resumed).rest().await;
    let answers: Vec<Value> = rest.iter().map(Event::json).collect();
    assert_eq!(answers.len(), 1, "the answer, once: {rest:?}");
    assert_eq!(answers[0]["id"], 21);
    assert_eq!(answers[0]["result"]["content"][0]["text"], "slept 1500");
    assert_numbered(&[priming, rest[0].clone()]);

    // Cut after the first progress notification; B delivers the rest.
    let resp = post(&on_a, &call(22, "conf_test_tool_with_progress", json!({})))
        .send()
        .await
        .unwrap();
    let mut first = Events::new(resp);
    let seen = read_until(&mut first, |m| m["method"] == "notifications/progress").await;
    drop(first);
    let last = seen.last().unwrap().id.clone().unwrap();
    let rest = Events::new(get(&on_b, Some(&last)).await).rest().await;
    let mut all = seen.clone();
    all.extend(rest.iter().cloned());
    assert_numbered(&all);
    let progress = all
        .iter()
        .filter(|e| e.json()["method"] == "notifications/progress")
        .count();
    let answers = all.iter().filter(|e| e.json()["id"] == 22).count();
    assert_eq!((progress, answers), (3, 1), "{all:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_stream_resumes_on_the_other_replica_and_bad_ids_are_refused_there() {
    // Bound whole: the Redis server and the backends live as long as it.
    let Some(pair) = pair().await else {
        return;
    };
    let on_a = Client::connect(&pair.a.url).await;
    let on_b = on_a.at(&pair.b.url);
    let resp = post(&on_a, &call(23, "conf_test_reconnection", json!({})))
        .send()
        .await
        .unwrap();
    let before = Events::new(resp).rest().await;
    let last = before.last().unwrap().id.clone().unwrap();
    let after = Events::new(get(&on_b, Some(&last)).await).rest().await;
    let answers = after.iter().filter(|e| e.json()["id"] == 23).count();
    assert_eq!(answers, 1, "{after:?}");

    // Another session's stream is refused on B as an unknown one is, whoever holds it.
    let other = Client::connect(&pair.a.url).await;
    let mut others = Events::new(get(&other, None).await);
    let others_id = others.next().await.unwrap().id.unwrap();
    let foreign = get(&on_b, Some(&others_id)).await;
    let unknown = get(&on_b, Some(&format!("{others_id}9"))).await;
    assert_eq!(
        (foreign.status().as_u16(), unknown.status().as_u16()),
        (400, 400)
    );
    assert_eq!(foreign.text().await.unwrap(), unknown.text().await.unwrap());
    // A replica nobody runs does not answer: 503, try again.
    let gone = get(&on_b, Some("0000dead.AAAAAAAAAAAAAAAAAAAAAA:1")).await;
    assert_eq!(gone.status(), 503);
    assert!(gone.headers().contains_key("retry-after"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_relayed_from_a_replica_that_dies_ends_and_later_resumes_get_503() {
    let Some(mut pair) = pair().await else {
        return;
    };
    let on_a = Client::connect(&pair.a.url).await;
    let on_b = on_a.at(&pair.b.url);
    let mut on_a_stream = Events::new(get(&on_a, None).await);
    let priming = on_a_stream.next().await.unwrap();
    drop(on_a_stream);
    // The GET stream A holds, read through B: idle, kept open by the holder's heartbeats.
    let mut relayed = Events::new(get(&on_b, priming.id.as_deref()).await);
    assert!(relayed.next().await.unwrap().comment);
    pair.a.kill();
    // Without heartbeats from A, B ends the connection instead of holding it open forever.
    let ended = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while relayed.next().await.is_some() {}
    })
    .await;
    assert!(ended.is_ok(), "B kept relaying a dead replica's stream");
    let again = get(&on_b, priming.id.as_deref()).await;
    assert_eq!(again.status(), 503, "{:?}", again.text().await);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_cut_while_its_replica_restarts_resumes_on_the_other_with_nothing_lost() {
    let Some(mut pair) = pair().await else {
        return;
    };
    let on_a = Client::connect(&pair.a.url).await;
    let on_b = on_a.at(&pair.b.url);
    // A rolling restart: the load balancer cuts the client's connection and A gets SIGTERM
    // while the call runs. With no request left in flight, A used to exit at once, taking the
    // call's answer with it.
    let priming = sleep_cut_after_priming(&on_a, 24, 2000).await;
    pair.a.signal_terminate();
    let resumed = get(&on_b, priming.id.as_deref()).await;
    assert_eq!(resumed.status(), 200, "{:?}", resumed.text().await);
    let rest = Events::new(resumed).rest().await;
    let answers: Vec<Value> = rest.iter().map(Event::json).collect();
    assert_eq!(answers.len(), 1, "the answer, once: {rest:?}");
    assert_eq!(answers[0]["result"]["content"][0]["text"], "slept 2000");
    assert_numbered(&[priming, rest[0].clone()]);
    // A waited for the resume, said so, and then exited cleanly.
    assert!(pair.a.wait_exit().success(), "{}", pair.a.logs());
    assert!(
        pair.a
            .logs()
            .contains("waiting for streams a client may resume"),
        "{}",
        pair.a.logs()
    );
}

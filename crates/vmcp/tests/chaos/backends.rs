//! Backend faults: an HTTP backend SIGKILLed and restarted on its port, one that hangs
//! mid-response, one that answers garbage, under a wrong id or with another request's answer,
//! and a stdio backend's process killed. The clients call the faulted backend `svc1` (or `sto`)
//! and a healthy one, `svc2`, in turn: errors must name the faulted backend, and the healthy one
//! must not fail at all (its errors would name nothing the scenario expects).

use std::time::{Duration, Instant};

use vmcp_testkit::{FaultMode, FaultProxy, FixtureProcess};

use super::load::{Load, Plan, Route, Target, WORKERS, Worker};
use super::{BACKEND_TIMEOUT, SERIAL, Timeline, operational};
use crate::common::{Gateway, children_matching, http_backend, stdio_backend};

/// The gateway in front of `backends` (YAML list entries) with the chaos settings.
fn gateway(backends: &[String]) -> Gateway {
    Gateway::start(&format!(
        "name: chaos\nbackends:\n{}{}",
        backends.concat(),
        operational()
    ))
}

/// Sixteen clients calling `faulted_tool` and `svc2_echo` in turn; errors must name `part`.
fn plan(fault: &str, url: &str, faulted_tool: &str, part: &str) -> Plan {
    Plan {
        fault: fault.to_owned(),
        parts: vec![part.to_owned()],
        bound: BACKEND_TIMEOUT,
        workers: (0..WORKERS)
            .map(|_| Worker {
                route: Route::One(url.to_owned()),
                targets: vec![
                    Target::echo(faulted_tool, true),
                    Target::echo("svc2_echo", false),
                ],
                bearer: None,
                faulted: false,
            })
            .collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn http_backend_sigkilled_and_restarted() {
    let _one_at_a_time = SERIAL.lock().await;
    let t = Timeline::from_env();
    let mut svc1 = FixtureProcess::spawn_http(&["--name", "svc1"]).await;
    let svc2 = FixtureProcess::spawn_http(&["--name", "svc2"]).await;
    let gw = gateway(&[
        http_backend("svc1", &svc1.url),
        http_backend("svc2", &svc2.url),
    ]);
    let fault = "HTTP backend SIGKILLed, restarted on its port";
    let load = Load::start(plan(fault, &gw.url, "svc1_echo", "svc1"), t).await;
    load.before().await;
    load.fault_begins();
    svc1.kill().await;
    tokio::time::sleep(t.during).await;
    svc1.restart().await;
    load.fault_ends();
    load.after().await;
    let report = load.finish().await;
    report.publish();
    report.assert_clean();
    report.assert_felt();
}

/// A scenario where a proxy in front of `svc1` lies in `mode` during the fault, for at least
/// `at_least`.
async fn lying_backend(fault: &str, mode: FaultMode, at_least: Duration) {
    let _one_at_a_time = SERIAL.lock().await;
    let t = Timeline::from_env();
    let svc1 = FixtureProcess::spawn_http(&["--name", "svc1"]).await;
    let svc2 = FixtureProcess::spawn_http(&["--name", "svc2"]).await;
    let proxy = FaultProxy::start(&svc1.url).await;
    let gw = gateway(&[
        http_backend("svc1", &proxy.url),
        http_backend("svc2", &svc2.url),
    ]);
    let load = Load::start(plan(fault, &gw.url, "svc1_echo", "svc1"), t).await;
    load.before().await;
    load.fault_begins();
    proxy.set(mode);
    tokio::time::sleep(t.during.max(at_least)).await;
    proxy.set(FaultMode::Pass);
    load.fault_ends();
    load.after().await;
    let report = load.finish().await;
    report.publish();
    assert!(proxy.rewritten() > 0, "the proxy told no lie");
    report.assert_clean();
    report.assert_felt();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn backend_hangs_mid_response() {
    // Longer than the backend timeout even in a short run: calls in flight must end by it.
    lying_backend(
        "backend hangs mid-response (headers, half the body)",
        FaultMode::StallMidBody,
        BACKEND_TIMEOUT + Duration::from_secs(1),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn backend_answers_garbage() {
    lying_backend(
        "backend answers garbage",
        FaultMode::Garbage,
        Duration::ZERO,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn backend_answers_under_a_wrong_id() {
    lying_backend(
        "backend answers under a wrong id",
        FaultMode::WrongId,
        Duration::ZERO,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn backend_answers_with_another_requests_answer() {
    lying_backend(
        "backend answers with another request's answer",
        FaultMode::OtherAnswer,
        Duration::ZERO,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stdio_backend_killed() {
    let _one_at_a_time = SERIAL.lock().await;
    let t = Timeline::from_env();
    let svc2 = FixtureProcess::spawn_http(&["--name", "svc2"]).await;
    let gw = gateway(&[stdio_backend("sto", ""), http_backend("svc2", &svc2.url)]);
    let load = Load::start(plan("stdio backend killed", &gw.url, "sto_echo", "sto"), t).await;
    load.before().await;
    load.fault_begins();
    // SIGKILL whatever child serves `sto` now, once a second (at least once) while the fault
    // lasts: the gateway restarts it each time.
    let until = Instant::now() + t.during;
    let mut kills = 0;
    loop {
        for pid in children_matching(gw.pid(), "--name sto") {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            kills += 1;
        }
        if Instant::now() + Duration::from_secs(1) > until {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    load.fault_ends();
    load.after().await;
    let report = load.finish().await;
    report.publish();
    assert!(kills > 0, "no stdio child was found to kill");
    report.assert_clean();
}

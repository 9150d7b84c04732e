//! Clients are served on `server.workerThreads` threads, each with its own backend connections:
//! a session opened on one thread is used from connections landing on the others, and concurrent
//! calls through every thread reach the right backend and come back to the right caller.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use common::{Client, Gateway, http_backend, stdio_backend, text_of};
use serde_json::json;
use vmcp_testkit::FixtureProcess;

/// Names of the gateway's serving threads.
fn serving_threads(pid: u32) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim().to_string())
        .filter(|n| n.starts_with("vmcp-serve-"))
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_and_calls_work_across_serving_threads() {
    let weather = FixtureProcess::spawn_http(&["--name", "weather"]).await;
    let yaml = format!(
        "name: threads\nbackends:\n{}{}server:\n  workerThreads: 3\n",
        stdio_backend("notes", ""),
        http_backend("weather", &weather.url)
    );
    let gw = Gateway::start(&yaml);
    assert_eq!(
        serving_threads(gw.pid()),
        ["vmcp-serve-0", "vmcp-serve-1", "vmcp-serve-2"]
    );
    let session = Client::connect(&gw.url).await;
    let mut callers = Vec::new();
    for n in 0..12 {
        // A fresh HTTP client is a fresh connection, dealt to the next serving thread.
        let mut c = session.clone();
        c.http = common::http();
        callers.push(tokio::spawn(async move {
            for round in 0..5 {
                for tool in ["weather_echo", "notes_echo"] {
                    let text = format!("{tool} {n}.{round}");
                    let answer = c.call(tool, json!({ "text": text })).await;
                    assert_eq!(text_of(&answer), text, "{answer}");
                }
            }
        }));
    }
    for c in callers {
        c.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_serving_thread_per_core_by_default() {
    let weather = FixtureProcess::spawn_http(&["--name", "weather"]).await;
    let gw = Gateway::start(&format!(
        "name: threads\nbackends:\n{}",
        http_backend("weather", &weather.url)
    ));
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(serving_threads(gw.pid()).len(), cores);
    let c = Client::connect(&gw.url).await;
    assert_eq!(
        text_of(&c.call("weather_echo", json!({"text": "hi"})).await),
        "hi"
    );
}

//! The optimizer's semantic tier through the binary, with a real model (all-MiniLM-L6-v2):
//! the local embedder, the TEI path and the OpenAI path (a TEI-compatible server in the test kit
//! serving the same model), hybrid ranking on both revisions, the cache file across a restart,
//! and an embedding service that is down, slow or returns the wrong dimension (the keyword tier
//! answers; never an error or a hang).

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.
#![allow(missing_docs, unreachable_pub)]

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::eras::*;
use common::{Gateway, found, stdio_backend, temp_path};
use serde_json::{Value, json};
use vmcp_embed::LocalEmbedder;
use vmcp_testkit::{EmbeddingFaults, serve_embeddings_in_process};

/// A task phrased with none of `add`'s words ("Adds two numbers."): only meaning finds it.
const BY_MEANING: &str = "compute the sum of 7 and 35";

fn model_dir() -> Option<std::path::PathBuf> {
    let dir = vmcp_embed::repo_model_dir();
    if dir.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must install the model (.ci/venv.sh)"
        );
        eprintln!("note: skipped: no embedding model (run .ci/venv.sh or set VMCP_EMBED_MODEL)");
    }
    dir
}

fn gateway(optimizer: &str, env: &[(&str, &str)]) -> Gateway {
    let yaml = format!(
        "name: semantic\nbackends:\n{}{}optimizer:\n  maxToolsToReturn: 3\n{optimizer}",
        stdio_backend("notes", ""),
        stdio_backend("weather", ""),
    );
    Gateway::start_env(&yaml, &[], env)
}

async fn find(c: &common::Client, description: &str) -> Value {
    let r = c
        .call("find_tool", json!({"tool_description": description}))
        .await;
    assert!(r["result"].is_object(), "{r}");
    r["result"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_model_finds_tools_by_meaning_on_both_revisions() {
    let Some(dir) = model_dir() else { return };
    let keyword_only = gateway("", &[]);
    let c = legacy_connect(&keyword_only.url, json!({})).await;
    let keyword = found(&find(&c, BY_MEANING).await);
    assert!(
        keyword.first().is_none_or(|n| !n.ends_with("_add")),
        "BM25 matches only filler words: {keyword:?}"
    );

    let gw = gateway(
        &format!(
            "  embeddingProvider: local\n  embeddingModelPath: {:?}\n",
            dir.display().to_string()
        ),
        &[],
    );
    let c = legacy_connect(&gw.url, json!({})).await;
    let legacy = found(&find(&c, BY_MEANING).await);
    assert!(legacy[0].ends_with("_add"), "{legacy:?}");
    let m = ModernClient::new(&gw.url);
    let r = m
        .ok(
            "tools/call",
            json!({"name": "find_tool", "arguments": {"tool_description": BY_MEANING}}),
        )
        .await;
    assert_eq!(found(&r), legacy, "same answer on 2026-07-28");
    let r = m
        .ok("tools/call", json!({"name": "call_tool", "arguments": {"tool_name": legacy[0], "parameters": {"a": 7, "b": 35}}}))
        .await;
    assert_eq!(r["structuredContent"]["sum"], 42.0, "{r}");

    // Bad input: a pasted document, a wrong type.
    let huge = "word ".repeat(20_000);
    let r = find(&c, &huge).await;
    assert_eq!(r["isError"], true);
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("100000 bytes"),
        "{r}"
    );
    let r = c.call("find_tool", json!({"tool_description": 42})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let r = c
        .call(
            "find_tool",
            json!({"tool_description": "\u{fffd}\u{0}\"'*:^(NEAR) OR AND -x"}),
        )
        .await;
    assert!(r["result"]["structuredContent"].is_object(), "{r}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tei_path_falls_back_to_keywords_when_the_service_fails() {
    let Some(dir) = model_dir() else { return };
    let model = LocalEmbedder::load(&dir).unwrap();
    let (tei, _task) = serve_embeddings_in_process(model, 4, None).await;
    let gw = gateway(
        &format!(
            // 5 s, not less: on a loaded CI machine a real query embedding can take over 1 s.
            "  embeddingService: {}\n  embeddingServiceTimeout: 5s\n",
            tei.url
        ),
        &[],
    );
    let c = legacy_connect(&gw.url, json!({})).await;
    let names = found(&find(&c, BY_MEANING).await);
    assert!(names[0].ends_with("_add"), "{names:?}");
    let embedded = tei.inputs.load(Ordering::SeqCst);
    find(&c, "echo some text back to me").await;
    assert_eq!(
        tei.inputs.load(Ordering::SeqCst),
        embedded + 1,
        "tools are embedded once; only the query is new"
    );

    let set = |f: EmbeddingFaults| *tei.faults.lock().unwrap() = f;
    let keyword_query = "add numbers";
    for (what, fault) in [
        (
            "down",
            EmbeddingFaults {
                down: true,
                ..Default::default()
            },
        ),
        (
            "slow",
            EmbeddingFaults {
                delay: Duration::from_secs(30),
                ..Default::default()
            },
        ),
        (
            "wrong dimension",
            EmbeddingFaults {
                dimension: Some(100),
                ..Default::default()
            },
        ),
    ] {
        set(fault);
        let started = Instant::now();
        let r = find(&c, keyword_query).await;
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{what}: bounded by the timeout"
        );
        assert_ne!(r["isError"], true, "{what}: {r}");
        let names = found(&r);
        assert!(
            names[0].ends_with("_add"),
            "{what}: the keyword tier answers: {names:?}"
        );
    }
    set(EmbeddingFaults::default());
    let names = found(&find(&c, BY_MEANING).await);
    assert!(names[0].ends_with("_add"), "recovered: {names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openai_path_sends_the_key_and_the_cache_file_survives_a_restart() {
    let Some(dir) = model_dir() else { return };
    let model = LocalEmbedder::load(&dir).unwrap();
    let (svc, _task) = serve_embeddings_in_process(model, 64, Some("sk-test".into())).await;
    let cache = temp_path("emb");
    let optimizer = format!(
        "  embeddingService: {}\n  embeddingProvider: openai\n  embeddingModel: all-minilm\n  embeddingCacheFile: {:?}\n",
        svc.url,
        cache.display().to_string()
    );
    let env = [("OPENAI_API_KEY", "sk-test")];
    {
        let gw = gateway(&optimizer, &env);
        let c = legacy_connect(&gw.url, json!({})).await;
        let names = found(&find(&c, BY_MEANING).await);
        assert!(names[0].ends_with("_add"), "{names:?}");
    }
    let before = svc.inputs.load(Ordering::SeqCst);
    assert!(before > 1);
    let gw = gateway(&optimizer, &env);
    let c = legacy_connect(&gw.url, json!({})).await;
    let names = found(&find(&c, BY_MEANING).await);
    assert!(names[0].ends_with("_add"), "{names:?}");
    assert_eq!(
        svc.inputs.load(Ordering::SeqCst),
        before + 1,
        "after a restart only the query is embedded: tool vectors came from the cache file"
    );
    let _ = std::fs::remove_file(cache);
}

/// An independent client (rmcp) finds then calls through the optimizer, on both revisions.
#[tokio::test(flavor = "multi_thread")]
async fn rmcp_clients_find_then_call_on_both_revisions() {
    use rmcp::model::CallToolRequestParams;
    let Some(dir) = model_dir() else { return };
    let gw = gateway(
        &format!(
            "  embeddingProvider: local\n  embeddingModelPath: {:?}\n",
            dir.display().to_string()
        ),
        &[],
    );
    let object = |v: Value| v.as_object().unwrap().clone();
    for modern in [false, true] {
        let answerer = Answerer::new("rmcp-optimizer", json!({}));
        let client = if modern {
            rmcp_modern(&gw.url, answerer).await
        } else {
            rmcp_legacy(&gw.url, answerer).await
        };
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["call_tool", "find_tool"], "modern={modern}");
        let found = client
            .call_tool(
                CallToolRequestParams::new("find_tool")
                    .with_arguments(object(json!({"tool_description": BY_MEANING}))),
            )
            .await
            .unwrap();
        let found = serde_json::to_value(&found).unwrap();
        let first = found["structuredContent"]["tools"][0]["name"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(first.ends_with("_add"), "modern={modern}: {found}");
        let r = client
            .call_tool(
                CallToolRequestParams::new("call_tool").with_arguments(object(
                    json!({"tool_name": first, "parameters": {"a": 7, "b": 35}}),
                )),
            )
            .await
            .unwrap();
        let r = serde_json::to_value(&r).unwrap();
        assert_eq!(r["structuredContent"]["sum"], 42.0, "modern={modern}: {r}");
        client.cancel().await.ok();
    }
}

//! A TEI-compatible embedding server (`GET /info`, `POST /embed`) that also answers the
//! OpenAI `POST /embeddings` shape, serving a real model through vmcp's local embedder, so the
//! optimizer's service path is tested against the same vectors as its local path. It can be
//! made slow, down or wrong (vectors of another dimension) while it runs, and counts what it
//! embedded so tests can see the cache at work.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use vmcp_embed::{Embedder, LocalEmbedder};

/// How the server misbehaves; change it while the server runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmbeddingFaults {
    /// Wait this long before answering.
    pub delay: Duration,
    /// Answer 503 to every embedding request.
    pub down: bool,
    /// Cut every vector to this many dimensions.
    pub dimension: Option<usize>,
}

/// A running embedding server's handles.
#[derive(Debug, Clone)]
pub struct EmbeddingServer {
    /// `http://127.0.0.1:PORT` (TEI base URL; the OpenAI base URL too).
    pub url: String,
    /// Change to make the server misbehave.
    pub faults: Arc<Mutex<EmbeddingFaults>>,
    /// Texts embedded so far.
    pub inputs: Arc<AtomicUsize>,
}

#[derive(Debug)]
struct ServerState {
    model: LocalEmbedder,
    max_batch: usize,
    api_key: Option<String>,
    faults: Arc<Mutex<EmbeddingFaults>>,
    inputs: Arc<AtomicUsize>,
}

/// Serves `model` on `127.0.0.1:0`; `/info` reports `max_batch`; with `api_key`, `/embeddings`
/// requires `Authorization: Bearer <api_key>`.
///
/// # Panics
/// If no local port can be bound.
pub async fn serve_embeddings_in_process(
    model: LocalEmbedder,
    max_batch: usize,
    api_key: Option<String>,
) -> (EmbeddingServer, JoinHandle<()>) {
    let faults = Arc::new(Mutex::new(EmbeddingFaults::default()));
    let inputs = Arc::new(AtomicUsize::new(0));
    let state = Arc::new(ServerState {
        model,
        max_batch,
        api_key,
        faults: faults.clone(),
        inputs: inputs.clone(),
    });
    let router = Router::new()
        .route("/info", get(info))
        .route("/embed", post(embed_tei))
        .route("/embeddings", post(embed_openai))
        .with_state(state);
    let (url, task) = crate::http::serve_in_process(router, "").await;
    (
        EmbeddingServer {
            url,
            faults,
            inputs,
        },
        task,
    )
}

async fn info(State(s): State<Arc<ServerState>>) -> Response {
    axum::Json(json!({
        "model_id": "sentence-transformers/all-MiniLM-L6-v2",
        "model_type": {"embedding": {"pooling": "mean"}},
        "max_client_batch_size": s.max_batch,
    }))
    .into_response()
}

/// Embeds the texts under `key`, applying the faults; Err is the error response.
async fn run(s: &ServerState, body: &Value, key: &str) -> Result<Vec<Vec<f32>>, Response> {
    let faults = s.faults.lock().map(|f| f.clone()).unwrap_or_default();
    tokio::time::sleep(faults.delay).await;
    if faults.down {
        return Err((StatusCode::SERVICE_UNAVAILABLE, "down for the test").into_response());
    }
    let texts: Vec<String> = match body.get(key) {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .map(|t| t.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| bad(&format!("{key} must hold strings")))?,
        _ => return Err(bad(&format!("{key} is required"))),
    };
    if texts.len() > s.max_batch {
        return Err(bad(&format!(
            "batch of {} is larger than max_client_batch_size {}",
            texts.len(),
            s.max_batch
        )));
    }
    s.inputs.fetch_add(texts.len(), Ordering::SeqCst);
    let mut vectors = s
        .model
        .embed(&texts)
        .await
        .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response())?;
    if let Some(d) = faults.dimension {
        vectors.iter_mut().for_each(|v| v.truncate(d));
    }
    Ok(vectors)
}

fn bad(message: &str) -> Response {
    (
        StatusCode::UNPROCESSABLE_ENTITY,
        axum::Json(json!({"error": message, "error_type": "Validation"})),
    )
        .into_response()
}

async fn embed_tei(
    State(s): State<Arc<ServerState>>,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    match run(&s, &body, "inputs").await {
        Ok(vectors) => axum::Json(vectors).into_response(),
        Err(r) => r,
    }
}

async fn embed_openai(
    State(s): State<Arc<ServerState>>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    if let Some(key) = &s.api_key {
        let sent = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if sent != Some(key.as_str()) {
            return (StatusCode::UNAUTHORIZED, "bad api key").into_response();
        }
    }
    if body.get("encoding_format").and_then(Value::as_str) != Some("float")
        || body.get("model").and_then(Value::as_str).is_none()
    {
        return bad("model and encoding_format: float are required");
    }
    match run(&s, &body, "input").await {
        Ok(vectors) => {
            // Out of order on purpose: clients must sort by index.
            let data: Vec<Value> = vectors
                .into_iter()
                .enumerate()
                .rev()
                .map(|(i, v)| json!({"object": "embedding", "index": i, "embedding": v}))
                .collect();
            axum::Json(json!({"object": "list", "data": data, "model": body["model"]}))
                .into_response()
        }
        Err(r) => r,
    }
}

//! Embedding services, called as ToolHive calls them.
//!
//! TEI (Hugging Face text-embeddings-inference): `GET /info` once for `max_client_batch_size`
//! (32 when it cannot be read), then `POST /embed {"inputs": [...], "truncate": true}` per batch,
//! answered with an array of vectors. OpenAI-compatible: `POST /embeddings {"model", "input":
//! [...], "encoding_format": "float"}` with `Authorization: Bearer $OPENAI_API_KEY` (omitted when
//! empty) and the configured extra headers, answered with `{"data": [{"index", "embedding"}]}`.

use std::time::Duration;

use futures_util::future::BoxFuture;
use reqwest::Client;
use serde_json::{Value, json};
use tokio::sync::OnceCell;

use crate::{EmbedError, Embedder};

/// Largest answer read from a service (a batch of 32 vectors of 4,096 floats is ~1.5 MB).
const MAX_ANSWER: usize = 32 * 1024 * 1024;
/// TEI's batch size when `/info` does not say.
const TEI_DEFAULT_BATCH: usize = 32;
/// Inputs per OpenAI request (the API accepts 2,048).
const OPENAI_BATCH: usize = 256;

/// A TEI server.
#[derive(Debug)]
pub struct TeiEmbedder {
    client: Client,
    base: String,
    timeout: Duration,
    batch: OnceCell<usize>,
    id: String,
}

impl TeiEmbedder {
    /// A client for the TEI server at `base` (e.g. `http://tei:8080`).
    #[must_use]
    pub fn new(client: Client, base: &str, timeout: Duration) -> Self {
        let base = base.trim_end_matches('/').to_owned();
        Self {
            id: format!("tei:{base}"),
            client,
            base,
            timeout,
            batch: OnceCell::new(),
        }
    }

    async fn batch_size(&self) -> usize {
        *self
            .batch
            .get_or_init(|| async {
                let url = format!("{}/info", self.base);
                match send(self.client.get(&url).timeout(self.timeout)).await {
                    Ok(info) => info
                        .get("max_client_batch_size")
                        .and_then(Value::as_u64)
                        .filter(|&n| n > 0)
                        .map_or(TEI_DEFAULT_BATCH, |n| n as usize),
                    Err(e) => {
                        tracing::warn!(error = %e, "TEI /info unreadable; batching by {TEI_DEFAULT_BATCH}");
                        TEI_DEFAULT_BATCH
                    }
                }
            })
            .await
    }
}

impl Embedder for TeiEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            let batch = self.batch_size().await;
            let url = format!("{}/embed", self.base);
            let mut out = Vec::with_capacity(texts.len());
            for chunk in texts.chunks(batch) {
                let body = json!({"inputs": chunk, "truncate": true});
                let answer = send(post_json(&self.client, &url, self.timeout, &body)).await?;
                out.extend(vectors(answer.as_array(), chunk.len(), "/embed")?);
            }
            same_dimension(&out)?;
            Ok(out)
        })
    }
}

/// An OpenAI-compatible `/embeddings` endpoint.
pub struct OpenAiEmbedder {
    client: Client,
    base: String,
    model: String,
    api_key: Option<String>,
    headers: Vec<(String, String)>,
    timeout: Duration,
    id: String,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("base", &self.base)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

impl OpenAiEmbedder {
    /// A client for `base` (e.g. `https://api.openai.com/v1`) and `model`; `api_key` is sent as a
    /// bearer token when non-empty; `headers` are added to every request.
    #[must_use]
    pub fn new(
        client: Client,
        base: &str,
        model: &str,
        api_key: Option<String>,
        headers: Vec<(String, String)>,
        timeout: Duration,
    ) -> Self {
        let base = base.trim_end_matches('/').to_owned();
        Self {
            id: format!("openai:{base}:{model}"),
            client,
            base,
            model: model.to_owned(),
            api_key: api_key.filter(|k| !k.is_empty()),
            headers,
            timeout,
        }
    }
}

impl Embedder for OpenAiEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            let url = format!("{}/embeddings", self.base);
            let mut out = Vec::with_capacity(texts.len());
            for chunk in texts.chunks(OPENAI_BATCH) {
                let body = json!({"model": self.model, "input": chunk, "encoding_format": "float"});
                let mut req = post_json(&self.client, &url, self.timeout, &body);
                if let Some(key) = &self.api_key {
                    req = req.bearer_auth(key);
                }
                for (k, v) in &self.headers {
                    req = req.header(k.as_str(), v.as_str());
                }
                let answer = send(req).await?;
                let mut data: Vec<&Value> = answer
                    .get("data")
                    .and_then(Value::as_array)
                    .map(|d| d.iter().collect())
                    .unwrap_or_default();
                data.sort_by_key(|d| d.get("index").and_then(Value::as_u64).unwrap_or(u64::MAX));
                let vecs: Vec<Value> = data
                    .iter()
                    .filter_map(|d| d.get("embedding").cloned())
                    .collect();
                out.extend(vectors(Some(&vecs), chunk.len(), "/embeddings")?);
            }
            same_dimension(&out)?;
            Ok(out)
        })
    }
}

/// A POST of `body` as JSON, bounded by `timeout`.
fn post_json(
    client: &Client,
    url: &str,
    timeout: Duration,
    body: &Value,
) -> reqwest::RequestBuilder {
    client
        .post(url)
        .timeout(timeout)
        .header("content-type", "application/json")
        .body(body.to_string())
}

/// Sends a request and reads a bounded JSON answer.
async fn send(req: reqwest::RequestBuilder) -> Result<Value, EmbedError> {
    let fail = |m: String| EmbedError::Service(m);
    let mut resp = req.send().await.map_err(|e| {
        fail(if e.is_timeout() {
            "timed out".into()
        } else {
            format!("unreachable: {}", without_url(&e))
        })
    })?;
    let status = resp.status();
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| {
        fail(if e.is_timeout() {
            "timed out".into()
        } else {
            format!("answer unreadable: {}", without_url(&e))
        })
    })? {
        if body.len() + chunk.len() > MAX_ANSWER {
            return Err(fail(format!("answer larger than {MAX_ANSWER} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
        return Err(fail(format!("HTTP {status}: {text}")));
    }
    serde_json::from_slice(&body).map_err(|e| fail(format!("answer is not JSON: {e}")))
}

/// reqwest's messages end with the URL; drop it (a query string could hold a key).
fn without_url(e: &reqwest::Error) -> String {
    let mut e = e.to_string();
    if let Some(i) = e.find(" for url (") {
        e.truncate(i);
    }
    e
}

fn vectors(
    list: Option<&Vec<Value>>,
    want: usize,
    what: &str,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let bad = |m: String| EmbedError::Service(format!("{what}: {m}"));
    let list = list.ok_or_else(|| bad("answer has no vectors".into()))?;
    if list.len() != want {
        return Err(bad(format!("{} vectors for {want} inputs", list.len())));
    }
    list.iter()
        .map(|v| {
            let v = v
                .as_array()
                .ok_or_else(|| bad("a vector is not an array".into()))?;
            v.iter()
                .map(|x| {
                    x.as_f64()
                        .map(|x| x as f32)
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| bad("a vector holds a non-number".into()))
                })
                .collect()
        })
        .collect()
}

fn same_dimension(vs: &[Vec<f32>]) -> Result<(), EmbedError> {
    let Some(first) = vs.first() else {
        return Ok(());
    };
    if first.is_empty() || vs.iter().any(|v| v.len() != first.len()) {
        return Err(EmbedError::Service(
            "vectors of different dimensions in one answer".into(),
        ));
    }
    Ok(())
}

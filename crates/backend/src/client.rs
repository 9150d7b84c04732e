//! The HTTP client every HTTP backend uses, with one connection pool per serving thread.
//!
//! The edge serves on one single-threaded runtime per core. A pooled backend connection is driven
//! by a task on the runtime that opened it, so a pool shared by all threads would hand thread A's
//! requests to connections driven by thread B and pay a cross-thread wake-up (an IPI on a VM) twice
//! per call. Each serving thread therefore gets its own pool: a call stays on one thread from the
//! client's socket to the backend's and back.

use std::cell::Cell;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures_util::future::Either;
use http_body_util::BodyExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{IntoUrl, RequestBuilder, StatusCode, Url};

use crate::error::BackendError;
use crate::h1_pool::{H1Pool, PooledBody};
use crate::redirect;

/// Largest JSON body read from a backend.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// MCP's request headers, as names that need no parsing or allocation per request.
pub(crate) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
pub(crate) const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(crate) const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
pub(crate) const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

thread_local! {
    /// This thread's pool slot: 0 for threads that are not serving threads.
    static SLOT: Cell<usize> = const { Cell::new(0) };
}

tokio::task_local! {
    /// The client's request headers the config passes through (`passthroughHeaders`), for the
    /// backend request being made: set around one request, read by the POST builders. (A task
    /// local rather than a parameter through every transport: only POSTs of that request carry
    /// them, and nothing the request spawns.)
    static PASSTHROUGH: HeaderMap;
}

/// Runs `request` with `headers` passed through on its POSTs. (Not an `async fn`, which would
/// hold `request` twice and so double every backend request's future.)
pub(crate) fn with_passthrough<F: Future>(
    headers: Option<&HeaderMap>,
    request: F,
) -> impl Future<Output = F::Output> {
    match headers.filter(|h| !h.is_empty()) {
        Some(h) => Either::Left(PASSTHROUGH.scope(h.clone(), request)),
        None => Either::Right(request),
    }
}

/// The passed-through headers of the request being made, if any.
pub(crate) fn passthrough_headers() -> Option<HeaderMap> {
    PASSTHROUGH.try_with(HeaderMap::clone).ok()
}

/// The passed-through headers of the request being made, added to `post`.
pub(crate) fn passed_through(post: Post) -> Post {
    match passthrough_headers() {
        Some(extra) => post.headers(&extra),
        None => post,
    }
}

/// A connection's request headers: the backend's static ones and, for credentials that depend on
/// the caller, the current credential, swapped in before a request (requests in flight keep the
/// map they started with). Cheap to clone; clones share the map.
#[derive(Clone)]
pub struct Headers(Arc<arc_swap::ArcSwap<HeaderMap>>);

impl Headers {
    pub(crate) fn new(map: HeaderMap) -> Self {
        Self(Arc::new(arc_swap::ArcSwap::from_pointee(map)))
    }

    /// The current map (no copy).
    pub(crate) fn load(&self) -> arc_swap::Guard<Arc<HeaderMap>> {
        self.0.load()
    }

    /// A copy, for builders that take the map by value.
    pub(crate) fn to_map(&self) -> HeaderMap {
        (**self.0.load()).clone()
    }

    /// Sets `name` to `value` unless it already has that value.
    pub(crate) fn set(&self, name: &HeaderName, value: &HeaderValue) {
        if self.0.load().get(name) == Some(value) {
            return;
        }
        let mut next = self.to_map();
        next.insert(name.clone(), value.clone());
        self.0.store(Arc::new(next));
    }
}

/// The calling thread's slot: 0 outside serving threads, `index + 1` on serving thread `index`.
pub(crate) fn current_slot() -> usize {
    SLOT.with(Cell::get)
}

/// Marks the current thread as serving thread `index` (from 0), so its backend calls use their own
/// connection pool. Called once by each serving thread before it starts.
pub fn set_serving_thread(index: usize) {
    SLOT.with(|s| s.set(index + 1));
}

/// Pooled HTTP clients, one per serving thread (built on first use) plus one for other threads.
/// Cloning is cheap and shares the pools.
#[derive(Clone)]
pub struct HttpClient {
    shared: reqwest::Client,
    per_thread: Arc<[OnceLock<reqwest::Client>]>,
    /// Extra trust anchors (a backend's `caBundlePath`).
    roots: Arc<[reqwest::Certificate]>,
}

impl HttpClient {
    /// A client with a pool for each of up to `serving_threads` serving threads.
    ///
    /// # Errors
    /// When the TLS stack cannot be initialised.
    pub fn new(serving_threads: usize) -> Result<Self, BackendError> {
        Ok(Self {
            shared: crate::http_client()?,
            per_thread: (0..serving_threads).map(|_| OnceLock::new()).collect(),
            roots: Arc::new([]),
        })
    }

    /// A client like this one that also trusts the CA certificates of `pem` (a backend's
    /// `caBundlePath`), with pools of its own.
    ///
    /// # Errors
    /// When `pem` holds no certificate or the TLS stack cannot be initialised.
    pub fn trusting(&self, pem: &[u8]) -> Result<Self, BackendError> {
        let roots = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| BackendError::Unavailable(format!("CA bundle is not PEM: {e}")))?;
        if roots.is_empty() {
            return Err(BackendError::Unavailable(
                "CA bundle holds no certificate".into(),
            ));
        }
        Ok(Self {
            shared: crate::http_client_trusting(&roots)?,
            per_thread: (0..self.per_thread.len())
                .map(|_| OnceLock::new())
                .collect(),
            roots: roots.into(),
        })
    }

    /// The pool of the calling thread.
    fn here(&self) -> &reqwest::Client {
        match current_slot()
            .checked_sub(1)
            .and_then(|i| self.per_thread.get(i))
        {
            // The settings built fine for the shared pool; should a second build fail anyway
            // (out of resources), the shared pool still works.
            Some(pool) => pool.get_or_init(|| {
                crate::http_client_trusting(&self.roots).unwrap_or_else(|_| self.shared.clone())
            }),
            None => &self.shared,
        }
    }

    /// Starts a POST on the calling thread's pool.
    pub(crate) fn post(&self, url: impl IntoUrl) -> RequestBuilder {
        self.here().post(url)
    }

    /// Where POSTs to `url` go: plain `http://` endpoints get a lean pool of their own, unless a
    /// proxy is configured in the environment (reqwest honours it; the lean pool does not).
    pub(crate) fn endpoint(&self, url: Url) -> Endpoint {
        let pool = if proxy_configured() {
            None
        } else {
            H1Pool::for_url(&url, self.per_thread.len() + 1)
        };
        Endpoint { url, pool }
    }

    /// Starts a POST to `endpoint` on the calling thread's connections.
    pub(crate) fn post_to(&self, endpoint: &Endpoint) -> Post {
        match &endpoint.pool {
            Some(pool) => Post::Pooled {
                pool: pool.clone(),
                headers: HeaderMap::new(),
                invalid: None,
            },
            None => Post::General(self.post(endpoint.url.clone())),
        }
    }

    /// Starts a GET on the calling thread's pool.
    pub(crate) fn get(&self, url: impl IntoUrl) -> RequestBuilder {
        self.here().get(url)
    }

    /// Starts a DELETE on the calling thread's pool.
    pub(crate) fn delete(&self, url: impl IntoUrl) -> RequestBuilder {
        self.here().delete(url)
    }
}

fn proxy_configured() -> bool {
    ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
        .iter()
        .any(|k| std::env::var_os(k).is_some_and(|v| !v.is_empty()))
}

/// A backend URL that POSTs are sent to, with its lean pool when it qualifies for one.
#[derive(Clone)]
pub(crate) struct Endpoint {
    url: Url,
    pool: Option<Arc<H1Pool>>,
}

impl Endpoint {
    pub(crate) fn url(&self) -> &Url {
        &self.url
    }
}

/// A POST being built: on the lean pool or through reqwest.
pub(crate) enum Post {
    Pooled {
        pool: Arc<H1Pool>,
        headers: HeaderMap,
        /// The first header that could not be encoded; reported by `send`.
        invalid: Option<String>,
    },
    General(RequestBuilder),
}

impl Post {
    /// Adds a header (names and values are validated; a bad one fails `send`).
    pub(crate) fn header<K, V>(self, name: K, value: V) -> Self
    where
        HeaderName: TryFrom<K>,
        <HeaderName as TryFrom<K>>::Error: Into<http::Error>,
        HeaderValue: TryFrom<V>,
        <HeaderValue as TryFrom<V>>::Error: Into<http::Error>,
    {
        match self {
            Self::General(b) => Self::General(b.header(name, value)),
            Self::Pooled {
                pool,
                mut headers,
                mut invalid,
            } => {
                match (HeaderName::try_from(name), HeaderValue::try_from(value)) {
                    (Ok(n), Ok(v)) => {
                        headers.append(n, v);
                    }
                    (Err(e), _) => invalid = invalid.or(Some(e.into().to_string())),
                    (_, Err(e)) => invalid = invalid.or(Some(e.into().to_string())),
                }
                Self::Pooled {
                    pool,
                    headers,
                    invalid,
                }
            }
        }
    }

    /// Adds every header of `extra` (a backend's static headers; usually none).
    pub(crate) fn headers(self, extra: &HeaderMap) -> Self {
        if extra.is_empty() {
            return self;
        }
        match self {
            Self::General(b) => Self::General(b.headers(extra.clone())),
            Self::Pooled {
                pool,
                mut headers,
                invalid,
            } => {
                for (n, v) in extra {
                    headers.append(n.clone(), v.clone());
                }
                Self::Pooled {
                    pool,
                    headers,
                    invalid,
                }
            }
        }
    }

    /// Sends it with `body`; the error describes the transport failure, or the redirect the
    /// backend answered (never followed: see `redirect.rs`).
    pub(crate) async fn send(self, body: impl Into<Bytes>) -> Result<Response, String> {
        match self {
            Self::General(b) => {
                let resp = b
                    .body(body.into())
                    .send()
                    .await
                    .map_err(|e| crate::error::describe(&e))?;
                if resp.status().is_redirection() {
                    return Err(redirect::refused(resp.status(), resp.headers(), resp.url()));
                }
                Ok(Response::General(resp))
            }
            Self::Pooled {
                pool,
                headers,
                invalid,
            } => {
                if let Some(problem) = invalid {
                    return Err(format!("invalid request header: {problem}"));
                }
                let resp = pool.post(headers, body.into()).await?;
                if resp.status().is_redirection() {
                    return Err(redirect::refused(resp.status(), resp.headers(), pool.url()));
                }
                Ok(Response::Pooled(resp))
            }
        }
    }
}

/// A backend's answer to a POST, from either stack.
pub(crate) enum Response {
    Pooled(http::Response<PooledBody>),
    General(reqwest::Response),
}

impl From<reqwest::Response> for Response {
    fn from(r: reqwest::Response) -> Self {
        Self::General(r)
    }
}

impl Response {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Self::Pooled(r) => r.status(),
            Self::General(r) => r.status(),
        }
    }

    pub(crate) fn headers(&self) -> &HeaderMap {
        match self {
            Self::Pooled(r) => r.headers(),
            Self::General(r) => r.headers(),
        }
    }

    /// Whether the answer is an SSE stream (rather than one JSON body).
    pub(crate) fn is_event_stream(&self) -> bool {
        self.headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.as_bytes().get(..17))
            .is_some_and(|t| t.eq_ignore_ascii_case(b"text/event-stream"))
    }

    /// The next piece of the body (`None` at its end); `Err` describes a broken transfer.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, String> {
        match self {
            Self::General(r) => r.chunk().await.map_err(|e| crate::error::describe(&e)),
            Self::Pooled(r) => loop {
                match r.body_mut().frame().await {
                    None => return Ok(None),
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            return Ok(Some(data));
                        }
                        // Trailers carry nothing we use.
                    }
                    Some(Err(e)) => return Err(crate::error::describe(&e)),
                }
            },
        }
    }

    /// The whole body, refused past [`MAX_BODY`] bytes.
    pub(crate) async fn read_body(mut self) -> Result<Vec<u8>, BackendError> {
        let mut body = Vec::new();
        while let Some(chunk) = self
            .chunk()
            .await
            .map_err(|e| BackendError::Unavailable(format!("response body broke: {e}")))?
        {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(BackendError::Protocol(format!(
                    "response larger than {MAX_BODY} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// The start of the body as text, for error messages (at most `limit` bytes read).
    pub(crate) async fn text_prefix(mut self, limit: usize) -> String {
        let mut body = Vec::new();
        while body.len() < limit {
            match self.chunk().await {
                Ok(Some(c)) => body.extend_from_slice(&c),
                _ => break,
            }
        }
        body.truncate(limit);
        String::from_utf8_lossy(&body).into_owned()
    }

    /// Reads the body to its end (so its connection can be reused), ignoring it.
    pub(crate) async fn drain(mut self) {
        while let Ok(Some(_)) = self.chunk().await {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every backend request is wrapped, twice: the wrapper must not hold the request twice.
    #[test]
    fn passthrough_holds_its_request_once() {
        let request = async {
            let state = [1u8; 4096];
            std::future::ready(()).await;
            state[0]
        };
        let alone = std::mem::size_of_val(&request);
        let wrapped = with_passthrough(None, request);
        assert!(alone >= 4096);
        assert!(std::mem::size_of_val(&wrapped) < alone + 128);
    }
}

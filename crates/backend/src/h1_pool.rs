//! A lean HTTP/1.1 connection pool for plain `http://` backends: the hot path of every proxied call.
//!
//! reqwest's general-purpose stack (URL re-parsing, redirect and retry layers, a shared pool keyed
//! by origin) was ~10% of the gateway's CPU per call. Here a pool belongs to one endpoint, keeps
//! idle connections per serving thread (so a connection is driven by the thread that uses it), and
//! hands out a connection only after its previous response was read to the end.
//!
//! A request dropped before its response completes closes its connection (hyper's HTTP/1
//! semantics), which is how a cancelled call reaches the backend.

use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Uri, header};
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::client::current_slot;
use crate::error::describe;

type Sender = SendRequest<Full<Bytes>>;

/// Idle connections kept per serving thread; more are closed when they come back.
const MAX_IDLE_PER_THREAD: usize = 64;

/// Connections to one `http://host:port/path` endpoint.
pub(crate) struct H1Pool {
    /// The endpoint, for resolving a redirect's `Location` in its error.
    url: reqwest::Url,
    /// `host:port`, for connecting.
    address: String,
    /// The `Host` header.
    host: HeaderValue,
    /// The request target in origin form (`/path?query`).
    target: Uri,
    /// Idle connections by serving-thread slot.
    idle: Box<[Mutex<Vec<Sender>>]>,
}

impl H1Pool {
    /// A pool for `url` if it is plain `http://` with no credentials in it, else `None`.
    pub(crate) fn for_url(url: &reqwest::Url, slots: usize) -> Option<Arc<Self>> {
        if url.scheme() != "http" || !url.username().is_empty() || url.password().is_some() {
            return None;
        }
        let host = url.host_str()?;
        let port = url.port_or_known_default()?;
        let authority = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_owned(),
        };
        let target = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        // IPv6 literals come back from `host_str` already bracketed.
        Some(Arc::new(Self {
            url: url.clone(),
            address: format!("{host}:{port}"),
            host: HeaderValue::from_str(&authority).ok()?,
            target: target.parse().ok()?,
            idle: (0..slots.max(1)).map(|_| Mutex::new(Vec::new())).collect(),
        }))
    }

    /// The endpoint.
    pub(crate) fn url(&self) -> &reqwest::Url {
        &self.url
    }

    /// POSTs `body` with `headers`; the response body must be read to its end for the connection
    /// to be reused. A redirect is answered like any response: this pool never follows one.
    pub(crate) async fn post(
        self: &Arc<Self>,
        mut headers: HeaderMap,
        body: Bytes,
    ) -> Result<http::Response<PooledBody>, String> {
        headers.insert(header::HOST, self.host.clone());
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.target.clone();
        *request.headers_mut() = headers;
        // A pooled connection may turn out to be closed before the request was written; then
        // (and only then) the request is sent again on a fresh connection.
        let mut reused = self.checkout().await;
        loop {
            let fresh = reused.is_none();
            let mut sender = match reused.take() {
                Some(s) => s,
                None => self.connect().await?,
            };
            match sender.try_send_request(request).await {
                Ok(response) => {
                    let pool = Arc::downgrade(self);
                    return Ok(response.map(|body| PooledBody {
                        body,
                        sender: Some(sender),
                        pool,
                    }));
                }
                Err(mut e) => match e.take_message() {
                    Some(again) if !fresh => request = again,
                    _ => return Err(describe(e.error())),
                },
            }
        }
    }

    /// An idle connection of this thread that is ready for a request, if any.
    async fn checkout(&self) -> Option<Sender> {
        loop {
            let mut sender = self.idle[self.slot()]
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .pop()?;
            // Returned only after its response ended, so this resolves at once unless the backend
            // closed the connection meanwhile.
            if !sender.is_closed() && sender.ready().await.is_ok() {
                return Some(sender);
            }
        }
    }

    async fn connect(&self) -> Result<Sender, String> {
        let stream = TcpStream::connect(&self.address)
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", self.address))?;
        let _ = stream.set_nodelay(true);
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| describe(&e))?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::trace!(error = %e, "backend connection ended with an error");
            }
        });
        Ok(sender)
    }

    fn give_back(&self, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let mut idle = self.idle[self.slot()]
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE_PER_THREAD {
            idle.push(sender);
        }
    }

    fn slot(&self) -> usize {
        current_slot() % self.idle.len()
    }
}

/// A response body that returns its connection to the pool once read to the end. Dropped earlier,
/// the connection is closed with it.
pub(crate) struct PooledBody {
    body: Incoming,
    sender: Option<Sender>,
    pool: Weak<H1Pool>,
}

impl PooledBody {
    fn release(&mut self) {
        if let (Some(sender), Some(pool)) = (self.sender.take(), self.pool.upgrade()) {
            pool.give_back(sender);
        }
    }
}

impl Body for PooledBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.body.is_end_stream() {
            self.release();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for PooledBody {
    fn drop(&mut self) {
        // An empty body (202, Content-Length: 0) is complete without ever being polled.
        if self.body.is_end_stream() {
            self.release();
        }
    }
}

#[cfg(test)]
mod tests;

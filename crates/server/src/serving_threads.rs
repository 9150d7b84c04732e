//! Serving threads: one single-threaded runtime per core, each owning the client connections it is
//! handed and (through [`vmcp_backend::set_serving_thread`]) its own backend connection pools.
//!
//! A proxied call then runs on one thread from the client's socket to the backend's and back. On a
//! shared multi-threaded runtime the server connection, the handler and the backend connection
//! task land on different workers and every call pays cross-thread wake-ups; on a VM each is an
//! inter-processor interrupt. One thread accepts and deals connections round-robin, so load spreads
//! evenly without `SO_REUSEPORT`.

use std::io;
use std::time::Duration;

use axum::Router;
use futures_util::future::Either;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Handle;
use tokio::sync::{mpsc, watch};
use tower::ServiceExt;

use crate::AppState;
use crate::audit::Peer;
use crate::conn_limits::{self, Clock, ConnectionLimits, TimedStream, TrackedBody};

/// What a connection serves: the router, and the Legacy POST handler to call without it.
#[derive(Clone)]
pub(crate) struct App {
    pub(crate) router: Router,
    /// Set when nothing wraps `POST /mcp` in the router (no audit layer): the busiest route then
    /// skips routing and the router's boxing of its future (~1 µs and a copy of ~5 KB per call).
    pub(crate) direct_post: Option<std::sync::Arc<AppState>>,
}

impl App {
    fn direct_post(
        &self,
        req: &http::Request<hyper::body::Incoming>,
    ) -> Option<&std::sync::Arc<AppState>> {
        self.direct_post
            .as_ref()
            .filter(|_| req.method() == http::Method::POST && req.uri().path() == "/mcp")
    }
}

/// The serving threads' runtimes. They live until the process exits: tasks they started (backend
/// connections, child processes' pipes) stay in use by the rest of the process.
pub struct ServingThreads {
    handles: Vec<Handle>,
}

impl ServingThreads {
    /// Starts `threads` serving threads (at least one); they serve once handed to [`crate::serve`].
    ///
    /// # Errors
    /// When a thread or its runtime cannot be created.
    pub fn start(threads: usize) -> io::Result<Self> {
        let mut handles = Vec::with_capacity(threads.max(1));
        for index in 0..threads.max(1) {
            let (handle_tx, handle_rx) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name(format!("vmcp-serve-{index}"))
                .spawn(move || {
                    vmcp_backend::set_serving_thread(index);
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build();
                    match runtime {
                        Ok(rt) => {
                            let _ = handle_tx.send(Ok(rt.handle().clone()));
                            rt.block_on(std::future::pending::<()>());
                        }
                        Err(e) => {
                            let _ = handle_tx.send(Err(e));
                        }
                    }
                })?;
            let handle = handle_rx
                .recv()
                .map_err(|_| io::Error::other("a serving thread died while starting"))??;
            handles.push(handle);
        }
        Ok(Self { handles })
    }

    /// How many serving threads there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// Always false: there is at least one serving thread.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// The runtime of serving thread `index` (modulo their number), to run work that should live
    /// on a serving thread.
    #[must_use]
    pub fn handle(&self, index: usize) -> &Handle {
        &self.handles[index % self.handles.len()]
    }

    /// Accepts on `listener` and serves `app` until `stop` resolves; returns once every connection
    /// has finished or `drain` has passed since the stop (then `false`).
    pub(crate) async fn serve(
        &self,
        listener: TcpListener,
        app: App,
        limits: ConnectionLimits,
        stop: impl Future<Output = ()>,
        on_stop: impl FnOnce(),
        drain: Duration,
    ) -> bool {
        let (stopping_tx, stopping_rx) = watch::channel(false);
        // Every connection task holds a sender; the channel closes when the last one ends.
        let (alive_tx, mut alive_rx) = mpsc::channel::<()>(1);
        let mut next = 0usize;
        tokio::pin!(stop);
        loop {
            tokio::select! {
                () = &mut stop => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let handle = &self.handles[next % self.handles.len()];
                        next = next.wrapping_add(1);
                        match stream.into_std() {
                            Ok(stream) => {
                                handle.spawn(connection(
                                    stream,
                                    app.clone(),
                                    limits,
                                    stopping_rx.clone(),
                                    alive_tx.clone(),
                                ));
                            }
                            Err(e) => tracing::debug!(error = %e, "dropping an accepted connection"),
                        }
                    }
                    Err(e) => {
                        // Out of descriptors and the like: back off instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                },
            }
        }
        drop(listener);
        let _ = stopping_tx.send(true);
        on_stop();
        drop(alive_tx);
        tokio::time::timeout(drain, alive_rx.recv()).await.is_ok()
    }
}

/// Serves one client connection (HTTP/1.1) on the current serving thread, closing it when a
/// request's headers or the connection's idleness exceed their bounds.
async fn connection(
    stream: std::net::TcpStream,
    app: App,
    limits: ConnectionLimits,
    mut stopping: watch::Receiver<bool>,
    _alive: mpsc::Sender<()>,
) {
    let stream = match TcpStream::from_std(stream) {
        Ok(s) => s,
        Err(e) => {
            tracing::debug!(error = %e, "cannot adopt an accepted connection");
            return;
        }
    };
    let _ = stream.set_nodelay(true);
    let peer = stream.peer_addr().ok().map(Peer);
    let clock = Clock::new();
    let service = {
        let clock = clock.clone();
        hyper::service::service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
            if let Some(p) = peer {
                req.extensions_mut().insert(p);
            }
            let in_flight = clock.request_started();
            let call = match app.direct_post(&req) {
                Some(state) => {
                    let (parts, body) = req.into_parts();
                    Either::Left(crate::legacy::post_direct(
                        state.clone(),
                        parts.headers,
                        axum::body::Body::new(body),
                    ))
                }
                None => Either::Right(app.router.clone().oneshot(req)),
            };
            async move {
                let resp = call.await?;
                Ok::<_, std::convert::Infallible>(
                    resp.map(|body| TrackedBody::new(body, in_flight)),
                )
            }
        })
    };
    let conn = http1::Builder::new().serve_connection(
        TokioIo::new(TimedStream::new(stream, clock.clone())),
        service,
    );
    tokio::pin!(conn);
    let tick = conn_limits::tick(&limits);
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::trace!(error = %e, "client connection ended with an error");
                }
                return;
            }
            _ = stopping.wait_for(|s| *s) => break,
            () = tokio::time::sleep(tick) => {
                if let Some(why) = clock.expired(&limits) {
                    // Dropping the connection closes the socket; no request is in flight.
                    tracing::debug!(?why, "closing a client connection past its time limit");
                    return;
                }
            }
        }
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

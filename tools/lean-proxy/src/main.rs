//! The leanest two-hop MCP proxy we could write: one backend, every message passed through, and
//! only the MCP work a gateway cannot skip (parse each JSON-RPC message, take the backend's
//! prefix off a `tools/call` name, check the answer is JSON). No sessions of its own, no catalog,
//! no identity, no limits: the backend's session id goes to the client unchanged.
//!
//! Built like vmcp where that is the fast way (a current-thread runtime per core, connections
//! dealt round-robin by one acceptor, a per-thread pool of HTTP/1 connections to the backend,
//! mimalloc), so the harness measures what a hyper-based proxy costs at the least.
//!
//! It takes vmcp's command line as `vmcp-bench` starts it (`serve --config FILE --port 0`) and
//! reads only the first backend's `name` and `url` from that file.

use std::cell::RefCell;
use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Empty, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Body = Either<Full<Bytes>, Either<Incoming, Either<Empty<Bytes>, Idle>>>;

/// An event stream that stays open and says nothing: with `LEAN_PROXY_LOCAL_STREAMS=1`, GET
/// streams end here instead of at the backend, so a stream costs only its client connection.
struct Idle;

impl hyper::body::Body for Idle {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        std::task::Poll::Pending
    }
}

/// Headers passed each way (the ones MCP's Streamable HTTP transport reads).
const FORWARDED: [&str; 5] = [
    "content-type",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

struct Backend {
    /// `host:port`.
    authority: String,
    /// The URL's path, e.g. `/mcp`.
    path: String,
    /// `name_`: what the gateway puts in front of the backend's tool names.
    prefix: String,
}

thread_local! {
    static BACKEND: RefCell<Option<&'static Backend>> = const { RefCell::new(None) };
    /// Idle connections to the backend, this thread's own.
    static POOL: RefCell<Vec<SendRequest<Full<Bytes>>>> = const { RefCell::new(Vec::new()) };
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let config = args
        .iter()
        .position(|a| a == "--config")
        .and_then(|i| args.get(i + 1))
        .expect("usage: lean-proxy serve --config FILE [--port N]");
    let port: u16 = args
        .iter()
        .position(|a| a == "--port")
        .and_then(|i| args.get(i + 1))
        .map_or(0, |p| p.parse().expect("--port: a number"));
    let backend: &'static Backend = Box::leak(Box::new(read_backend(
        &std::fs::read_to_string(config).expect("config"),
    )));

    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut workers = Vec::with_capacity(threads);
    for _ in 0..threads {
        let (tx, mut rx) = mpsc::unbounded_channel::<std::net::TcpStream>();
        workers.push(tx);
        std::thread::spawn(move || {
            BACKEND.with(|b| *b.borrow_mut() = Some(backend));
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
                .expect("runtime");
            let local = tokio::task::LocalSet::new();
            local.block_on(&rt, async move {
                while let Some(std_stream) = rx.recv().await {
                    let Ok(stream) = TcpStream::from_std(std_stream) else {
                        continue;
                    };
                    tokio::task::spawn_local(async move {
                        let service = hyper::service::service_fn(serve);
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            });
        });
    }

    let listener =
        std::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).expect("bind");
    let addr = listener.local_addr().expect("local address");
    println!("lean-proxy listening on http://{addr}/mcp");
    for (n, stream) in listener.incoming().enumerate() {
        let Ok(stream) = stream else { continue };
        let _ = stream.set_nodelay(true);
        let _ = stream.set_nonblocking(true);
        let _ = workers[n % workers.len()].send(stream);
    }
}

/// The first backend's `name` and `url` in a vmcp config (as `vmcp-bench` writes it).
fn read_backend(config: &str) -> Backend {
    let backends = config
        .split_once("\nbackends:")
        .map_or(config, |(_, rest)| rest);
    let value = |key: &str| {
        backends
            .lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix("- ").unwrap_or(l).strip_prefix(key))
            .map(|v| v.trim().trim_matches('"').to_owned())
    };
    let name = value("name:").expect("a backend name");
    let url = value("url:").expect("a backend url");
    let rest = url.strip_prefix("http://").expect("an http:// backend");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    Backend {
        authority: authority.to_owned(),
        path: if path.is_empty() {
            "/".into()
        } else {
            path.into()
        },
        prefix: format!("{name}_"),
    }
}

async fn serve(req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    Ok(match proxy(req).await {
        Ok(r) => r,
        Err(status) => {
            let mut r = Response::new(Either::Right(Either::Right(Either::Left(Empty::new()))));
            *r.status_mut() = status;
            r
        }
    })
}

async fn proxy(req: Request<Incoming>) -> Result<Response<Body>, StatusCode> {
    let backend = BACKEND
        .with(|b| *b.borrow())
        .ok_or(StatusCode::INTERNAL_SERVER_ERROR)?;
    if req.uri().path() == "/readyz" {
        return Ok(Response::new(Either::Right(Either::Right(Either::Left(
            Empty::new(),
        )))));
    }
    if req.method() == Method::GET && local_streams() {
        let mut r = Response::new(Either::Right(Either::Right(Either::Right(Idle))));
        r.headers_mut().insert(
            "content-type",
            hyper::header::HeaderValue::from_static("text/event-stream"),
        );
        return Ok(r);
    }
    let (parts, body) = req.into_parts();
    let body = if parts.method == Method::POST {
        let bytes = body
            .collect()
            .await
            .map_err(|_| StatusCode::BAD_REQUEST)?
            .to_bytes();
        rewrite(bytes, &backend.prefix)?
    } else {
        Bytes::new()
    };
    let mut out = Request::builder()
        .method(parts.method.clone())
        .uri(&backend.path)
        .header("host", &backend.authority);
    for name in FORWARDED {
        if let Some(v) = parts.headers.get(name) {
            out = out.header(name, v);
        }
    }
    let out = out
        .body(Full::new(body))
        .map_err(|_| StatusCode::BAD_REQUEST)?;

    let mut sender = connection(&backend.authority).await?;
    let answer = sender
        .send_request(out)
        .await
        .map_err(|_| StatusCode::BAD_GATEWAY)?;
    let (aparts, abody) = answer.into_parts();
    let mut response = Response::builder().status(aparts.status);
    for name in FORWARDED {
        if let Some(v) = aparts.headers.get(name) {
            response = response.header(name, v);
        }
    }
    let is_json = aparts
        .headers
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !is_json {
        // An event stream (or nothing): passed on as it comes. Its connection stays with it.
        return response
            .body(Either::Right(Either::Left(abody)))
            .map_err(|_| StatusCode::BAD_GATEWAY);
    }
    let bytes = abody
        .collect()
        .await
        .map_err(|_| StatusCode::BAD_GATEWAY)?
        .to_bytes();
    POOL.with(|p| p.borrow_mut().push(sender));
    serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).map_err(|_| StatusCode::BAD_GATEWAY)?;
    response
        .body(Either::Left(Full::new(bytes)))
        .map_err(|_| StatusCode::BAD_GATEWAY)
}

fn local_streams() -> bool {
    static LOCAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LOCAL.get_or_init(|| std::env::var_os("LEAN_PROXY_LOCAL_STREAMS").is_some_and(|v| v == "1"))
}

/// Parses a client message and takes the backend's prefix off a `tools/call` name.
fn rewrite(bytes: Bytes, prefix: &str) -> Result<Bytes, StatusCode> {
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        method: Option<&'a str>,
    }
    let envelope: Envelope = serde_json::from_slice(&bytes).map_err(|_| StatusCode::BAD_REQUEST)?;
    if envelope.method != Some("tools/call") {
        return Ok(bytes);
    }
    let mut message: Value = serde_json::from_slice(&bytes).map_err(|_| StatusCode::BAD_REQUEST)?;
    let name = message
        .pointer_mut("/params/name")
        .ok_or(StatusCode::BAD_REQUEST)?;
    let stripped = name
        .as_str()
        .and_then(|n| n.strip_prefix(prefix))
        .ok_or(StatusCode::NOT_FOUND)?
        .to_owned();
    *name = Value::String(stripped);
    serde_json::to_vec(&message)
        .map(Bytes::from)
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)
}

/// An idle pooled connection, or a new one.
async fn connection(authority: &str) -> Result<SendRequest<Full<Bytes>>, StatusCode> {
    while let Some(mut sender) = POOL.with(|p| p.borrow_mut().pop()) {
        if sender.ready().await.is_ok() {
            return Ok(sender);
        }
    }
    let stream = TcpStream::connect(authority)
        .await
        .map_err(|_| StatusCode::BAD_GATEWAY)?;
    let _ = stream.set_nodelay(true);
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|_| StatusCode::BAD_GATEWAY)?;
    tokio::task::spawn_local(conn);
    Ok(sender)
}

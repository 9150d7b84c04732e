//! A TCP proxy in front of a backend that can be made to fail while it runs: pass traffic,
//! refuse it (every connection reset), answer `401`, add latency to every request, or lie in the
//! backend's answers (stall mid-body, garbage, a wrong JSON-RPC id, another request's answer; see
//! `answers`). Switching mode cuts the connections already open, so a client's pooled keep-alive
//! connection sees the new behaviour at once. It also records every byte clients send through it,
//! for tests that check what a backend received on the wire (headers included) without its
//! cooperation.

mod answers;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How the proxy treats traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultMode {
    /// Forward both ways.
    Pass,
    /// Accept and close at once, as a crashed backend's port does.
    Refuse,
    /// Answer every request with HTTP 401, as a backend refusing the credential does.
    Unauthorized,
    /// Forward, holding each chunk the client sends for this long first.
    Delay(Duration),
    /// Forward each answer's headers and half its body, then send nothing more on that
    /// connection (a backend hung mid-response).
    StallMidBody,
    /// Replace each JSON-RPC answer's body with bytes that are not JSON.
    Garbage,
    /// Change the `id` of each JSON-RPC answer, leaving the rest as it was.
    WrongId,
    /// Answer each JSON-RPC request with the answer the backend gave the request before it (on
    /// any connection): another request's id and content.
    OtherAnswer,
}

/// A running proxy; stops on drop.
pub struct FaultProxy {
    /// `http://127.0.0.1:PORT` plus the target's path (pass the target's full URL to `start`).
    pub url: String,
    mode: watch::Sender<FaultMode>,
    accepted: Arc<AtomicUsize>,
    sent: Arc<Mutex<Vec<u8>>>,
    rewritten: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl FaultProxy {
    /// Starts a proxy to the `http://host:port/path` URL `target`, in [`FaultMode::Pass`].
    ///
    /// # Panics
    /// When `target` is not such a URL or no local port can be bound.
    pub async fn start(target: &str) -> FaultProxy {
        let rest = target.strip_prefix("http://").expect("an http:// URL");
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let upstream = authority.to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("local addr").port();
        let (mode, watch_mode) = watch::channel(FaultMode::Pass);
        let accepted = Arc::new(AtomicUsize::new(0));
        let sent = Arc::new(Mutex::new(Vec::new()));
        let (counter, record) = (accepted.clone(), sent.clone());
        let lies = answers::Lies::default();
        let rewritten = lies.count.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::Relaxed);
                let _ = client.set_nodelay(true);
                tokio::spawn(relay(
                    client,
                    upstream.clone(),
                    watch_mode.clone(),
                    record.clone(),
                    lies.clone(),
                ));
            }
        });
        FaultProxy {
            url: format!("http://127.0.0.1:{port}{path}"),
            mode,
            accepted,
            sent,
            rewritten,
            task,
        }
    }

    /// Switches mode; connections open now are cut.
    pub fn set(&self, mode: FaultMode) {
        self.mode.send_replace(mode);
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::Relaxed)
    }

    /// Answers the proxy has stalled, garbled or rewritten so far.
    pub fn rewritten(&self) -> usize {
        self.rewritten.load(Ordering::Relaxed)
    }

    /// Everything clients sent through so far, as text (lossy).
    #[must_use]
    pub fn sent(&self) -> String {
        String::from_utf8_lossy(&self.sent.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn relay(
    mut client: TcpStream,
    upstream: String,
    mut mode: watch::Receiver<FaultMode>,
    record: Arc<Mutex<Vec<u8>>>,
    lies: answers::Lies,
) {
    let current = *mode.borrow_and_update();
    match current {
        FaultMode::Refuse => {}
        FaultMode::Unauthorized => {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                tokio::select! {
                    n = client.read(&mut buf) => match n {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            let answer = b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: 27\r\nwww-authenticate: Bearer\r\n\r\n{\"error\":\"invalid_token\"}\r\n";
                            if client.write_all(answer).await.is_err() {
                                break;
                            }
                        }
                    },
                    _ = mode.changed() => break,
                }
            }
        }
        FaultMode::Pass
        | FaultMode::Delay(_)
        | FaultMode::StallMidBody
        | FaultMode::Garbage
        | FaultMode::WrongId
        | FaultMode::OtherAnswer => {
            let delay = match current {
                FaultMode::Delay(d) => d,
                _ => Duration::ZERO,
            };
            let Ok(server) = TcpStream::connect(&upstream).await else {
                return;
            };
            let _ = server.set_nodelay(true);
            let (mut cr, mut cw) = client.into_split();
            let (mut sr, mut sw) = server.into_split();
            let up = async {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = match cr.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    record
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .extend_from_slice(&buf[..n]);
                    if !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    if sw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            };
            let down = async {
                match answers::Lie::of(current) {
                    Some(lie) => lies.relay(lie, &mut sr, &mut cw).await,
                    None => {
                        let _ = tokio::io::copy(&mut sr, &mut cw).await;
                    }
                }
            };
            tokio::select! {
                _ = async { tokio::join!(up, down) } => {}
                _ = mode.changed() => {}
            }
        }
    }
}

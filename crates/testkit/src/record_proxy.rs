//! A TCP proxy that records every byte clients send through it, for tests that check what a
//! backend received on the wire (headers included) without the backend's cooperation.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A running recording proxy; stops on drop.
pub struct RecordingProxy {
    /// `http://127.0.0.1:PORT` plus the target's path.
    pub url: String,
    sent: Arc<Mutex<Vec<u8>>>,
    task: JoinHandle<()>,
}

impl RecordingProxy {
    /// Starts a proxy to the `http://host:port/path` URL `target`.
    ///
    /// # Panics
    /// When `target` is not such a URL or no local port can be bound.
    pub async fn start(target: &str) -> RecordingProxy {
        let rest = target.strip_prefix("http://").expect("an http:// URL");
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let upstream = authority.to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("local addr").port();
        let sent = Arc::new(Mutex::new(Vec::new()));
        let record = sent.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(relay(client, upstream.clone(), record.clone()));
            }
        });
        RecordingProxy {
            url: format!("http://127.0.0.1:{port}{path}"),
            sent,
            task,
        }
    }

    /// Everything clients sent so far, as text (lossy).
    #[must_use]
    pub fn sent(&self) -> String {
        String::from_utf8_lossy(&self.sent.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
    }
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn relay(client: TcpStream, upstream: String, record: Arc<Mutex<Vec<u8>>>) {
    let Ok(server) = TcpStream::connect(&upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
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
            if sw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = sw.shutdown().await;
    };
    let down = tokio::io::copy(&mut sr, &mut cw);
    let _ = tokio::join!(up, down);
}

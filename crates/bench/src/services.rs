//! Helper services the harness runs on loopback beside the processes under test: redis-server
//! (Debian's package), an OTLP/HTTP sink that drops what it receives, and the port plumbing they
//! share. Scenario 8, scenario 7 and the `--redis` / `--config-extra` additions all start theirs
//! here.

use std::convert::Infallible;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

/// A helper process (redis-server, haproxy) on a loopback port; killed on drop.
pub(crate) struct Aux {
    _child: Child,
    pub(crate) port: u16,
}

impl Aux {
    /// Wraps a started `child` that listens on `port`.
    pub(crate) fn new(child: Child, port: u16) -> Aux {
        Aux {
            _child: child,
            port,
        }
    }
}

/// A loopback port nobody listens on right now.
pub(crate) fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Whether `program` runs (`haproxy -v`, else `program --version`).
pub(crate) fn installed(program: &str) -> bool {
    std::process::Command::new(program)
        .arg(if program == "haproxy" {
            "-v"
        } else {
            "--version"
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Waits until something accepts connections on loopback `port` (at most 10 s).
pub(crate) async fn wait_port(port: u16, what: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if Instant::now() > deadline {
            bail!("{what} did not listen on {port}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// A `redis-server` on a free loopback port, persistence off.
///
/// # Errors
/// When it cannot be started or does not listen within 10 s.
pub(crate) async fn redis() -> anyhow::Result<Aux> {
    let port = free_port()?;
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("starting redis-server")?;
    wait_port(port, "redis-server").await?;
    Ok(Aux::new(child, port))
}

/// An OTLP/HTTP endpoint that accepts and drops everything, on `127.0.0.1:0`; stops on drop.
pub(crate) struct OtlpSink {
    /// `127.0.0.1:PORT`, as a gateway's `telemetry.endpoint` names it.
    pub(crate) address: String,
    task: JoinHandle<()>,
}

impl OtlpSink {
    /// Starts one.
    ///
    /// # Errors
    /// When no loopback port can be bound.
    pub(crate) async fn start() -> anyhow::Result<OtlpSink> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?.to_string();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let service = service_fn(|_req| async {
                        Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::new())))
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(OtlpSink { address, task })
    }
}

impl Drop for OtlpSink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

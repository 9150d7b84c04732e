//! Finding, building and spawning the `vmcp-fixture` binary from tests in any workspace package.
//!
//! Cargo hands `CARGO_BIN_EXE_vmcp-fixture` only to this package's own tests, so other
//! packages locate the target directory from their own executable and build the fixture once
//! per process.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdout};

/// How long a spawned fixture may take to print its `listening on` line.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// Path of the `vmcp-fixture` binary, built on first use.
///
/// The first call in a process runs `$CARGO build -p vmcp-testkit --bin vmcp-fixture` (with
/// `--release` or `--profile` matching the running executable, and its target directory); later
/// calls return the cached path. Blocks while building.
///
/// # Panics
///
/// If the current executable is not inside a Cargo target directory, or the build fails.
pub fn fixture_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| workspace_bin("vmcp-testkit", "vmcp-fixture"))
        .clone()
}

/// Path of binary `bin` of workspace package `package`, built now (as [`fixture_bin`] builds
/// the fixture: the running executable's profile and target directory). Cargo makes a second
/// call cheap, but callers needing it often should keep the path.
///
/// # Panics
///
/// If the current executable is not inside a Cargo target directory, or the build fails.
pub fn workspace_bin(package: &str, bin: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("vmcp-testkit: current_exe");
    let profile_dir = profile_dir(&exe).unwrap_or_else(|| {
        panic!(
            "vmcp-testkit: {} is not under target/<profile>/",
            exe.display()
        )
    });
    let target_dir = profile_dir.parent().expect("profile dir has a parent");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut build = Command::new(cargo);
    build
        .args(["build", "--quiet", "-p", package, "--bin", bin])
        .arg("--manifest-path")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir);
    match profile_dir.file_name().and_then(|name| name.to_str()) {
        Some("debug") | None => {}
        Some("release") => {
            build.arg("--release");
        }
        Some(custom) => {
            build.args(["--profile", custom]);
        }
    }
    let output = build
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|err| panic!("vmcp-testkit: could not run cargo to build {bin}: {err}"));
    if !output.status.success() {
        panic!(
            "vmcp-testkit: `cargo build -p {package} --bin {bin}` failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let path = profile_dir.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "vmcp-testkit: built {bin} but {} is missing",
        path.display()
    );
    path
}

/// `target/<profile>` for an executable in it or in its `deps/` or `examples/`.
fn profile_dir(exe: &Path) -> Option<&Path> {
    let dir = exe.parent()?;
    match dir.file_name()?.to_str()? {
        "deps" | "examples" => dir.parent(),
        _ => Some(dir),
    }
}

/// A `vmcp-fixture` child process serving http or sse; killed when dropped.
#[derive(Debug)]
pub struct FixtureProcess {
    /// The MCP endpoint: `http://127.0.0.1:PORT/mcp` (http) or `http://127.0.0.1:PORT/sse` (sse).
    pub url: String,
    child: Child,
    /// Kept open so the child never writes into a closed pipe.
    _stdout: BufReader<ChildStdout>,
    /// How it was started, for [`FixtureProcess::restart`].
    transport: &'static str,
    path: &'static str,
    args: Vec<String>,
}

impl FixtureProcess {
    /// Spawns `vmcp-fixture --transport http --port 0 <args>` and waits until it listens.
    ///
    /// `args` must not repeat `--transport` or `--port`.
    ///
    /// # Panics
    ///
    /// If the binary cannot be built or started, or does not announce its port in 30 s.
    pub async fn spawn_http(args: &[&str]) -> FixtureProcess {
        Self::spawn("http", "/mcp", args).await
    }

    /// Spawns `vmcp-fixture --transport sse --port 0 <args>` and waits until it listens.
    ///
    /// # Panics
    ///
    /// As [`FixtureProcess::spawn_http`].
    pub async fn spawn_sse(args: &[&str]) -> FixtureProcess {
        Self::spawn("sse", "/sse", args).await
    }

    /// The child's process id, or `None` once it has been reaped.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Kills the child (SIGKILL) and waits for it to exit (e.g. to test a backend going away).
    pub async fn kill(&mut self) {
        // Err only if it has already exited, which is what we want anyway.
        let _ = self.child.kill().await;
    }

    /// Kills the child if it still runs and starts a new one with the same arguments on the
    /// same port, as a supervisor restarting a crashed server would. The port can be held for a
    /// moment after the kill, so a start that fails is retried (up to 50 times, 100 ms apart).
    ///
    /// # Panics
    ///
    /// If no start succeeds.
    pub async fn restart(&mut self) {
        self.kill().await;
        let port = self
            .url
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .and_then(|p| p.parse::<u16>().ok())
            .expect("the fixture URL has a port");
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        for _ in 0..50 {
            if let Some(fresh) = Self::try_spawn(self.transport, self.path, port, &args).await {
                *self = fresh;
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("vmcp-testkit: vmcp-fixture {args:?} could not listen on port {port} again");
    }

    async fn spawn(transport: &'static str, path: &'static str, args: &[&str]) -> FixtureProcess {
        Self::try_spawn(transport, path, 0, args)
            .await
            .unwrap_or_else(|| {
                panic!("vmcp-testkit: vmcp-fixture {args:?} did not announce its address")
            })
    }

    /// Starts one on `port`; None when it does not announce its address (say, the port is taken).
    async fn try_spawn(
        transport: &'static str,
        path: &'static str,
        port: u16,
        args: &[&str],
    ) -> Option<FixtureProcess> {
        let bin = fixture_bin();
        let mut child = tokio::process::Command::new(&bin)
            .args(["--transport", transport, "--port", &port.to_string()])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|err| panic!("vmcp-testkit: spawning {}: {err}", bin.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        let read = tokio::time::timeout(STARTUP_TIMEOUT, stdout.read_line(&mut line)).await;
        let base = match read {
            Ok(Ok(_)) => line.trim().strip_prefix("listening on ").map(str::to_owned),
            Ok(Err(_)) | Err(_) => None,
        };
        let Some(base) = base else {
            let _ = child.kill().await;
            return None;
        };
        Some(FixtureProcess {
            url: format!("{base}{path}"),
            child,
            _stdout: stdout,
            transport,
            path,
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        })
    }
}

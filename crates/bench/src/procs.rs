//! The processes under test: building the release binaries, starting fixture backends and the
//! gateway, learning their URLs from their first stdout line, and stopping them.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::bearer;

/// How long a process gets to print its listening line.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a process gets to exit after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// The workspace root (where `cargo build` runs and `target/` lives).
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds the gateway and the fixture in release mode.
///
/// # Errors
/// When cargo cannot be run or the build fails.
pub(crate) fn build_release() -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("building: cargo build --release -p vmcp -p vmcp-testkit");
    let status = std::process::Command::new(cargo)
        .args(["build", "--release", "-p", "vmcp", "-p", "vmcp-testkit"])
        .current_dir(workspace_root())
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        bail!("cargo build --release failed ({status})");
    }
    Ok(())
}

/// Where the release binaries are: `--bin-dir`, else `$CARGO_TARGET_DIR/release`, else
/// `<workspace>/target/release`.
pub(crate) fn bin_dir(flag: Option<&Path>) -> PathBuf {
    if let Some(dir) = flag {
        return dir.to_path_buf();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace_root().join("target"), PathBuf::from);
    target.join("release")
}

/// The binaries and scratch directory of one run.
#[derive(Debug, Clone)]
pub(crate) struct Env {
    /// `vmcp`.
    pub(crate) gateway: PathBuf,
    /// `vmcp-fixture`.
    pub(crate) fixture: PathBuf,
    /// Configs and process logs.
    pub(crate) scratch: PathBuf,
    /// YAML appended to every gateway config: `--oidc`'s `incomingAuth` and `--config-extra`
    /// (e.g. an `audit` block).
    pub(crate) config_extra: String,
    /// `sessionStorage` of `--redis`, appended to every gateway config that has none of its own.
    pub(crate) session_storage: String,
    /// `--oidc`: every gateway must refuse a request without the bearer token.
    pub(crate) requires_token: bool,
}

impl Env {
    /// Checks both binaries exist under `bin_dir`; creates the scratch directory.
    ///
    /// # Errors
    /// When a binary is missing or the scratch directory cannot be created.
    pub(crate) fn new(bin_dir: &Path) -> anyhow::Result<Env> {
        let gateway = bin_dir.join("vmcp");
        let fixture = bin_dir.join("vmcp-fixture");
        for bin in [&gateway, &fixture] {
            if !bin.is_file() {
                bail!("{} not found (build it, or pass --bin-dir)", bin.display());
            }
        }
        let scratch = std::env::temp_dir().join(format!("vmcp-bench-{}", std::process::id()));
        std::fs::create_dir_all(&scratch)
            .with_context(|| format!("cannot create {}", scratch.display()))?;
        Ok(Env {
            gateway,
            fixture,
            scratch,
            config_extra: String::new(),
            session_storage: String::new(),
            requires_token: false,
        })
    }

    /// Starts an HTTP fixture named `name` with `tools` extra tools (`extra` are more flags).
    ///
    /// # Errors
    /// When it does not start.
    pub(crate) async fn fixture_http(
        &self,
        name: &str,
        tools: usize,
        extra: &[&str],
    ) -> anyhow::Result<Proc> {
        let mut cmd = Command::new(&self.fixture);
        cmd.args(["--transport", "http", "--port", "0", "--name", name])
            .args(["--tools", &tools.to_string()])
            .args(extra);
        let mut proc = Proc::start(cmd, &self.scratch.join(format!("fixture-{name}.log"))).await?;
        proc.url.push_str("/mcp");
        // A backend never gets the gateway's token, even on a port a stopped gateway used.
        bearer::revoke(proc.authority());
        Ok(proc)
    }

    /// Starts the gateway on `config` (a YAML text written to the scratch directory as `label`)
    /// plus what every gateway gets ([`Env::config_extra`], [`Env::session_storage`]); under
    /// `--oidc`, checks it refuses a request without the token.
    ///
    /// # Errors
    /// When it does not start, or accepts a tokenless request under `--oidc`.
    pub(crate) async fn gateway(&self, label: &str, config: &str) -> anyhow::Result<Proc> {
        let path = self.scratch.join(format!("{label}.yaml"));
        // Scenario 8 writes its own sessionStorage for the rows that compare it.
        let storage = if config.contains("\nsessionStorage:") {
            ""
        } else {
            &self.session_storage
        };
        let config = format!("{config}{storage}{}", self.config_extra);
        std::fs::write(&path, config).with_context(|| format!("writing {}", path.display()))?;
        let mut cmd = Command::new(&self.gateway);
        cmd.arg("serve")
            .arg("--config")
            .arg(&path)
            .args(["--port", "0"]);
        let gateway = Proc::start(cmd, &self.scratch.join(format!("gateway-{label}.log"))).await?;
        bearer::grant(gateway.authority());
        if self.requires_token {
            bearer::check_refuses_tokenless(&gateway.url).await?;
        }
        Ok(gateway)
    }

    /// Removes the scratch directory.
    pub(crate) fn clean(&self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// A running child process that announced `http://...` on its first stdout line.
#[derive(Debug)]
pub(crate) struct Proc {
    child: Child,
    /// Its process id.
    pub(crate) pid: u32,
    /// The URL it printed.
    pub(crate) url: String,
}

impl Proc {
    /// Spawns `cmd` (stderr to `log`) and waits for its `... http://...` line.
    async fn start(mut cmd: Command, log: &Path) -> anyhow::Result<Proc> {
        let log_file =
            std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot start {cmd:?}"))?;
        let pid = child.id().context("child has no pid")?;
        let stdout = child.stdout.take().context("no stdout pipe")?;
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(START_TIMEOUT, lines.next_line())
            .await
            .with_context(|| format!("{cmd:?} printed nothing in {START_TIMEOUT:?}"))??
            .with_context(|| format!("{cmd:?} exited; see {}", log.display()))?;
        let url = line
            .find("http://")
            .map(|at| line[at..].trim().to_owned())
            .with_context(|| format!("unexpected first line {line:?}"))?;
        // Keep draining stdout so the child can never block on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Proc { child, pid, url })
    }

    /// `host:port` of its URL.
    pub(crate) fn authority(&self) -> &str {
        let rest = self.url.trim_start_matches("http://");
        rest.split('/').next().unwrap_or(rest)
    }

    /// SIGTERM (so the gateway reaps its stdio children), then SIGKILL after a grace period.
    pub(crate) async fn stop(mut self) {
        bearer::revoke(self.authority());
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status()
            .await;
        if tokio::time::timeout(STOP_TIMEOUT, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

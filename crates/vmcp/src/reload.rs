//! Live reload: `SIGHUP` (and, with `serve --watch`, a change of the file) re-reads the config,
//! validates it exactly as `validate` does, builds everything it needs, and only then swaps it in.
//! An invalid file is refused with the same messages and the running config stays. Backends whose
//! settings did not change keep their connections and processes; sessions survive and are sent
//! `list_changed` for what changed in their view. Keys that cannot change while serving are
//! reported and keep their running values.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{anyhow, bail};
use vmcp_backend::Backend;
use vmcp_config::Config;
use vmcp_core::Gateway;
use vmcp_server::ServingThreads;

use crate::assemble;

/// How often `--watch` looks at the file.
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// How long a removed or changed backend keeps serving the calls already in flight on it.
const DRAIN: Duration = Duration::from_secs(30);

/// What a reload needs from the running gateway.
pub(crate) struct Reloader<'a> {
    pub(crate) path: PathBuf,
    pub(crate) running: Config,
    pub(crate) gateway: Arc<Gateway>,
    pub(crate) serving: &'a ServingThreads,
    /// The Redis client of `sessionStorage` (not reloaded), for rate-limit buckets.
    pub(crate) redis: Option<Arc<vmcp_redis::Client>>,
}

impl Reloader<'_> {
    /// Reloads on every `SIGHUP`, and on every change of the file when `watch` is set. Never returns.
    pub(crate) async fn run(mut self, watch: bool) {
        let mut hangups = hangups();
        let mut stamp = file_stamp(&self.path);
        let mut tick = tokio::time::interval(WATCH_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                Some(()) = recv(&mut hangups) => {
                    tracing::info!(path = %self.path.display(), "SIGHUP: reloading the config");
                }
                _ = tick.tick(), if watch => {
                    let now = file_stamp(&self.path);
                    if now == stamp {
                        continue;
                    }
                    tracing::info!(path = %self.path.display(), "config file changed: reloading");
                }
            }
            stamp = file_stamp(&self.path);
            self.reload().await;
        }
    }

    async fn reload(&mut self) {
        match self.try_reload().await {
            Ok(()) => {}
            Err(e) => tracing::error!("config reload refused; the running config stays:\n{e:#}"),
        }
    }

    async fn try_reload(&mut self) -> anyhow::Result<()> {
        let loaded = vmcp_config::load_file(&self.path)
            .map_err(|e| anyhow!("invalid config {}:\n{e}", self.path.display()))?;
        let unsupported = loaded.unsupported();
        if !unsupported.is_empty() {
            bail!(
                "{} uses configuration vmcp does not implement yet: {}",
                self.path.display(),
                unsupported.join(", ")
            );
        }
        let (config, fixed) = live_part(&self.running, loaded);
        if !fixed.is_empty() {
            tracing::warn!(
                keys = %fixed.join(", "),
                "these keys changed but cannot change while serving; they keep their running values until a restart"
            );
        }
        if config == self.running {
            tracing::info!("config reloaded: nothing that can change live changed");
            return Ok(());
        }
        // Build everything before touching the running gateway: any error leaves it as it is.
        let running = self.gateway.backends();
        let mut keep = Vec::new();
        let mut build = config.clone();
        build
            .backends
            .retain(|b| match running.iter().find(|r| r.id() == b.name) {
                Some(r) if same_backend(&self.running, &config, &b.name) => {
                    keep.push(r.clone());
                    false
                }
                _ => true,
            });
        let mut backends: Vec<Arc<Backend>> = if build.backends.is_empty() {
            Vec::new()
        } else {
            assemble::backends(&build, self.serving)?
        };
        backends.extend(keep);
        let mut options = assemble::gateway_options(&config, self.redis.as_ref())?;
        let current = self.gateway.options();
        if let Some(authorizer) = crate::authz::authorizer(&config)? {
            options.authorizer = Arc::new(authorizer);
        }
        // The audit trail is not reloaded; rate-limit buckets keep their state unless the limits
        // themselves changed.
        options.workflow_observer = current.workflow_observer.clone();
        options.pinning = current.pinning.clone();
        if config.rate_limiting == self.running.rate_limiting {
            options.rate_limiter = current.rate_limiter.clone();
        }
        let fh = &config.operational.failure_handling;
        let checks = vmcp_core::HealthChecks {
            interval: fh.health_check_interval,
            timeout: fh.health_check_timeout,
        };
        let report = self
            .gateway
            .reconfigure(backends, options, checks, DRAIN)
            .await;
        tracing::info!(
            added = ?report.added,
            removed = ?report.removed,
            restarted = ?report.restarted,
            changed = ?report.changed,
            "config reloaded"
        );
        if let Some(e) = &report.aggregation_error {
            tracing::warn!(error = %e, "aggregation under the new config failed; the next client retries");
        }
        self.running = config;
        Ok(())
    }
}

/// `loaded` with the keys that cannot change live set back to `running`'s, and those keys' names.
fn live_part(running: &Config, mut loaded: Config) -> (Config, Vec<&'static str>) {
    let mut fixed = Vec::new();
    macro_rules! fixed {
        ($field:ident, $key:literal) => {
            if loaded.$field != running.$field {
                fixed.push($key);
                loaded.$field = running.$field.clone();
            }
        };
    }
    fixed!(name, "name");
    fixed!(group_ref, "groupRef");
    fixed!(server, "server (listen address, limits, timeouts)");
    fixed!(telemetry, "telemetry");
    fixed!(audit, "audit");
    fixed!(session_storage, "sessionStorage");
    fixed!(passthrough_headers, "passthroughHeaders");
    fixed!(tool_pinning, "toolPinning");
    // Who clients are is fixed; what they may do (authz) reloads.
    let mut auth = loaded.incoming_auth.clone();
    auth.authz = running.incoming_auth.authz.clone();
    if auth != running.incoming_auth {
        fixed.push("incomingAuth (type, oidc)");
        let authz = loaded.incoming_auth.authz.take();
        loaded.incoming_auth = running.incoming_auth.clone();
        loaded.incoming_auth.authz = authz;
    }
    (loaded, fixed)
}

/// Whether backend `name` is configured the same in both (then it is kept, connections and all).
fn same_backend(old: &Config, new: &Config, name: &str) -> bool {
    let find = |c: &Config| c.backends.iter().find(|b| b.name == name).cloned();
    find(old) == find(new)
        && old.outgoing_auth.strategy_for(name) == new.outgoing_auth.strategy_for(name)
        && old.timeout_for(name) == new.timeout_for(name)
        && old.operational.failure_handling == new.operational.failure_handling
        && old.outgoing_auth.source == new.outgoing_auth.source
}

/// The file's modification time and length (what `--watch` compares).
fn file_stamp(path: &PathBuf) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

#[cfg(unix)]
type Hangups = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangups = Option<()>;

#[cfg(unix)]
fn hangups() -> Hangups {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
}

#[cfg(not(unix))]
fn hangups() -> Hangups {
    None
}

#[cfg(unix)]
async fn recv(h: &mut Hangups) -> Option<()> {
    match h {
        Some(s) => s.recv().await,
        None => std::future::pending().await,
    }
}

#[cfg(not(unix))]
async fn recv(_: &mut Hangups) -> Option<()> {
    std::future::pending().await
}

//! `toolPinning`: the pin file beside the config, the gateway's pinning, its audit events, and
//! `vmcp tools diff | approve | pin`, the commands that review and accept changed definitions.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use vmcp_audit::{Auditor, EventType, PinEvent};
use vmcp_config::{Config, PinMode};
use vmcp_core::pins::{
    Approval, Finding, PinBook, PinFile, PinKind, PinObserver, PinStore, Pinning, RedisPins,
};

use crate::cli::ToolsCommand;

/// Where the pins of the config at `config_path` are kept: `toolPinning.store` (relative to
/// the config's directory), else `<config stem>.pins.json` beside it.
pub(crate) fn pin_file(config: &Config, config_path: &Path) -> PathBuf {
    let dir = config_path.parent().unwrap_or(Path::new("."));
    match config
        .tool_pinning
        .as_ref()
        .and_then(|p| p.store.as_deref())
    {
        Some(store) => dir.join(store),
        None => {
            let stem = config_path
                .file_stem()
                .map_or_else(|| "vmcp".into(), |s| s.to_string_lossy().into_owned());
            dir.join(format!("{stem}.pins.json"))
        }
    }
}

/// Where the pins of `config` (at `config_path`) are kept: in Redis when replicas share
/// `sessionStorage: redis` (`redis`, under its key prefix), else in [`pin_file`].
fn store(config: &Config, config_path: &Path, redis: Option<&Arc<vmcp_redis::Client>>) -> PinStore {
    match redis {
        Some(client) => PinStore::Redis(RedisPins::new(
            client.clone(),
            &crate::assemble::key_prefix(config),
        )),
        None => PinStore::File(PinFile::new(pin_file(config, config_path))),
    }
}

/// The gateway's pinning, unless `toolPinning` is off.
///
/// # Errors
/// The store holds something that is not a valid pin book, or Redis cannot be reached.
pub(crate) async fn pinning(
    config: &Config,
    config_path: &Path,
    auditor: Option<&Arc<Auditor>>,
    redis: Option<&Arc<vmcp_redis::Client>>,
) -> anyhow::Result<Option<Arc<Pinning>>> {
    let mode = config
        .tool_pinning
        .as_ref()
        .map_or(PinMode::Off, |p| p.mode);
    if mode == PinMode::Off {
        return Ok(None);
    }
    let store = store(config, config_path, redis);
    let described = store.describe();
    let observer = auditor.map(|a| Arc::new(PinAudit(a.clone())) as Arc<dyn PinObserver>);
    let pinning = Pinning::open(mode == PinMode::Enforce, store, observer)
        .await
        .map_err(|e| anyhow::anyhow!("toolPinning: {e}"))?;
    tracing::info!(mode = mode.as_str(), store = %described, "definition pinning on");
    Ok(Some(Arc::new(pinning)))
}

/// Writes pinning events into the audit trail.
struct PinAudit(Arc<Auditor>);

impl PinObserver for PinAudit {
    fn finding(&self, f: &Finding, enforced: bool) {
        let detail = f.reason.describe();
        self.0.emit_pin(&PinEvent {
            kind: EventType::DefinitionChanged,
            backend: &f.backend,
            item_kind: f.kind.as_str(),
            name: &f.name,
            reason: Some(f.reason.label()),
            detail: Some(&detail),
            fingerprint: &f.fingerprint,
            withheld: enforced,
            approver: None,
        });
    }

    fn approval(&self, a: &Approval) {
        self.0.emit_pin(&PinEvent {
            kind: EventType::DefinitionApproved,
            backend: &a.backend,
            item_kind: &a.kind,
            name: &a.name,
            reason: None,
            detail: Some(&a.action),
            fingerprint: &a.fingerprint,
            withheld: false,
            approver: Some(&a.by),
        });
    }
}

/// Who runs this command, as recorded in an approval: the OS user.
fn approver() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| format!("uid {}", rustix::process::getuid().as_raw()))
}

/// `vmcp tools ...`.
pub(crate) fn run(command: ToolsCommand) -> ExitCode {
    let config_path = match &command {
        ToolsCommand::Diff(c) | ToolsCommand::Pin(c) => c.config.clone(),
        ToolsCommand::Approve { pins, .. } => pins.config.clone(),
    };
    let mut code = ExitCode::SUCCESS;
    let outcome = crate::run_async(async {
        let config = vmcp_config::load_file(&config_path)
            .map_err(|e| anyhow::anyhow!("invalid config {}:\n{e}", config_path.display()))?;
        let redis = crate::assemble::redis(&config)?;
        let store = store(&config, &config_path, redis.as_ref());
        match command {
            ToolsCommand::Diff(_) => code = diff(&store, &config_path).await?,
            ToolsCommand::Approve {
                backend, name, all, ..
            } => approve(&store, backend, name, all).await?,
            ToolsCommand::Pin(_) => pin_current(config, store).await?,
        }
        Ok(())
    });
    // 2 on an error, as `diff` does: 1 means "something awaits approval".
    if outcome == ExitCode::SUCCESS {
        code
    } else {
        ExitCode::from(2)
    }
}

/// Prints every definition awaiting approval with what changed; exit 1 when there is any.
async fn diff(store: &PinStore, config: &Path) -> anyhow::Result<ExitCode> {
    let book = store.read().await.map_err(anyhow::Error::msg)?;
    let text = render_diff(&book, config);
    if text.is_empty() {
        println!("{}: no definition awaits approval", store.describe());
        return Ok(ExitCode::SUCCESS);
    }
    print!("{text}");
    Ok(ExitCode::from(1))
}

/// The readable report of `book`'s pending definitions (empty when there is none).
fn render_diff(book: &PinBook, config: &Path) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for p in vmcp_core::pins::pending_report(book) {
        let _ = writeln!(out, "{} {} {}: {}", p.backend, p.kind, p.name, p.reason);
        for line in &p.diff {
            let _ = writeln!(out, "  {line}");
        }
        let _ = writeln!(
            out,
            "  approve with: vmcp tools approve --config {} {} {}\n",
            config.display(),
            p.backend,
            p.name
        );
    }
    out
}

/// Accepts the pending definitions of `backend` named `name` (every kind), or all of them.
async fn approve(
    store: &PinStore,
    backend: String,
    name: Option<String>,
    all: bool,
) -> anyhow::Result<()> {
    if name.is_none() && !all {
        bail!(
            "name the item to approve, or pass --all to approve every pending definition of {backend}"
        );
    }
    let by = approver();
    let at = vmcp_core::pins::now();
    let (target, who) = (backend.clone(), by.clone());
    let (_, outcome, _) = store
        .update(move |book| {
            let targets: Vec<(PinKind, String)> = book
                .all_pending()
                .filter(|(b, _, n, _)| {
                    *b == target && name.as_deref().is_none_or(|want| want == *n)
                })
                .map(|(_, k, n, _)| (k, n.to_owned()))
                .collect();
            if targets.is_empty() {
                let pending: Vec<String> = book
                    .all_pending()
                    .map(|(b, k, n, _)| format!("{b} {} {n}", k.as_str()))
                    .collect();
                return Err(format!(
                    "nothing of {target}{} awaits approval{}",
                    name.map(|n| format!(" named {n}")).unwrap_or_default(),
                    if pending.is_empty() {
                        String::new()
                    } else {
                        format!(" (pending: {})", pending.join(", "))
                    }
                ));
            }
            for (kind, n) in &targets {
                book.approve(&target, *kind, n, &who, &at, "approve");
            }
            Ok(targets)
        })
        .await
        .map_err(anyhow::Error::msg)?;
    let targets = outcome.map_err(anyhow::Error::msg)?;
    for (kind, n) in &targets {
        println!("approved {backend} {} {n} (by {by})", kind.as_str());
    }
    println!(
        "a running gateway applies this within {:?}",
        vmcp_core::pins::WATCH_EVERY * 2
    );
    Ok(())
}

/// Discovers every backend now and records what each serves as approved (first sight or not).
async fn pin_current(config: Config, store: PinStore) -> anyhow::Result<()> {
    let serving = vmcp_server::ServingThreads::start(1).context("cannot start a serving thread")?;
    let backends = crate::assemble::backends(&config, &serving)?;
    let mut options = crate::assemble::gateway_options(&config, None)?;
    let pinning = Arc::new(
        Pinning::open(false, store.clone(), None)
            .await
            .map_err(anyhow::Error::msg)?,
    );
    options.pinning = Some(pinning.clone());
    let gateway = vmcp_core::Gateway::new(backends, options);
    let discovered = gateway.catalog(&vmcp_core::Identity::anonymous()).await;
    gateway.shutdown().await;
    let catalog = discovered.context("discovery failed; nothing was pinned")?;
    pinning.persist().await.map_err(anyhow::Error::msg)?;
    let by = approver();
    let at = vmcp_core::pins::now();
    let who = by.clone();
    let (book, accepted, _) = store
        .update(move |book| {
            let pending: Vec<(String, PinKind, String)> = book
                .all_pending()
                .map(|(b, k, n, _)| (b.to_owned(), k, n.to_owned()))
                .collect();
            for (b, k, n) in &pending {
                book.approve(b, *k, n, &who, &at, "pin");
            }
            pending.len()
        })
        .await
        .map_err(anyhow::Error::msg)?;
    println!(
        "{}: {} definitions pinned ({} tools advertised now; {accepted} changed ones accepted by {by})",
        store.describe(),
        book.all_pins().count(),
        catalog.tools().len(),
    );
    for (backend, why) in catalog.failed() {
        println!("  not pinned: backend {backend} failed discovery: {why}");
    }
    Ok(())
}

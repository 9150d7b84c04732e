//! `vmcp serve`: load, refuse what is not implemented, start backends, serve until a signal, then
//! shut down in order (stop accepting, drain, close backend sessions, reap every child).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use vmcp_core::{Gateway, Identity};
use vmcp_server::{AppState, OriginPolicy, ServerOptions};

use crate::{assemble, cli::ServeArgs};

pub(crate) async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let config = vmcp_config::load_file(&args.config)
        .map_err(|e| anyhow::anyhow!("invalid config {}:\n{e}", args.config.display()))?;
    let unsupported = config.unsupported();
    if !unsupported.is_empty() {
        let list: Vec<String> = unsupported
            .iter()
            .map(|u| format!("  not supported yet: {u}"))
            .collect();
        bail!(
            "{} uses configuration vmcp does not implement yet:\n{}",
            args.config.display(),
            list.join("\n")
        );
    }
    let telemetry = assemble::telemetry(&config)?;
    let host = args
        .host
        .clone()
        .unwrap_or_else(|| config.server.host.clone());
    let loopback = host
        .parse::<IpAddr>()
        .map_or(host == "localhost", |ip| ip.is_loopback());
    let auth = assemble::authenticator(&config)?;
    // Policies that do not load stop serve before any backend starts.
    let authorizer = crate::authz::authorizer(&config)?;
    let shared_sessions = config
        .session_storage
        .as_ref()
        .is_some_and(|s| s.provider == vmcp_config::SessionProvider::Redis);
    crate::state_key::install(&config, shared_sessions)?;
    if !auth.requires_token() && !loopback && !config.server.allow_anonymous_on_network {
        bail!(
            "refusing to serve unauthenticated clients (incomingAuth.type: {}) on {host}, which is not a loopback address: configure incomingAuth.type: oidc, or set server.allowAnonymousOnNetwork: true if this is really intended",
            config.incoming_auth.kind.as_str()
        );
    }
    let port = args.port.unwrap_or(config.server.port);
    let session_ttl = args.session_ttl.unwrap_or(config.server.session_ttl);
    let listener = tokio::net::TcpListener::bind((host.as_str(), port))
        .await
        .with_context(|| format!("cannot listen on {host}:{port}"))?;
    let local = listener.local_addr()?;

    crate::open_files::raise_and_log();
    let threads = match config.server.worker_threads {
        0 => vmcp_server::default_threads(),
        n => n,
    };
    let serving =
        vmcp_server::ServingThreads::start(threads).context("cannot start serving threads")?;
    let backends = assemble::backends(&config, &serving)?;
    let auditor = crate::audit::auditor(&config, &backends)?;
    let redis = assemble::redis(&config)?;
    let mut options = assemble::gateway_options(&config, redis.as_ref())?;
    if let Some(authorizer) = authorizer {
        options.authorizer = Arc::new(authorizer);
    }
    if let Some(a) = &auditor {
        options.workflow_observer = Some(Arc::new(crate::audit::WorkflowAudit(a.clone())));
    }
    options.pinning =
        crate::pins::pinning(&config, &args.config, auditor.as_ref(), redis.as_ref()).await?;
    let gateway = Arc::new(Gateway::new(backends, options));
    gateway.watch();
    let fh = &config.operational.failure_handling;
    gateway.check_health(vmcp_core::HealthChecks {
        interval: fh.health_check_interval,
        timeout: fh.health_check_timeout,
    });
    let options = ServerOptions {
        name: config.name.clone(),
        max_body_bytes: config.server.max_body_bytes,
        origins: OriginPolicy {
            allowed_origins: config.server.allowed_origins.clone(),
            allowed_hosts: config.server.allowed_hosts.clone(),
            bound_to_loopback: loopback,
        },
        client_request_timeout: config.server.client_request_timeout,
        modern_enabled: !args.disable_modern,
        auth,
        status_access: assemble::status_access(&config),
        passthrough_headers: config
            .passthrough_headers
            .iter()
            .map(|h| h.parse())
            .collect::<Result<_, _>>()
            .context("passthroughHeaders")?,
        connection_limits: vmcp_server::ConnectionLimits {
            header_timeout: config.server.request_header_timeout,
            body_timeout: config.server.request_body_timeout,
            idle_timeout: config.server.idle_connection_timeout,
        },
        audit: auditor.clone(),
        sse_keepalive: config.server.sse_keep_alive,
        ..ServerOptions::default()
    };
    let state = AppState::new(
        gateway.clone(),
        options,
        session_ttl,
        (
            config.server.max_sessions,
            config.server.max_sessions_per_identity,
        ),
        redis
            .clone()
            .map(|client| (client, Some(assemble::key_prefix(&config)))),
    );
    if let Some(client) = &redis {
        check_redis(client).await?;
    }

    // Aggregate in the background so /readyz turns ready without waiting for a client; retried
    // until it succeeds, because an unready replica gets no client (behind a Kubernetes Service)
    // that would retry it.
    let warm = gateway.clone();
    tokio::spawn(async move {
        let mut wait = Duration::from_secs(1);
        loop {
            match warm.catalog(&Identity::anonymous()).await {
                Ok(c) => {
                    tracing::info!(
                        tools = c.tools().len(),
                        prompts = c.prompts().len(),
                        resources = c.resources().len(),
                        "capabilities aggregated"
                    );
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %e, retry_in = ?wait, "initial aggregation failed; not ready yet");
                }
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(15));
        }
    });

    tracing::info!(name = %config.name, backends = config.backends.len(), threads, "vmcp listening on http://{local}/mcp");
    // Tests and scripts read this line to learn the port.
    println!("vmcp listening on http://{local}/mcp");
    // How long requests in flight (and streams a cut client may resume elsewhere) get to finish
    // after a shutdown signal.
    let drain = config.server.shutdown_drain;
    let reloader = crate::reload::Reloader {
        path: args.config.clone(),
        running: config.clone(),
        gateway: gateway.clone(),
        serving: &serving,
        redis,
    };
    tokio::select! {
        () = vmcp_server::serve(&serving, listener, state.clone(), shutdown_signal(), drain) => {}
        () = reloader.run(args.watch) => {}
    }

    tracing::info!("shutting down: closing sessions and backends");
    for id in state.sessions.ids() {
        gateway.end_session(&id).await;
    }
    if tokio::time::timeout(Duration::from_secs(10), gateway.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("backends did not close within 10s");
    }
    if let Some(a) = &auditor
        && !a.flush(Duration::from_secs(5)).await
    {
        tracing::warn!("audit lines still unwritten at shutdown: {}", a.status());
    }
    if let Some(t) = telemetry {
        // Flushing blocks on the exports, which run on this runtime's other threads.
        let _ = tokio::task::spawn_blocking(move || t.shutdown()).await;
    }
    tracing::info!("stopped");
    Ok(())
}

/// Redis is asked once at startup so a wrong address, password or certificate shows at once.
/// Credentials or certificates Redis refuses stop the start: they will not fix themselves. An
/// unreachable Redis does not, unlike ToolHive: 2026-07-28 traffic needs no Redis, and
/// 2025-11-25 sessions work as soon as Redis answers.
async fn check_redis(client: &vmcp_redis::Client) -> anyhow::Result<()> {
    let address = client.config().display_address();
    match client.call(&[b"PING"]).await {
        Ok(_) => tracing::info!(%address, "session storage: Redis answers"),
        Err(e @ vmcp_redis::RedisError::Rejected { .. }) => {
            return Err(anyhow::anyhow!("session storage: {e}"));
        }
        Err(e) => {
            tracing::warn!(error = %e, "session storage: Redis does not answer yet; 2025-11-25 sessions get 503 until it does, 2026-07-28 requests are served")
        }
    }
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutdown signal received");
}

//! What `--oidc`, `--redis` and `--config-extra` add to every gateway the harness starts, and
//! the services that must run as long as the gateways do: the OpenID provider, redis-server,
//! and an OTLP sink when the extra file sends traces to `{otlp}`.

use crate::bearer;
use crate::cli::Cli;
use crate::config_extra::{self, OTLP, SCRATCH};
use crate::oidc_provider::OidcProvider;
use crate::procs::Env;
use crate::services::{self, Aux, OtlpSink};
use crate::setup::redis_session_storage;

/// The running services; dropping it stops them.
pub(crate) struct Additions {
    /// The OpenID provider of `--oidc`.
    pub(crate) provider: Option<OidcProvider>,
    _redis: Option<Aux>,
    _otlp: Option<OtlpSink>,
}

impl Additions {
    /// Starts what the flags ask for and tells `env` what to add to every gateway config.
    ///
    /// # Errors
    /// When the extra file cannot be read or conflicts with a flag, or a service does not start.
    pub(crate) async fn start(cli: &Cli, env: &mut Env) -> anyhow::Result<Additions> {
        let (mut extra, origin) = match &cli.config_extra {
            Some(path) => (
                std::fs::read_to_string(path)
                    .map_err(|e| anyhow::anyhow!("--config-extra {}: {e}", path.display()))?,
                path.display().to_string(),
            ),
            None => (String::new(), "-".to_owned()),
        };
        extra = extra.replace(SCRATCH, &env.scratch.to_string_lossy());
        let otlp = if extra.contains(OTLP) {
            let sink = OtlpSink::start().await?;
            extra = extra.replace(OTLP, &sink.address);
            Some(sink)
        } else {
            None
        };
        let provider = if cli.oidc {
            let provider = OidcProvider::start().await?;
            bearer::use_token(&provider.token)?;
            Some(provider)
        } else {
            None
        };
        let incoming_auth = provider.as_ref().map(OidcProvider::incoming_auth);
        env.config_extra =
            config_extra::compose(&extra, &origin, incoming_auth.as_ref(), cli.redis)?;
        let redis = if cli.redis {
            let redis = services::redis().await?;
            env.session_storage = redis_session_storage(redis.port);
            Some(redis)
        } else {
            None
        };
        env.requires_token = cli.oidc;
        Ok(Additions {
            provider,
            _redis: redis,
            _otlp: otlp,
        })
    }

    /// A line for the end of the run: how often the gateways fetched the provider's keys.
    pub(crate) fn summary(&self) -> Option<String> {
        let (discovery, jwks) = self.provider.as_ref()?.served();
        Some(format!(
            "--oidc: one token for every client; the identity provider served {discovery} \
             discovery documents and {jwks} key sets over the whole run"
        ))
    }
}

/// Why `--redis` cannot run here, if it cannot.
pub(crate) fn redis_missing(cli: &Cli) -> Option<String> {
    (cli.redis && !services::installed("redis-server")).then(|| {
        "skipped: --redis needs redis-server on PATH (Debian: apt-get install redis-server); \
         nothing was measured"
            .to_owned()
    })
}

//! The arrangements under test: fixture backends, a gateway config in front of them, and
//! waiting for the gateway to be ready.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::bail;

use crate::http;
use crate::procs::{Env, Proc};

/// The fixture flags of the catalogue scenarios: tools only, so only tools are measured.
pub(crate) const TOOLS_ONLY: &[&str] = &["--no-resources", "--no-prompts"];

/// One backend of a gateway config.
pub(crate) enum Backend<'a> {
    /// A Streamable HTTP backend at `url`.
    Http { name: &'a str, url: &'a str },
    /// A shared stdio fixture the gateway starts itself.
    Stdio { name: &'a str, fixture: &'a Path },
}

/// A gateway config (YAML; strings written as JSON, which YAML reads verbatim).
pub(crate) fn gateway_config(backends: &[Backend<'_>]) -> String {
    let q = |s: &str| serde_json::Value::from(s).to_string();
    let mut yaml = String::from("name: vmcp-bench\nbackends:\n");
    for b in backends {
        match b {
            Backend::Http { name, url } => {
                yaml.push_str(&format!(
                    "  - name: {}\n    transport: streamable-http\n    url: {}\n",
                    q(name),
                    q(url)
                ));
            }
            Backend::Stdio { name, fixture } => {
                let command = fixture.to_string_lossy();
                yaml.push_str(&format!(
                    "  - name: {}\n    transport: stdio\n    command: {}\n    args: [\"--transport\", \"stdio\", \"--name\", {}]\n",
                    q(name),
                    q(&command),
                    q(name)
                ));
            }
        }
    }
    // The benchmark opens thousands of sessions as one identity (anonymous, or --oidc's user).
    yaml.push_str("server:\n  maxSessionsPerIdentity: 1000000\n");
    yaml
}

/// `sessionStorage` in the Redis at `127.0.0.1:port`, as top-level YAML.
pub(crate) fn redis_session_storage(port: u16) -> String {
    format!("sessionStorage:\n  provider: redis\n  address: \"127.0.0.1:{port}\"\n")
}

/// Fixtures plus the gateway in front of them.
pub(crate) struct Stack {
    pub(crate) fixtures: Vec<Proc>,
    pub(crate) gateway: Proc,
}

impl Stack {
    /// Starts `count` HTTP fixtures named `{prefix}{i}` with `tools` extra tools each (flags
    /// `extra`) and a gateway in front of them, and waits until it is ready.
    ///
    /// # Errors
    /// When a process does not start or the gateway is not ready within 30 s.
    pub(crate) async fn http(
        env: &Env,
        label: &str,
        prefix: &str,
        count: usize,
        tools: usize,
        extra: &[&str],
    ) -> anyhow::Result<Stack> {
        let mut fixtures = Vec::with_capacity(count);
        for i in 0..count {
            let name = backend_name(prefix, i, count);
            fixtures.push(env.fixture_http(&name, tools, extra).await?);
        }
        let gateway = Stack::gateway_for(env, label, &fixtures, prefix).await?;
        wait_ready(&gateway).await?;
        Ok(Stack { fixtures, gateway })
    }

    /// Starts a gateway in front of already running `fixtures` (named as [`Stack::http`] does).
    ///
    /// # Errors
    /// When the gateway does not start.
    pub(crate) async fn gateway_for(
        env: &Env,
        label: &str,
        fixtures: &[Proc],
        prefix: &str,
    ) -> anyhow::Result<Proc> {
        let names: Vec<String> = (0..fixtures.len())
            .map(|i| backend_name(prefix, i, fixtures.len()))
            .collect();
        let backends: Vec<Backend<'_>> = fixtures
            .iter()
            .zip(&names)
            .map(|(f, name)| Backend::Http { name, url: &f.url })
            .collect();
        env.gateway(label, &gateway_config(&backends)).await
    }

    /// Stops the gateway, then the fixtures.
    pub(crate) async fn stop(self) {
        self.gateway.stop().await;
        for f in self.fixtures {
            f.stop().await;
        }
    }
}

/// `prefix` alone for a single backend, else `{prefix}{i}`.
fn backend_name(prefix: &str, i: usize, count: usize) -> String {
    if count == 1 {
        prefix.to_owned()
    } else {
        format!("{prefix}{i}")
    }
}

/// Waits until the gateway's `/readyz` answers 200 (its first aggregation succeeded).
///
/// # Errors
/// When it is not ready within 30 s.
pub(crate) async fn wait_ready(gateway: &Proc) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if http::get_ok(gateway.authority(), "/readyz").await {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    bail!("gateway at {} not ready within 30s", gateway.url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_lists_every_backend() {
        let yaml = gateway_config(&[
            Backend::Http {
                name: "fx",
                url: "http://127.0.0.1:1/mcp",
            },
            Backend::Stdio {
                name: "st",
                fixture: Path::new("/bin/vmcp-fixture"),
            },
        ]);
        assert!(yaml.contains("name: \"fx\"\n    transport: streamable-http"));
        assert!(yaml.contains("command: \"/bin/vmcp-fixture\""));
        assert!(yaml.contains("args: [\"--transport\", \"stdio\", \"--name\", \"st\"]"));
    }
}

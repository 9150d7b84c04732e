//! The keys that seal composite tools' `requestState` for 2026-07-28 clients. A client's retry may
//! land on any replica, so replicas sharing sessions must hold the same keys; they come from the
//! operator (`VMCP_STATE_KEY`, or a file such as a mounted Kubernetes Secret), never from Redis:
//! whoever can read Redis must not be able to forge a state and skip a composite's questions.
//! One replica without shared sessions makes its own key.

use anyhow::{Context, bail};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use vmcp_config::{Config, StepKind};

/// The environment variable holding the keys.
const ENV: &str = "VMCP_STATE_KEY";
/// The environment variable naming a file that holds the keys.
const FILE_ENV: &str = "VMCP_STATE_KEY_FILE";
/// Most keys accepted at once: a rotation needs two.
const MAX_KEYS: usize = 4;

/// Installs the configured keys. With sessions shared through Redis, a config whose composite
/// tools ask the client cannot run without them.
///
/// # Errors
/// The keys are malformed or unreadable, or shared sessions need keys and none are configured.
pub(crate) fn install(config: &Config, shared_sessions: bool) -> anyhow::Result<()> {
    let configured = match (std::env::var(ENV), std::env::var(FILE_ENV)) {
        (Ok(_), Ok(_)) => bail!("set {ENV} or {FILE_ENV}, not both"),
        (Ok(text), Err(_)) => Some((parse(&text)?, ENV.to_owned())),
        (Err(_), Ok(path)) => {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {FILE_ENV} ({path})"))?;
            Some((
                parse(&text).with_context(|| format!("in {FILE_ENV} ({path})"))?,
                format!("{FILE_ENV} ({path})"),
            ))
        }
        (Err(_), Err(_)) => None,
    };
    if let Some((keys, source)) = configured {
        let id = vmcp_core::install_request_state_keys(&keys).unwrap_or_default();
        tracing::info!(
            "requestState keys from {source}: sealing with key {id}, {} accepted",
            keys.len()
        );
        return Ok(());
    }
    if !shared_sessions {
        return Ok(());
    }
    if let Some(tool) = asking_tool(config) {
        bail!(
            "sessionStorage: redis shares sessions between replicas, and composite tool {tool:?} asks the client (an elicitation step): every replica must hold the same requestState key, which vmcp never keeps in Redis. Set {ENV} to base64 of 32 random bytes (`head -c32 /dev/urandom | base64`) or {FILE_ENV} to a file holding it (a mounted Secret), the same on every replica"
        );
    }
    tracing::info!(
        "no {ENV}: a composite tool added later that asks a 2026-07-28 client will need its retry to reach the replica that asked"
    );
    Ok(())
}

/// The first composite tool with an elicitation step, if any.
fn asking_tool(config: &Config) -> Option<&str> {
    config
        .composite_tools
        .iter()
        .find(|t| {
            t.steps
                .iter()
                .any(|s| s.kind == Some(StepKind::Elicitation))
        })
        .map(|t| t.name.as_str())
}

/// Keys separated by commas or new lines: the first seals, all open.
fn parse(text: &str) -> anyhow::Result<Vec<[u8; 32]>> {
    let keys = text
        .split([',', '\n'])
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .enumerate()
        .map(|(i, k)| decode(k).with_context(|| format!("key {}", i + 1)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if keys.is_empty() {
        bail!("no key: expected base64 of 32 random bytes (`head -c32 /dev/urandom | base64`)");
    }
    if keys.len() > MAX_KEYS {
        bail!(
            "{} keys: at most {MAX_KEYS} (a rotation needs two: the sealing key first, then the one being retired)",
            keys.len()
        );
    }
    Ok(keys)
}

fn decode(text: &str) -> anyhow::Result<[u8; 32]> {
    let bytes = URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
        .or_else(|_| STANDARD.decode(text))
        .context("not base64")?;
    match <[u8; 32]>::try_from(bytes.as_slice()) {
        Ok(key) => Ok(key),
        Err(_) => bail!(
            "must be 32 bytes (base64 of `head -c32 /dev/urandom`), got {}",
            bytes.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_32_bytes_of_either_base64_and_a_list_rotates() {
        let (a, b) = ([7u8; 32], [8u8; 32]);
        assert_eq!(parse(&URL_SAFE_NO_PAD.encode(a)).unwrap(), vec![a]);
        assert_eq!(
            parse(&format!("{}\n", STANDARD.encode(a))).unwrap(),
            vec![a]
        );
        let both = format!("{}, {}", STANDARD.encode(b), URL_SAFE_NO_PAD.encode(a));
        assert_eq!(parse(&both).unwrap(), vec![b, a]);
        let file = format!("{}\n{}\n", STANDARD.encode(b), STANDARD.encode(a));
        assert_eq!(parse(&file).unwrap(), vec![b, a]);
        let short = format!("{:#}", parse("c2hvcnQ").unwrap_err());
        assert!(short.contains("32 bytes"), "{short}");
        assert!(parse("not base64 !").is_err());
        assert!(parse(" \n ,").is_err());
        let five = vec![STANDARD.encode(a); 5].join(",");
        assert!(format!("{:#}", parse(&five).unwrap_err()).contains("at most 4"));
    }
}

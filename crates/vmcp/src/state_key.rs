//! The key that seals composite tools' `requestState` for 2026-07-28 clients must be the same on
//! every replica: the client's retry may land on any of them. It comes from `VMCP_STATE_KEY`
//! (32 bytes, base64; from a Kubernetes Secret, say), else replicas sharing Redis agree on one
//! there (the first replica's random key wins), else each process makes its own (one replica).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

/// The environment variable holding the key.
const ENV: &str = "VMCP_STATE_KEY";

/// Installs the key from the environment, or starts agreeing on one through Redis.
///
/// # Errors
/// `VMCP_STATE_KEY` is set but is not 32 bytes of base64.
pub(crate) fn install(redis: Option<&Arc<vmcp_redis::Client>>, prefix: &str) -> anyhow::Result<()> {
    if let Ok(text) = std::env::var(ENV) {
        vmcp_core::install_request_state_key(&decode(&text)?);
        tracing::info!("requestState key from {ENV}");
        return Ok(());
    }
    if let Some(client) = redis {
        let (client, name) = (client.clone(), format!("{prefix}request-state-key"));
        tokio::spawn(async move {
            let mut warned = false;
            loop {
                match agree(&client, &name).await {
                    Ok(key) => {
                        vmcp_core::install_request_state_key(&key);
                        tracing::info!(
                            "requestState key shared with the other replicas through Redis"
                        );
                        return;
                    }
                    Err(e) if !warned => {
                        warned = true;
                        tracing::warn!(error = %e, "cannot agree on a requestState key through Redis yet; until then a composite tool's retry must reach the replica that asked");
                    }
                    Err(_) => {}
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }
    Ok(())
}

fn decode(text: &str) -> anyhow::Result<[u8; 32]> {
    let text = text.trim();
    let bytes = URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
        .or_else(|_| STANDARD.decode(text))
        .with_context(|| format!("{ENV} is not base64"))?;
    match <[u8; 32]>::try_from(bytes.as_slice()) {
        Ok(key) => Ok(key),
        Err(_) => bail!(
            "{ENV} must be 32 bytes (base64 of `head -c32 /dev/urandom`), got {}",
            bytes.len()
        ),
    }
}

/// Offers a random key (`SET NX`, no expiry) and takes whichever key Redis holds.
async fn agree(client: &vmcp_redis::Client, name: &str) -> anyhow::Result<[u8; 32]> {
    let mut fresh = [0u8; 32];
    getrandom::fill(&mut fresh).context("no OS randomness")?;
    let offer = URL_SAFE_NO_PAD.encode(fresh);
    client
        .call(&[b"SET", name.as_bytes(), offer.as_bytes(), b"NX"])
        .await?;
    match client.call(&[b"GET", name.as_bytes()]).await? {
        vmcp_redis::Value::Data(d) => decode(&String::from_utf8_lossy(&d)),
        other => bail!("unexpected reply for the shared key: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_32_bytes_of_either_base64() {
        let key = [7u8; 32];
        assert_eq!(decode(&URL_SAFE_NO_PAD.encode(key)).unwrap(), key);
        assert_eq!(decode(&STANDARD.encode(key)).unwrap(), key);
        assert!(
            decode("c2hvcnQ")
                .unwrap_err()
                .to_string()
                .contains("32 bytes")
        );
        assert!(decode("not base64 !").is_err());
    }
}

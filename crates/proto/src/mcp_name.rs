//! The `=?base64?...?=` sentinel that carries header values which are not plain visible ASCII
//! (`Mcp-Name`, `Mcp-Param-*`), in both directions.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// Decodes a header value: sentinel-wrapped values are base64 (standard, padded) of UTF-8 bytes;
/// anything else is taken as is. `None` when a sentinel payload is not valid base64 or UTF-8.
///
/// ```
/// use vmcp_proto::mcp_name::{decode, encode};
/// assert_eq!(decode("get_weather").as_deref(), Some("get_weather"));
/// assert_eq!(decode("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(), Some("Hello, 世界"));
/// assert_eq!(encode("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
/// ```
pub fn decode(value: &str) -> Option<String> {
    match value
        .strip_prefix(PREFIX)
        .and_then(|v| v.strip_suffix(SUFFIX))
    {
        Some(payload) if value.len() >= PREFIX.len() + SUFFIX.len() => {
            let bytes = STANDARD.decode(payload).ok()?;
            String::from_utf8(bytes).ok()
        }
        _ => Some(value.to_string()),
    }
}

/// Encodes a value for a header: as is when it is visible ASCII (0x21..=0x7E) and does not itself
/// look like a sentinel, else wrapped.
pub fn encode(value: &str) -> String {
    let plain = !value.is_empty()
        && value.bytes().all(|b| (0x21..=0x7e).contains(&b))
        && !(value.starts_with(PREFIX) && value.ends_with(SUFFIX));
    if plain {
        value.to_string()
    } else {
        format!("{PREFIX}{}{SUFFIX}", STANDARD.encode(value.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples_round_trip() {
        for (raw, encoded) in [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ] {
            assert_eq!(encode(raw), encoded);
            assert_eq!(decode(encoded).as_deref(), Some(raw));
        }
    }

    #[test]
    fn malformed_sentinels_are_rejected() {
        assert_eq!(decode("=?base64?not base64!?="), None);
        assert_eq!(decode("=?base64?/w==?="), None, "not UTF-8");
        assert_eq!(decode("=?base64??=").as_deref(), Some(""));
        // Only the exact lowercase markers count.
        assert_eq!(
            decode("=?BASE64?eA==?=").as_deref(),
            Some("=?BASE64?eA==?=")
        );
    }
}

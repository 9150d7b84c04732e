//! Standard base64 (RFC 4648 §4, padded) and the `=?base64?…?=` sentinel that MCP 2026-07-28
//! uses for `Mcp-Name` and `Mcp-Param-*` header values that are not plain ASCII.
//!
//! Hand-rolled (a few lines) so the testkit needs no codec crate; strict on decode: wrong
//! padding or a character outside the alphabet is an error, as the suite's server checks require.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// `bytes` as padded standard base64.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes padded standard base64; `None` if the length, padding or any character is wrong.
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let quads = bytes.chunks(4);
    let last = quads.len().saturating_sub(1);
    for (index, quad) in quads.enumerate() {
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && index != last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &quad[..4 - pad] {
            let value = ALPHABET.iter().position(|&a| a == c)?;
            n = n << 6 | u32::try_from(value).ok()?;
        }
        n <<= 6 * pad;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Some(out)
}

/// The value a header carries: the raw text, or the decoded bytes of a `=?base64?…?=` value.
///
/// # Errors
///
/// If the value uses the sentinel but its payload is not valid padded base64.
pub(crate) fn header_value(raw: &str) -> Result<Vec<u8>, ()> {
    match raw
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
    {
        Some(payload) => decode(payload).ok_or(()),
        None => Ok(raw.as_bytes().to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_padding_length() {
        for text in ["", "H", "He", "Hel", "Hello", "Hello, 世界"] {
            let encoded = encode(text.as_bytes());
            assert_eq!(decode(&encoded).unwrap(), text.as_bytes(), "{encoded}");
        }
        assert_eq!(encode(b"Hello"), "SGVsbG8=");
    }

    #[test]
    fn rejects_bad_padding_and_characters() {
        for bad in ["SGVsbG8", "SGVs!!!bG8=", "SG=sbG8=", "S===", "SGVsbG8=="] {
            assert_eq!(decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn sentinel_only_when_both_markers_are_there() {
        assert_eq!(header_value("=?base64?SGVsbG8=?=").unwrap(), b"Hello");
        assert_eq!(
            header_value("=?base64?SGVsbG8=").unwrap(),
            b"=?base64?SGVsbG8="
        );
        assert_eq!(header_value("SGVsbG8=").unwrap(), b"SGVsbG8=");
        assert!(header_value("=?base64?SGVsbG8?=").is_err());
    }
}

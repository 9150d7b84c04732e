//! Legacy list pagination over a session's fixed catalog: the cursor is an opaque,
//! self-describing token naming the list kind and the offset of the next page.

use base64::Engine;
use serde_json::{Value, json};

/// Longest cursor we try to decode.
const MAX_CURSOR: usize = 256;

/// Encodes the position `offset` in list `kind`.
pub(crate) fn encode(kind: &str, offset: usize) -> String {
    let raw = json!({"k": kind, "o": offset}).to_string();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

/// Decodes a cursor minted by [`encode`] for list `kind`.
pub(crate) fn decode(kind: &str, cursor: &str) -> Option<usize> {
    if cursor.len() > MAX_CURSOR {
        return None;
    }
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let v: Value = serde_json::from_slice(&raw).ok()?;
    if v.get("k")?.as_str()? != kind {
        return None;
    }
    usize::try_from(v.get("o")?.as_u64()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_foreign_or_forged_cursors() {
        let c = encode("tools", 1000);
        assert_eq!(decode("tools", &c), Some(1000));
        assert_eq!(decode("prompts", &c), None);
        assert_eq!(decode("tools", "not base64!"), None);
        assert_eq!(decode("tools", &"A".repeat(300)), None);
        let forged =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"k":"tools","o":-1}"#);
        assert_eq!(decode("tools", &forged), None);
    }
}

//! The fixed payloads the conformance scenarios look for: texts, a tiny PNG, a tiny WAV, and
//! the content blocks built from them.
//!
//! The media were generated for this fixture (a 1x1 red RGB PNG; 16 samples of 8-bit, 8 kHz
//! mono silence as WAV) and are stored base64-encoded, as MCP carries them.

use serde_json::{Value, json};

/// A 1x1 red pixel, PNG, base64.
pub(crate) const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";

/// 2 ms of silence, WAV (PCM, 8 kHz, mono, 8-bit), base64.
pub(crate) const SILENCE_WAV: &str =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YRAAAACAgICAgICAgICAgICAgICA";

/// A `text` content block.
pub(crate) fn text(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

/// An `image` content block holding [`RED_PIXEL_PNG`].
pub(crate) fn image() -> Value {
    json!({ "type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png" })
}

/// An `audio` content block holding [`SILENCE_WAV`].
pub(crate) fn audio() -> Value {
    json!({ "type": "audio", "data": SILENCE_WAV, "mimeType": "audio/wav" })
}

/// A `resource` content block embedding a text resource.
pub(crate) fn embedded_text(uri: &str, mime_type: &str, text: &str) -> Value {
    json!({
        "type": "resource",
        "resource": { "uri": uri, "mimeType": mime_type, "text": text }
    })
}

/// A successful tool result holding `content`.
pub(crate) fn tool_result(content: Vec<Value>) -> Value {
    json!({ "content": content, "isError": false })
}

/// A tool result that reports a failure to the model (`isError: true`).
pub(crate) fn tool_error(message: &str) -> Value {
    json!({ "content": [text(message)], "isError": true })
}

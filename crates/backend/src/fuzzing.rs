//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`, off in every normal build):
//! the private parts of the backend readers that a backend's bytes reach.

/// The URL an HTTP+SSE backend's `endpoint` event makes the gateway POST to, from the backend
/// URL `base`; always on `base`'s origin.
///
/// # Errors
/// Why the event is refused, in the words the backend's error gets.
pub fn sse_post_url(base: &str, endpoint: &str) -> Result<String, String> {
    crate::sse::post_url(base, endpoint)
        .map(String::from)
        .map_err(|e| e.to_string())
}

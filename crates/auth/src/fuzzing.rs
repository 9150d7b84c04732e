//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`, off in every normal build):
//! the private decoders a client's bytes reach before any signature is checked.

use crate::AuthError;

/// The token of an `Authorization` header value, exactly as the edge reads it.
///
/// # Errors
/// The header is missing, malformed or too large.
pub fn bearer(header: Option<&[u8]>) -> Result<&str, AuthError> {
    crate::incoming::bearer(header)
}

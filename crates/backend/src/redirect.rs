//! Why MCP traffic never follows a redirect, and the error that says where one pointed.
//!
//! A backend request carries the backend's credential (an injected header such as `X-Api-Key`, an
//! exchanged token, passed-through client headers) and the caller's arguments. Following a 3xx
//! would hand them to whatever host the `Location` names: another tenant, a private address, a
//! cloud metadata service (reqwest drops only `Authorization`-like headers across origins, and a
//! same-origin hop can still reach another path's tenant). An MCP server has one endpoint; one
//! that moved is configuration to fix, not something to follow silently. So no HTTP client of
//! this crate follows redirects, and a 3xx answer is an error naming its redacted `Location`.

use reqwest::header::{HeaderMap, LOCATION};
use reqwest::{StatusCode, Url};
use vmcp_auth::redact_url;

/// The description of a redirect answered to a request for `from`, naming where it pointed.
pub(crate) fn refused(status: StatusCode, headers: &HeaderMap, from: &Url) -> String {
    let to = headers
        .get(LOCATION)
        .and_then(|l| l.to_str().ok())
        .and_then(|l| from.join(l).ok())
        .map_or_else(|| "no usable Location".to_string(), redact_url);
    format!(
        "the backend answered HTTP {status} redirecting to {to}; redirects are not followed \
         (if the server moved, configure its new URL)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn at(location: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(LOCATION, HeaderValue::from_str(location).unwrap());
        h
    }

    #[test]
    fn names_the_location_resolved_and_redacted() {
        let from = Url::parse("http://u:p@127.0.0.1:9/mcp?key=SECRETKEY").unwrap();
        let e = refused(
            StatusCode::TEMPORARY_REDIRECT,
            &at("/v2/TOKEN1234567890abc/mcp?key=SECRETKEY"),
            &from,
        );
        assert!(
            e.contains("HTTP 307 Temporary Redirect redirecting to http://127.0.0.1:9/v2/REDACTED/mcp?key=REDACTED"),
            "{e}"
        );
        let e = refused(StatusCode::FOUND, &at("https://evil.example:8443/x"), &from);
        assert!(e.contains("https://evil.example:8443/x"), "{e}");
        let e = refused(StatusCode::MOVED_PERMANENTLY, &HeaderMap::new(), &from);
        assert!(e.contains("no usable Location"), "{e}");
        assert!(!e.contains("SECRETKEY"));
    }
}

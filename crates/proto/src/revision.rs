//! MCP protocol revisions the gateway speaks and version negotiation.

/// The stateless revision ("Modern").
pub const MODERN: &str = "2026-07-28";

/// Every revision the gateway serves to clients, newest first.
pub const ALL_VERSIONS: [&str; 4] = [MODERN, "2025-11-25", "2025-06-18", "2025-03-26"];

/// The newest session-based revision ("Legacy").
pub const LATEST_LEGACY: &str = "2025-11-25";

/// Session-based revisions a client may negotiate with the gateway, newest first.
pub const LEGACY_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// The revision assumed when a Legacy request carries no `MCP-Protocol-Version` header.
pub const DEFAULT_HEADERLESS: &str = "2025-03-26";

/// The revision the deprecated HTTP+SSE transport speaks.
pub const HTTP_SSE_VERSION: &str = "2024-11-05";

/// Picks the revision to answer an `initialize` with: the client's own if we speak it, else our
/// newest (the client then decides whether it can continue, per the lifecycle spec).
///
/// ```
/// assert_eq!(vmcp_proto::revision::negotiate("2025-06-18"), "2025-06-18");
/// assert_eq!(vmcp_proto::revision::negotiate("1999-01-01"), "2025-11-25");
/// ```
pub fn negotiate(requested: &str) -> &'static str {
    LEGACY_VERSIONS
        .iter()
        .copied()
        .find(|v| *v == requested)
        .unwrap_or(LATEST_LEGACY)
}

/// Whether `version` is a Legacy revision the gateway serves.
pub fn is_legacy_supported(version: &str) -> bool {
    LEGACY_VERSIONS.contains(&version)
}

/// Whether JSON-RPC batches must be accepted for a session at `version` (only 2025-03-26 had them).
pub fn allows_batches(version: &str) -> bool {
    version == "2025-03-26"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiates_each_supported_version_to_itself() {
        for v in LEGACY_VERSIONS {
            assert_eq!(negotiate(v), v);
        }
        assert_eq!(negotiate(""), LATEST_LEGACY);
        assert_eq!(negotiate("2024-11-05"), LATEST_LEGACY);
    }

    #[test]
    fn batches_only_on_2025_03_26() {
        assert!(allows_batches("2025-03-26"));
        assert!(!allows_batches("2025-06-18"));
        assert!(!allows_batches("2025-11-25"));
    }
}

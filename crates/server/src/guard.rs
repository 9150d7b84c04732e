//! Request guards applied before any MCP processing: Host and Origin validation against DNS
//! rebinding. Loopback is always allowed; anything else must be configured.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde_json::json;

use crate::state::AppState;

/// Which Host and Origin values the gateway accepts.
#[derive(Debug, Clone, Default)]
pub struct OriginPolicy {
    /// Extra allowed origins (`scheme://host[:port]`), besides loopback ones.
    pub allowed_origins: Vec<String>,
    /// Extra allowed Host header values (host or host:port), besides loopback ones.
    pub allowed_hosts: Vec<String>,
    /// Whether the listener is bound to a loopback address: then a non-loopback Host is a rebinding
    /// attempt unless configured. On other addresses Host is only checked when hosts are configured.
    pub bound_to_loopback: bool,
}

/// Why a request was refused by the guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    Host(String),
    Origin(String),
}

impl OriginPolicy {
    /// Checks the Host and Origin headers.
    pub(crate) fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        if let Some(host) = headers
            .get(http::header::HOST)
            .and_then(|h| h.to_str().ok())
        {
            let host_ok = is_loopback_host(strip_port(host))
                || self.allowed_hosts.iter().any(|h| {
                    h.eq_ignore_ascii_case(host) || h.eq_ignore_ascii_case(strip_port(host))
                })
                || (!self.bound_to_loopback && self.allowed_hosts.is_empty());
            if !host_ok {
                return Err(Refusal::Host(host.to_string()));
            }
        }
        if let Some(origin) = headers.get(http::header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("<non-ASCII>");
            let ok = origin_host(origin).is_some_and(is_loopback_host)
                || self
                    .allowed_origins
                    .iter()
                    .any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(origin));
            if !ok {
                return Err(Refusal::Origin(origin.to_string()));
            }
        }
        Ok(())
    }

    /// Checks the Host and Origin headers of an operational route (`/status`, `/metrics`, the
    /// health probes). As [`Self::check`], except that a Host naming an IP address passes: a
    /// DNS-rebinding page always reaches the gateway under a DNS name (the rebinding needs one),
    /// while a kubelet's probe or a Prometheus scrape names the pod's IP.
    pub(crate) fn check_operational(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        match self.check(headers) {
            Err(Refusal::Host(host)) if is_ip_literal(&host) => {
                let mut origin_only = headers.clone();
                origin_only.remove(http::header::HOST);
                self.check(&origin_only)
            }
            other => other,
        }
    }
}

impl Refusal {
    /// The refusal in words for the client and the log.
    pub(crate) fn message(&self) -> String {
        match self {
            Self::Host(h) => format!("Forbidden: Host {h:?} is not allowed"),
            Self::Origin(o) => format!("Forbidden: Origin {o:?} is not allowed"),
        }
    }
}

/// The Host/Origin guard of the operational routes, which `/mcp`'s handlers check themselves:
/// the status page names backends, their errors and session counts, which a rebinding page must
/// not read from a developer's loopback gateway.
pub(crate) async fn operational(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    match state.options.origins.check_operational(request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => {
            let message = refusal.message();
            tracing::warn!("{message} ({})", request.uri().path());
            (
                StatusCode::FORBIDDEN,
                Json(json!({"error": "forbidden", "message": message})),
            )
                .into_response()
        }
    }
}

/// Whether a Host header value (with or without a port) is an IP address.
fn is_ip_literal(host: &str) -> bool {
    strip_port(host).parse::<std::net::IpAddr>().is_ok()
}

fn strip_port(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':').map_or(host, |(h, p)| {
        if p.chars().all(|c| c.is_ascii_digit()) {
            h
        } else {
            host
        }
    })
}

fn origin_host(origin: &str) -> Option<&str> {
    let (scheme, rest) = origin.split_once("://")?;
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return None;
    }
    Some(strip_port(rest.split('/').next().unwrap_or(rest)))
}

fn is_loopback_host(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(v) = host {
            h.insert(http::header::HOST, v.parse().unwrap());
        }
        if let Some(v) = origin {
            h.insert(http::header::ORIGIN, v.parse().unwrap());
        }
        h
    }

    fn loopback() -> OriginPolicy {
        OriginPolicy {
            bound_to_loopback: true,
            ..Default::default()
        }
    }

    #[test]
    fn loopback_hosts_and_origins_pass() {
        let p = loopback();
        for host in [
            "localhost:4483",
            "127.0.0.1:4483",
            "[::1]:4483",
            "localhost",
            "127.0.0.2",
        ] {
            assert_eq!(
                p.check(&headers(Some(host), Some("http://localhost:3000"))),
                Ok(()),
                "{host}"
            );
        }
        assert_eq!(
            p.check(&headers(Some("127.0.0.1"), Some("https://[::1]:8080"))),
            Ok(())
        );
    }

    #[test]
    fn rebinding_host_is_refused_on_loopback() {
        assert_eq!(
            loopback().check(&headers(Some("evil.example:4483"), None)),
            Err(Refusal::Host("evil.example:4483".into()))
        );
    }

    #[test]
    fn foreign_origin_is_refused_unless_configured() {
        let p = loopback();
        assert!(matches!(
            p.check(&headers(Some("localhost"), Some("https://evil.example"))),
            Err(Refusal::Origin(_))
        ));
        assert!(matches!(
            p.check(&headers(Some("localhost"), Some("null"))),
            Err(Refusal::Origin(_))
        ));
        let p = OriginPolicy {
            allowed_origins: vec!["https://app.example.com".into()],
            ..loopback()
        };
        assert_eq!(
            p.check(&headers(Some("localhost"), Some("https://app.example.com"))),
            Ok(())
        );
    }

    #[test]
    fn configured_hosts_pass_and_open_binding_checks_only_when_configured() {
        let p = OriginPolicy {
            allowed_hosts: vec!["gw.internal".into()],
            ..loopback()
        };
        assert_eq!(p.check(&headers(Some("gw.internal:4483"), None)), Ok(()));
        let open = OriginPolicy::default();
        assert_eq!(open.check(&headers(Some("10.0.0.5:4483"), None)), Ok(()));
        let strict = OriginPolicy {
            allowed_hosts: vec!["gw".into()],
            ..Default::default()
        };
        assert!(strict.check(&headers(Some("other:4483"), None)).is_err());
    }

    #[test]
    fn operational_routes_take_ip_hosts_but_not_rebinding_names_or_foreign_origins() {
        let strict = OriginPolicy {
            allowed_hosts: vec!["gw.internal".into()],
            ..loopback()
        };
        for host in ["10.1.2.3:4483", "[fd00::5]:4483", "192.168.0.7"] {
            assert!(strict.check(&headers(Some(host), None)).is_err(), "{host}");
            assert_eq!(
                strict.check_operational(&headers(Some(host), None)),
                Ok(()),
                "{host}"
            );
        }
        assert_eq!(
            strict.check_operational(&headers(Some("evil.example:4483"), None)),
            Err(Refusal::Host("evil.example:4483".into()))
        );
        assert!(matches!(
            strict.check_operational(&headers(Some("10.1.2.3"), Some("https://evil.example"))),
            Err(Refusal::Origin(_))
        ));
    }
}

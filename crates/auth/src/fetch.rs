//! The gateway's own HTTP requests to identity providers and token endpoints (discovery, JWKS,
//! introspection, token exchange), guarded against server-side request forgery: HTTPS only unless
//! `insecureAllowHttp`; only globally reachable addresses (the IANA special-purpose registries, see
//! `address`) unless private ones are allowed, checked on the literal host and, by the resolver, on
//! every address a name resolves to, which are the only addresses reqwest connects to; no proxy
//! (one would resolve and connect on our behalf, past the check); no redirects; bounded time and
//! size.

mod address;
mod registry;
mod resolve;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::{Client, Url};

use crate::url_redact::redact_url;

use resolve::{GuardedResolver, Lookup};

/// Per request, connection included, unless the policy says otherwise.
const TIMEOUT: Duration = Duration::from_secs(5);
/// Largest answer read.
pub(crate) const MAX_ANSWER: usize = 1024 * 1024;

/// Who may be reached, and how.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchPolicy {
    /// Allow `http://` URLs (`insecureAllowHttp`).
    pub allow_http: bool,
    /// Allow private, loopback and link-local addresses (`jwksAllowPrivateIp`,
    /// `protectedResourceAllowPrivateIp`, ...).
    pub allow_private: bool,
    /// Extra trust anchors (PEM), from `caBundlePath`.
    pub ca_bundle_pem: Option<Vec<u8>>,
    /// Bound on one request, connection included (None: 5 s).
    pub timeout: Option<Duration>,
}

/// Why a fetch failed (never carries a secret: bodies are cut and credentials never included).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The URL is refused by policy.
    #[error("{0}")]
    Refused(String),
    /// The request failed or timed out.
    #[error("{0}")]
    Failed(String),
}

/// A guarded client.
#[derive(Clone)]
pub struct Fetcher {
    client: Client,
    policy: FetchPolicy,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("policy", &self.policy.allow_http)
            .finish()
    }
}

impl Fetcher {
    /// A client following `policy`.
    ///
    /// # Errors
    /// When the CA bundle is not PEM, or the TLS stack cannot start.
    pub fn new(policy: FetchPolicy) -> Result<Self, FetchError> {
        Self::with_lookup(policy, Lookup::System)
    }

    fn with_lookup(policy: FetchPolicy, lookup: Lookup) -> Result<Self, FetchError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let timeout = policy.timeout.unwrap_or(TIMEOUT);
        let mut builder = Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("vmcp/", env!("CARGO_PKG_VERSION")))
            // HTTPS_PROXY and friends would send the request through a proxy that resolves and
            // connects for us, past the resolver's check; there is no setting for a proxy.
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver {
                allow_private: policy.allow_private,
                lookup,
            }));
        if let Some(pem) = &policy.ca_bundle_pem {
            let certs = reqwest::Certificate::from_pem_bundle(pem).map_err(|e| {
                FetchError::Refused(format!("caBundlePath is not a PEM bundle: {e}"))
            })?;
            if certs.is_empty() {
                return Err(FetchError::Refused(
                    "caBundlePath holds no PEM certificate".into(),
                ));
            }
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        let client = builder
            .build()
            .map_err(|e| FetchError::Failed(format!("cannot build an HTTP client: {e}")))?;
        Ok(Self { client, policy })
    }

    /// Checks `url` against the policy (scheme, literal addresses).
    ///
    /// # Errors
    /// [`FetchError::Refused`] naming the rule.
    pub fn check(&self, url: &str) -> Result<Url, FetchError> {
        let parsed = Url::parse(url).map_err(|e| FetchError::Refused(format!("not a URL: {e}")))?;
        match parsed.scheme() {
            "https" => {}
            "http" if self.policy.allow_http => {}
            "http" => {
                return Err(FetchError::Refused(format!(
                    "{} is not HTTPS (set insecureAllowHttp to allow it)",
                    redact_url(url)
                )));
            }
            other => {
                return Err(FetchError::Refused(format!(
                    "{}: scheme {other} not allowed",
                    redact_url(url)
                )));
            }
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(FetchError::Refused(format!(
                "{}: credentials in URLs are not allowed",
                parsed.host_str().unwrap_or("?")
            )));
        }
        let literal = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            Some(url::Host::Domain(_)) => None,
            None => {
                return Err(FetchError::Refused(format!(
                    "{} has no host",
                    redact_url(url)
                )));
            }
        };
        // reqwest connects to a literal without asking the resolver, so it is judged here.
        if let Some(ip) = literal
            && !self.policy.allow_private
            && let Some(why) = address::refusal(ip)
        {
            return Err(FetchError::Refused(format!(
                "{} is a non-public address ({why}; set the config's AllowPrivateIp key to allow it)",
                redact_url(url)
            )));
        }
        Ok(parsed)
    }

    /// GET `url`, expecting a 2xx JSON answer.
    ///
    /// # Errors
    /// Refused by policy, failed, non-2xx, too large.
    pub async fn get(&self, url: &str) -> Result<Vec<u8>, FetchError> {
        let parsed = self.check(url)?;
        let resp = self
            .client
            .get(parsed)
            .header("accept", "application/json")
            .send()
            .await;
        read(url, resp).await
    }

    /// POST a form to `url` with optional HTTP Basic client credentials; the answer's status is
    /// returned with its body (token endpoints answer errors as 400 JSON).
    ///
    /// # Errors
    /// Refused by policy, failed, too large.
    pub async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<(u16, Vec<u8>), FetchError> {
        let parsed = self.check(url)?;
        let mut req = self
            .client
            .post(parsed)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(form_encode(form));
        if let Some((id, secret)) = basic {
            // RFC 6749 section 2.3.1: both parts form-encoded before Basic.
            req = req.basic_auth(form_component(id), Some(form_component(secret)));
        }
        let resp = req.send().await.map_err(|e| failed(url, e))?;
        if resp.status().is_redirection() {
            return Err(redirected(url, &resp));
        }
        let status = resp.status().as_u16();
        Ok((status, body(url, resp).await?))
    }
}

fn failed(url: &str, e: reqwest::Error) -> FetchError {
    let why = if e.is_timeout() {
        "timed out".to_string()
    } else {
        // reqwest's text names the whole URL; this one names its redacted form, once.
        let e = e.without_url();
        let mut s = e.to_string();
        let mut src = std::error::Error::source(&e);
        while let Some(cause) = src {
            s.push_str(": ");
            s.push_str(&cause.to_string());
            src = cause.source();
        }
        s
    };
    FetchError::Failed(format!("{}: {why}", redact_url(url)))
}

/// A redirect, refused: following it could carry a client secret or a token to another host
/// (the client never follows one; this names where it pointed).
fn redirected(url: &str, resp: &reqwest::Response) -> FetchError {
    let to = resp
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|l| l.to_str().ok())
        .and_then(|l| resp.url().join(l).ok())
        .map_or_else(|| "no usable Location".to_string(), redact_url);
    FetchError::Failed(format!(
        "{} answered HTTP {} redirecting to {to}; redirects are not followed",
        redact_url(url),
        resp.status()
    ))
}

async fn read(url: &str, resp: reqwest::Result<reqwest::Response>) -> Result<Vec<u8>, FetchError> {
    let resp = resp.map_err(|e| failed(url, e))?;
    let status = resp.status();
    if status.is_redirection() {
        return Err(redirected(url, &resp));
    }
    if !status.is_success() {
        return Err(FetchError::Failed(format!(
            "{} answered HTTP {status}",
            redact_url(url)
        )));
    }
    body(url, resp).await
}

async fn body(url: &str, mut resp: reqwest::Response) -> Result<Vec<u8>, FetchError> {
    let mut out = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| failed(url, e))? {
        if out.len() + chunk.len() > MAX_ANSWER {
            return Err(FetchError::Failed(format!(
                "{}: answer larger than {MAX_ANSWER} bytes",
                redact_url(url)
            )));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// `application/x-www-form-urlencoded` for one component.
fn form_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(b as char);
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn form_encode(form: &[(&str, &str)]) -> String {
    form.iter()
        .map(|(k, v)| format!("{}={}", form_component(k), form_component(v)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetcher(allow_http: bool, allow_private: bool) -> Fetcher {
        Fetcher::new(FetchPolicy {
            allow_http,
            allow_private,
            ..FetchPolicy::default()
        })
        .unwrap()
    }

    #[test]
    fn urls_are_checked_against_the_policy() {
        let strict = fetcher(false, false);
        assert!(strict.check("https://idp.example.com/jwks").is_ok());
        let e = strict.check("http://idp.example.com/jwks").unwrap_err();
        assert!(e.to_string().contains("insecureAllowHttp"), "{e}");
        let e = strict.check("https://127.0.0.1/jwks").unwrap_err();
        assert!(e.to_string().contains("AllowPrivateIp"), "{e}");
        let e = strict.check("https://[::1]/jwks").unwrap_err();
        assert!(e.to_string().contains("AllowPrivateIp"), "{e}");
        assert!(strict.check("https://169.254.169.254/latest").is_err());
        assert!(strict.check("file:///etc/passwd").is_err());
        assert!(strict.check("https://user:pw@idp.example.com/").is_err());
        assert!(strict.check("not a url").is_err());
        let lax = fetcher(true, true);
        assert!(lax.check("http://127.0.0.1:8080/jwks").is_ok());
    }

    #[test]
    fn literal_addresses_outside_the_old_filter_are_refused() {
        // reqwest connects to literals without asking the resolver: check() is their only guard.
        let strict = fetcher(false, false);
        for url in [
            "https://198.18.0.1/jwks",
            "https://240.0.0.1/jwks",
            "https://192.0.0.1/jwks",
            "https://[64:ff9b::a9fe:a9fe]/jwks",
            "https://[64:ff9b:1::808:808]/jwks",
            "https://[::127.0.0.1]/jwks",
            "https://[2002:a9fe:a9fe::1]/jwks",
            "https://[2001:0:808:808::80ff:fffe]/jwks",
            "https://[3fff::1]/jwks",
        ] {
            let e = strict.check(url).unwrap_err();
            assert!(e.to_string().contains("AllowPrivateIp"), "{url}: {e}");
        }
        let e = strict
            .check("https://198.18.0.1/jwks?key=s3cr3t")
            .unwrap_err();
        assert!(!e.to_string().contains("s3cr3t"), "{e}");
        for url in ["https://8.8.8.8/jwks", "https://[64:ff9b::808:808]/jwks"] {
            assert!(strict.check(url).is_ok(), "{url}");
        }
        assert!(
            fetcher(false, true)
                .check("https://198.18.0.1/jwks")
                .is_ok()
        );
    }

    #[tokio::test]
    async fn a_name_resolving_to_loopback_is_refused_unless_allowed() {
        let strict = fetcher(true, false);
        let e = strict.get("http://localhost:9/nothing").await.unwrap_err();
        assert!(e.to_string().contains("non-public"), "{e}");
        assert!(e.to_string().contains("Loopback"), "{e}");
    }

    /// An HTTPS server on loopback with the test certificate of tests/tls (a private CA).
    async fn tls_server() -> String {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/tls");
        let certs: Vec<CertificateDer> = CertificateDer::pem_file_iter(format!("{dir}/server.pem"))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let key = PrivateKeyDer::from_pem_file(format!("{dir}/server.key")).unwrap();
        let config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let mut buf = [0u8; 4096];
                    let _ = tls.read(&mut buf).await;
                    let _ = tls
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\nconnection: close\r\n\r\n{\"keys\":[]}")
                        .await;
                    let _ = tls.shutdown().await;
                });
            }
        });
        format!("https://127.0.0.1:{port}/jwks")
    }

    #[tokio::test]
    async fn a_private_ca_is_trusted_only_with_its_bundle() {
        let url = tls_server().await;
        let ca = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/tls/ca.pem"
        ))
        .unwrap();
        let trusting = Fetcher::new(FetchPolicy {
            allow_private: true,
            ca_bundle_pem: Some(ca),
            ..FetchPolicy::default()
        })
        .unwrap();
        assert_eq!(trusting.get(&url).await.unwrap(), b"{\"keys\":[]}");
        let e = fetcher(false, true).get(&url).await.unwrap_err();
        assert!(e.to_string().contains("UnknownIssuer"), "{e}");
        assert!(
            Fetcher::new(FetchPolicy {
                ca_bundle_pem: Some(b"not pem".to_vec()),
                ..FetchPolicy::default()
            })
            .is_err()
        );
    }

    #[test]
    fn forms_are_encoded() {
        assert_eq!(
            form_encode(&[("grant_type", "a:b"), ("scope", "x y"), ("t", "é&=")]),
            "grant_type=a%3Ab&scope=x+y&t=%C3%A9%26%3D"
        );
    }
}

//! TLS to Redis (`rediss://`, `sessionStorage.tls`): the roots a server certificate must chain
//! to, an optional client certificate, and the name it must carry. Everything is read and parsed
//! once, when the client is built, so a missing or unreadable file is a startup error that names
//! it, and a connect costs only the handshake.
//!
//! The handshake itself is tokio-rustls over the workspace's one rustls with ring, the same
//! stack as every other TLS connection vmcp makes; the `redis` crate then speaks RESP over the
//! encrypted stream (see `connect`).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::TlsConnector;

/// What `sessionStorage.tls` names: files, not their contents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM certificates to trust instead of the system's roots.
    pub ca_file: Option<PathBuf>,
    /// A PEM client certificate chain (with `key_file`), for Redis's `tls-auth-clients`.
    pub cert_file: Option<PathBuf>,
    /// The PEM private key of `cert_file`.
    pub key_file: Option<PathBuf>,
    /// The name the server certificate must carry (and SNI), when it differs from the host
    /// the address names.
    pub server_name: Option<String>,
}

/// Why the TLS settings cannot be used; each names the setting at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read or holds nothing usable.
    #[error("{key} {}: {reason}", path.display())]
    File {
        /// `caFile`, `certFile` or `keyFile`.
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// `cert_file` without `key_file`, or the reverse.
    #[error("certFile and keyFile go together: set both or neither")]
    HalfIdentity,
    /// The client certificate and key do not make an identity.
    #[error("certFile and keyFile: {0}")]
    Identity(String),
    /// Not a DNS name or an IP address.
    #[error("serverName {0:?} is not a DNS name or an IP address")]
    ServerName(String),
    /// rustls refused the settings.
    #[error("TLS: {0}")]
    Setup(String),
    /// No root certificate could be loaded from the system and no `caFile` was given.
    #[error("no trusted root certificates: the system has none readable ({0}); set caFile")]
    NoRoots(String),
}

/// Ready-to-use TLS settings (cheap to clone).
#[derive(Clone)]
pub struct Tls {
    connector: TlsConnector,
    server_name: Option<ServerName<'static>>,
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

impl Tls {
    /// Reads and checks the files.
    ///
    /// # Errors
    /// [`TlsError`] naming the file or setting that cannot be used.
    pub fn new(files: &TlsFiles) -> Result<Self, TlsError> {
        if files.cert_file.is_some() != files.key_file.is_some() {
            return Err(TlsError::HalfIdentity);
        }
        let roots = match &files.ca_file {
            Some(path) => ca_roots(path)?,
            None => system_roots()?,
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Setup(e.to_string()))?
            .with_root_certificates(roots);
        let config = match (&files.cert_file, &files.key_file) {
            (None, None) => builder.with_no_client_auth(),
            (Some(cert), Some(key)) => {
                let chain = certificates("certFile", cert)?;
                let key = PrivateKeyDer::from_pem_file(key).map_err(|e| TlsError::File {
                    key: "keyFile",
                    path: key.clone(),
                    reason: e.to_string(),
                })?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| TlsError::Identity(e.to_string()))?
            }
            _ => return Err(TlsError::HalfIdentity), // checked above
        };
        let server_name = match &files.server_name {
            Some(name) => Some(
                ServerName::try_from(name.clone())
                    .map_err(|_| TlsError::ServerName(name.clone()))?,
            ),
            None => None,
        };
        Ok(Self {
            connector: TlsConnector::from(Arc::new(config)),
            server_name,
        })
    }

    pub(crate) fn connector(&self) -> &TlsConnector {
        &self.connector
    }

    /// The name to verify: the configured one, else the host of `address` (`host:port`).
    pub(crate) fn server_name(&self, address: &str) -> Result<ServerName<'static>, String> {
        if let Some(name) = &self.server_name {
            return Ok(name.clone());
        }
        let host = address.rsplit_once(':').map_or(address, |(h, _)| h);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        ServerName::try_from(host.to_owned())
            .map_err(|_| format!("{host:?} is not a TLS server name; set tls.serverName"))
    }
}

fn certificates(key: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let fail = |reason: String| TlsError::File {
        key,
        path: path.to_owned(),
        reason,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| fail(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(e.to_string()))?;
    if certs.is_empty() {
        return Err(fail("no PEM certificate in it".into()));
    }
    Ok(certs)
}

fn ca_roots(path: &Path) -> Result<rustls::RootCertStore, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in certificates("caFile", path)? {
        roots.add(cert).map_err(|e| TlsError::File {
            key: "caFile",
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
    }
    Ok(roots)
}

/// The system's roots, read once; unreadable entries are skipped as long as some load.
fn system_roots() -> Result<rustls::RootCertStore, TlsError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = rustls::RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found
            .errors
            .first()
            .map_or_else(|| "none found".to_owned(), ToString::to_string);
        return Err(TlsError::NoRoots(why));
    }
    Ok(roots)
}

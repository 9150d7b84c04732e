//! A real `redis-server` that speaks only TLS, with certificates made for the test (rcgen: a CA,
//! a server certificate for `127.0.0.1`, `localhost` and `redis.test`, a client certificate,
//! and a second CA that signed nothing here) and one ACL user, [`RedisTlsServer::USER`], while
//! the default user is off. Tests skip with a note when `redis-server` is not installed, and
//! fail under `CI=true`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// Whether Redis asks connecting clients for a certificate (`--tls-auth-clients`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientCerts {
    /// Verified when sent, not required.
    Optional,
    /// Required: a client without one is refused.
    Required,
}

/// A TLS-only `redis-server`; killed (and its certificates removed) on drop.
pub struct RedisTlsServer {
    port: u16,
    dir: PathBuf,
    auth_clients: ClientCerts,
    child: Option<Child>,
}

impl RedisTlsServer {
    /// The ACL user that may do everything.
    pub const USER: &'static str = "alice";
    /// Its password.
    pub const PASSWORD: &'static str = "s3cret-alice";

    /// Starts one, or returns None (after printing why) when `redis-server` is not installed
    /// outside CI.
    pub fn start(auth_clients: ClientCerts) -> Option<Self> {
        if !installed() {
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "vmcp-redis-tls-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).expect("a directory for the certificates");
        write_certificates(&dir);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let mut server = Self {
            port,
            dir,
            auth_clients,
            child: None,
        };
        server.restart();
        Some(server)
    }

    /// `127.0.0.1:port`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `rediss://127.0.0.1:port`.
    pub fn url(&self) -> String {
        format!("rediss://127.0.0.1:{}", self.port)
    }

    /// The CA that signed the server and client certificates.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// A CA that signed neither.
    pub fn other_ca_file(&self) -> PathBuf {
        self.dir.join("other-ca.pem")
    }

    /// A client certificate the CA signed.
    pub fn client_cert_file(&self) -> PathBuf {
        self.dir.join("client.pem")
    }

    /// Its key.
    pub fn client_key_file(&self) -> PathBuf {
        self.dir.join("client.key")
    }

    /// Stops the server, as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same port (empty), and waits until it answers.
    pub fn restart(&mut self) {
        self.kill();
        for attempt in 1..=5 {
            let mut child = self.spawn();
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Ok(Some(status)) = child.try_wait() {
                    assert!(attempt < 5, "redis-server (TLS) exited at start ({status})");
                    std::thread::sleep(Duration::from_millis(200));
                    break;
                }
                if self.cli(&["PING"]).trim() == "PONG" {
                    self.child = Some(child);
                    return;
                }
                assert!(
                    Instant::now() < deadline,
                    "redis-server (TLS) did not start"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    fn spawn(&self) -> Child {
        let file = |name: &str| self.dir.join(name);
        let auth_clients = match self.auth_clients {
            ClientCerts::Optional => "optional",
            ClientCerts::Required => "yes",
        };
        Command::new("redis-server")
            .args(["--port", "0", "--tls-port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .arg("--tls-cert-file")
            .arg(file("server.pem"))
            .arg("--tls-key-file")
            .arg(file("server.key"))
            .arg("--tls-ca-cert-file")
            .arg(file("ca.pem"))
            .args(["--tls-auth-clients", auth_clients])
            .args(["--save", "", "--appendonly", "no"])
            .args(["--user", "default", "off"])
            .args(["--user", Self::USER, "on"])
            .arg(format!(">{}", Self::PASSWORD))
            .args(["~*", "&*", "+@all"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server")
    }

    /// Runs `redis-cli` over TLS as [`Self::USER`] (for tests that inspect keys), returning its
    /// stdout.
    pub fn cli(&self, args: &[&str]) -> String {
        let file = |name: &str| self.dir.join(name);
        let out = Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "--tls"])
            .arg("--cacert")
            .arg(file("ca.pem"))
            .arg("--cert")
            .arg(file("client.pem"))
            .arg("--key")
            .arg(file("client.key"))
            .args(["--user", Self::USER, "--pass", Self::PASSWORD])
            .arg("--no-auth-warning")
            .args(args)
            .output()
            .expect("run redis-cli");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for RedisTlsServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether `redis-server` can run here; outside CI a missing one skips the test with a note.
fn installed() -> bool {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must have redis-server (apt-get install redis-server; .ci/run does)"
        );
        eprintln!("note: redis-server is not installed; skipping this Redis test");
    }
    found
}

/// A CA and what it signs, plus an unrelated CA, as PEM files in `dir`.
fn write_certificates(dir: &Path) {
    let write = |name: &str, pem: String| {
        std::fs::write(dir.join(name), pem).expect("write a test certificate");
    };
    let ca_key = KeyPair::generate().expect("a CA key");
    let ca =
        CertifiedIssuer::self_signed(ca_params("vmcp test Redis CA"), ca_key).expect("the test CA");
    write("ca.pem", ca.pem());
    let other_key = KeyPair::generate().expect("a CA key");
    let other =
        CertifiedIssuer::self_signed(ca_params("some other CA"), other_key).expect("another CA");
    write("other-ca.pem", other.pem());

    let leaf = |names: Vec<String>, purpose: ExtendedKeyUsagePurpose, file: &str| {
        let mut params = CertificateParams::new(names).expect("certificate names");
        params
            .distinguished_name
            .push(DnType::CommonName, format!("vmcp test {file}"));
        params.extended_key_usages = vec![purpose];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let key = KeyPair::generate().expect("a key");
        let cert = params.signed_by(&key, &ca).expect("a signed certificate");
        write(&format!("{file}.pem"), cert.pem());
        write(&format!("{file}.key"), key.serialize_pem());
    };
    leaf(
        vec!["127.0.0.1".into(), "localhost".into(), "redis.test".into()],
        ExtendedKeyUsagePurpose::ServerAuth,
        "server",
    );
    leaf(
        vec!["vmcp-replica".into()],
        ExtendedKeyUsagePurpose::ClientAuth,
        "client",
    );
}

fn ca_params(name: &str) -> CertificateParams {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params
}

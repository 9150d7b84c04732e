//! A real `redis-server` (Debian's package) started for a test on a free loopback port, with
//! persistence off (or, for outage tests, an append-only file that survives a kill). Tests skip
//! with a note when it is not installed, and fail under `CI=true`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` process; killed on drop.
pub struct RedisServer {
    port: u16,
    password: Option<String>,
    child: Option<Child>,
    /// Where the append-only file lives, when persistent; removed on drop.
    dir: Option<PathBuf>,
}

impl RedisServer {
    /// Starts one, or returns None (after printing why) when `redis-server` is not installed
    /// outside CI.
    pub fn start() -> Option<Self> {
        Self::start_with(None)
    }

    /// Starts one that requires `password`.
    pub fn start_with(password: Option<&str>) -> Option<Self> {
        Self::start_in(password, None)
    }

    /// Starts one that writes every change to an append-only file (fsync on each write), so a
    /// [`RedisServer::restart`] after a kill comes back with every key it held, as a production
    /// Redis with AOF does.
    pub fn start_persistent() -> Option<Self> {
        let dir = std::env::temp_dir().join(format!(
            "vmcp-redis-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).expect("a directory for the append-only file");
        Self::start_in(None, Some(dir))
    }

    fn start_in(password: Option<&str>, dir: Option<PathBuf>) -> Option<Self> {
        let installed = Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI must have redis-server (apt-get install redis-server; .ci/run does)"
            );
            eprintln!("note: redis-server is not installed; skipping this Redis test");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let mut server = Self {
            port,
            password: password.map(str::to_owned),
            child: None,
            dir,
        };
        server.restart();
        Some(server)
    }

    /// `host:port`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server (an outage), as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same port, empty (unless persistent), and waits until it answers.
    /// A start that exits at once (its port briefly held by another socket) is retried a few
    /// times before giving up.
    pub fn restart(&mut self) {
        self.kill();
        for attempt in 1..=5 {
            let mut child = self.spawn();
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Ok(Some(status)) = child.try_wait() {
                    assert!(attempt < 5, "redis-server exited at start ({status})");
                    std::thread::sleep(Duration::from_millis(200));
                    break;
                }
                if self.answers() {
                    self.child = Some(child);
                    return;
                }
                assert!(Instant::now() < deadline, "redis-server did not start");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// Whether a Redis answers PING on the port (with or without a password), not merely
    /// whether something accepts connections there.
    fn answers(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
        let mut reply = [0u8; 7];
        s.write_all(b"PING\r\n").is_ok()
            && s.read(&mut reply).is_ok_and(|n| {
                reply[..n].starts_with(b"+PONG") || reply[..n].starts_with(b"-NOAUTH")
            })
    }

    fn spawn(&self) -> Child {
        let mut cmd = Command::new("redis-server");
        cmd.args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(["--enable-debug-command", "local"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        match &self.dir {
            Some(dir) => {
                cmd.args(["--appendonly", "yes", "--appendfsync", "always", "--dir"])
                    .arg(dir);
            }
            None => {
                cmd.args(["--appendonly", "no"]);
            }
        }
        if let Some(p) = &self.password {
            cmd.args(["--requirepass", p]);
        }
        cmd.spawn().expect("start redis-server")
    }

    /// Runs `redis-cli` against it (for tests that inspect keys), returning its stdout.
    pub fn cli(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("redis-cli");
        cmd.args(["-p", &self.port.to_string(), "--no-auth-warning"]);
        if let Some(p) = &self.password {
            cmd.args(["-a", p]);
        }
        let out = cmd.args(args).output().expect("run redis-cli");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

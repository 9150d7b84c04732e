//! Opening a connection: TCP, TLS when configured, the reply bound around the stream, and the
//! `redis` crate's handshake over it (AUTH with the ACL username, SELECT), all within the
//! configured timeout. A failure says whether waiting can help ([`Failure::Unreachable`]) or
//! the configuration must change ([`Failure::Rejected`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};

use redis::aio::{MultiplexedConnection, PubSub};
use redis::{AsyncConnectionConfig, RedisConnectionInfo};
use tokio::net::TcpStream;

use crate::bounded::{Bounded, Budget, Io, tls_error};
use crate::config::{Config, RedisError};

/// The task half of a connection: it writes what the connection is given and reads the
/// replies. Whoever holds it must poll it while a call waits (see `client`).
pub(crate) type Driver = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Why a connection could not be opened.
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// Down, slow or closed: try again later.
    Unreachable(String),
    /// Reached, and it refused us: the configuration must change.
    Rejected(String),
}

impl Failure {
    pub(crate) fn reason(&self) -> &str {
        match self {
            Failure::Unreachable(r) | Failure::Rejected(r) => r,
        }
    }

    pub(crate) fn into_error(self, config: &Config) -> RedisError {
        let address = config.display_address();
        match self {
            Failure::Unreachable(reason) => RedisError::Unavailable { address, reason },
            Failure::Rejected(reason) => RedisError::Rejected { address, reason },
        }
    }
}

/// A connection for commands, with its driver (not spawned: the caller polls it).
pub(crate) async fn commands(
    config: &Config,
) -> Result<(MultiplexedConnection, Driver, Budget), Failure> {
    let stage = Stage::default();
    bounded(config, &stage, async {
        let budget = Budget::default();
        let stream = stream(config, budget.clone(), &stage).await?;
        // No response timeout of the crate's own: each call is bounded by the caller, once.
        let options = AsyncConnectionConfig::new().set_response_timeout(None);
        match MultiplexedConnection::new_with_config(&info(config), stream, options).await {
            Ok((connection, driver)) => Ok((connection, Box::pin(driver) as Driver, budget)),
            Err(e) => Err(classify(&e, &budget, config)),
        }
    })
    .await
}

/// A connection for pub/sub (its driver runs as a task of the crate's).
pub(crate) async fn pubsub(config: &Config) -> Result<(PubSub, Budget), Failure> {
    let stage = Stage::default();
    bounded(config, &stage, async {
        let budget = Budget::default();
        let stream = stream(config, budget.clone(), &stage).await?;
        match PubSub::new(&info(config), stream).await {
            Ok(pubsub) => Ok((pubsub, budget)),
            Err(e) => Err(classify(&e, &budget, config)),
        }
    })
    .await
}

/// How far a connect got, for the message when it runs out of time.
#[derive(Default)]
struct Stage(AtomicU8);

const TCP: u8 = 0;
const TLS: u8 = 1;
const REDIS: u8 = 2;

impl Stage {
    fn reached(&self, stage: u8) {
        self.0.store(stage, Ordering::Relaxed);
    }

    fn describe(&self) -> &'static str {
        match self.0.load(Ordering::Relaxed) {
            TCP => "TCP connect",
            // A plain Redis port reads a ClientHello as the start of an inline command and
            // waits for its end.
            TLS => "TLS handshake unanswered: is this a TLS port?",
            _ => "Redis handshake",
        }
    }
}

async fn bounded<T>(
    config: &Config,
    stage: &Stage,
    open: impl Future<Output = Result<T, Failure>>,
) -> Result<T, Failure> {
    match tokio::time::timeout(config.timeout, open).await {
        Ok(r) => r,
        Err(_) => Err(Failure::Unreachable(format!(
            "no connection within {:?} ({})",
            config.timeout,
            stage.describe()
        ))),
    }
}

/// TCP, then TLS if configured, inside the reply bound.
async fn stream(config: &Config, budget: Budget, stage: &Stage) -> Result<Bounded, Failure> {
    let tcp = TcpStream::connect(&config.address)
        .await
        .map_err(|e| Failure::Unreachable(format!("connect: {e}")))?;
    let _ = tcp.set_nodelay(true);
    let io: Box<dyn Io> = match &config.tls {
        None => Box::new(tcp),
        Some(tls) => {
            stage.reached(TLS);
            let name = tls
                .server_name(&config.address)
                .map_err(Failure::Rejected)?;
            let encrypted =
                tls.connector()
                    .connect(name, tcp)
                    .await
                    .map_err(|e| match tls_error(&e) {
                        Some(refused) => Failure::Rejected(tls_refusal(&refused)),
                        None => Failure::Unreachable(format!("TLS handshake: {e}")),
                    })?;
            Box::new(encrypted)
        }
    };
    stage.reached(REDIS);
    Ok(Bounded::new(io, budget))
}

fn info(config: &Config) -> RedisConnectionInfo {
    let mut info = RedisConnectionInfo::default().set_db(i64::from(config.db));
    if let Some(user) = &config.username {
        info = info.set_username(user);
    }
    if let Some(password) = &config.password {
        info = info.set_password(password);
    }
    info
}

/// Sorts a handshake failure. The server's own words about credentials are never repeated:
/// they can quote what was sent.
fn classify(e: &redis::RedisError, budget: &Budget, config: &Config) -> Failure {
    if let Some(refused) = budget.tls_failure() {
        return Failure::Rejected(tls_refusal(&refused));
    }
    if budget.exceeded() {
        return Failure::Rejected(format!(
            "a reply larger than {} MiB",
            crate::MAX_REPLY / (1024 * 1024)
        ));
    }
    let text = e.to_string();
    if e.kind() == redis::ErrorKind::AuthenticationFailed
        || text.contains("NOAUTH")
        || text.contains("WRONGPASS")
    {
        return Failure::Rejected(auth_failed(config));
    }
    if text.contains("switch database") {
        return Failure::Rejected(format!(
            "SELECT {} refused (sessionStorage.db): {}",
            config.db,
            e.detail().unwrap_or("no detail")
        ));
    }
    if config.tls.is_none() && e.is_connection_dropped() {
        return Failure::Unreachable(format!(
            "{e} (if this is a TLS port, use rediss:// or sessionStorage.tls)"
        ));
    }
    Failure::Unreachable(e.to_string())
}

/// Why authentication failed, naming where the credentials come from (but neither them nor
/// the user: this text can reach clients in a 503).
pub(crate) fn auth_failed(config: &Config) -> String {
    if config.password.is_some() {
        "authentication failed: Redis refused the user and password (check sessionStorage.username and THV_SESSION_REDIS_PASSWORD)".to_owned()
    } else {
        "authentication required: Redis wants a password (set THV_SESSION_REDIS_PASSWORD, and sessionStorage.username for an ACL user)".to_owned()
    }
}

fn tls_refusal(refused: &str) -> String {
    let hint = if refused.contains("InvalidContentType") || refused.contains("corrupt message") {
        " (is this a TLS port?)"
    } else if refused.contains("certificate") || refused.contains("Certificate") {
        " (check sessionStorage.tls: caFile, certFile, keyFile, serverName)"
    } else {
        ""
    };
    format!("TLS: {refused}{hint}")
}

//! [`Config`]: where Redis is and how to talk to it; [`RedisError`]: why a call failed.

use std::fmt;
use std::time::Duration;

use crate::tls::Tls;

/// Where Redis is and how to talk to it.
#[derive(Clone)]
pub struct Config {
    /// `host:port` (an IPv6 host in brackets).
    pub address: String,
    /// The database `SELECT`ed on connect.
    pub db: u32,
    /// The ACL username (Redis 6+), if any; `default` without one.
    pub username: Option<String>,
    /// The password, if any.
    pub password: Option<String>,
    /// TLS settings, or None for plain TCP.
    pub tls: Option<Tls>,
    /// Upper bound on a connect and on each call.
    pub timeout: Duration,
}

/// The password never prints.
impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("address", &self.address)
            .field("db", &self.db)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("tls", &self.tls)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Config {
    /// How the address reads in messages: `rediss://host:port` with TLS, `host:port` without.
    pub fn display_address(&self) -> String {
        match self.tls {
            Some(_) => format!("rediss://{}", self.address),
            None => self.address.clone(),
        }
    }
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedisError {
    /// Redis could not be reached or did not answer in time; the caller may retry later.
    #[error("Redis at {address} is unavailable: {reason}")]
    Unavailable {
        /// `host:port`.
        address: String,
        /// What went wrong.
        reason: String,
    },
    /// Redis was reached but refused this client: a wrong password or username, a server
    /// certificate that does not verify, a refused client certificate. Retrying does not help:
    /// the configuration must change.
    #[error("Redis at {address} refused the connection: {reason}")]
    Rejected {
        /// `host:port`.
        address: String,
        /// What was refused (never the server's own words about credentials).
        reason: String,
    },
    /// Redis answered with an error (a script error, a wrong type...).
    #[error("Redis refused the command: {0}")]
    Refused(String),
}

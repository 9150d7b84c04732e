//! The fetcher's DNS resolver: resolves a name and hands reqwest only the addresses policy allows,
//! so the address checked is the address connected to (reqwest connects to what its resolver
//! returns and never looks the name up again; there is no window for a rebinding answer).
//!
//! Not covered here: IP-literal URLs, which reqwest connects to without asking its resolver
//! (`Fetcher::check` judges those), and proxies, which resolve the name themselves (the fetcher
//! turns proxies off).

use std::net::{IpAddr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::address;

/// Where names are looked up.
#[derive(Debug, Clone)]
pub(crate) enum Lookup {
    /// The system resolver (getaddrinfo), as reqwest would use.
    System,
    /// Every name resolves to these addresses: lets tests give a name a forbidden answer.
    #[cfg(test)]
    Fixed(Vec<IpAddr>),
}

/// Resolves names, then drops the addresses policy forbids.
pub(crate) struct GuardedResolver {
    pub(crate) allow_private: bool,
    pub(crate) lookup: Lookup,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let lookup = self.lookup.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found = match lookup {
                Lookup::System => tokio::net::lookup_host((host.as_str(), 0))
                    .await?
                    .collect::<Vec<_>>(),
                #[cfg(test)]
                Lookup::Fixed(ips) => ips.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect(),
            };
            let (allowed, refused) = allowed_addresses(found, allow_private);
            if allowed.is_empty() {
                let why = refused.first().map_or_else(
                    || "no address".to_string(),
                    |(ip, why)| format!("{ip} is {why}"),
                );
                return Err(format!(
                    "{host} resolves only to non-public addresses ({why}; set the config's AllowPrivateIp key to allow them)"
                )
                .into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// `found` split into what may be connected to and what may not, with the reason.
fn allowed_addresses(
    found: Vec<SocketAddr>,
    allow_private: bool,
) -> (Vec<SocketAddr>, Vec<(IpAddr, String)>) {
    let mut allowed = Vec::new();
    let mut refused = Vec::new();
    for addr in found {
        match address::refusal(addr.ip()) {
            Some(why) if !allow_private => refused.push((addr.ip(), why)),
            _ => allowed.push(addr),
        }
    }
    (allowed, refused)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::super::{FetchPolicy, Fetcher};
    use super::*;

    fn answering(ips: &[&str], allow_private: bool) -> Fetcher {
        let policy = FetchPolicy {
            allow_http: true,
            allow_private,
            timeout: Some(Duration::from_secs(2)),
            ..FetchPolicy::default()
        };
        let ips = ips.iter().map(|ip| ip.parse().unwrap()).collect();
        Fetcher::with_lookup(policy, Lookup::Fixed(ips)).unwrap()
    }

    /// A loopback HTTP server answering `{}` and counting connections.
    async fn counting_server() -> (u16, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let count = Arc::new(AtomicUsize::new(0));
        let seen = count.clone();
        tokio::spawn(async move {
            while let Ok((mut tcp, _)) = listener.accept().await {
                seen.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = tcp.read(&mut buf).await;
                    let _ = tcp
                        .write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
                        )
                        .await;
                });
            }
        });
        (port, count)
    }

    #[tokio::test]
    async fn a_name_resolving_to_a_forbidden_address_is_refused_before_connecting() {
        for ip in [
            "198.18.0.1",
            "240.0.0.1",
            "192.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::808:808",
            "::ffff:198.18.0.1",
            "::10.0.0.1",
            "2002:a00:1::1",
            "2001:0:808:808::80ff:fffe",
        ] {
            let e = answering(&[ip], false)
                .get("http://idp.test/jwks")
                .await
                .unwrap_err();
            assert!(e.to_string().contains("non-public"), "{ip}: {e}");
            assert!(e.to_string().contains("AllowPrivateIp"), "{ip}: {e}");
        }
    }

    #[tokio::test]
    async fn the_connection_goes_to_the_address_the_resolver_returned() {
        // idp.test exists only in this resolver's answer: reaching the server shows reqwest
        // connects to what the guarded resolver handed it, not to a second lookup's answer.
        let (port, count) = counting_server().await;
        let url = format!("http://idp.test:{port}/jwks");
        let got = answering(&["127.0.0.1"], true).get(&url).await.unwrap();
        assert_eq!(got, b"{}");
        assert_eq!(count.load(Ordering::SeqCst), 1);
        // The same answer under the strict policy never reaches the server.
        let e = answering(&["127.0.0.1"], false)
            .get(&url)
            .await
            .unwrap_err();
        assert!(
            e.to_string().contains("127.0.0.1 is 127.0.0.0/8 Loopback"),
            "{e}"
        );
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn only_allowed_addresses_are_handed_to_reqwest() {
        let found: Vec<SocketAddr> = ["198.18.0.1:443", "[64:ff9b::a00:1]:443", "8.8.8.8:443"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        let (allowed, refused) = allowed_addresses(found.clone(), false);
        assert_eq!(allowed, vec![found[2]]);
        assert_eq!(refused.len(), 2);
        let (allowed, refused) = allowed_addresses(found.clone(), true);
        assert_eq!(allowed, found);
        assert!(refused.is_empty());
    }
}

//! Who turns a source link's host name into addresses. The system's resolver in production;
//! the test application installs [`LoopbackOnlyResolver`], which answers loopback names only
//! and records every other name it was asked about, so a test can fail when code under test
//! tries to reach outside the machine.

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};

/// Resolves the host names of source links, and admits (or not) the addresses links name
/// literally, which no resolver is asked about.
#[async_trait::async_trait]
pub trait SourceResolver: Send + Sync + fmt::Debug {
    /// The addresses of `host` (a name, never an address literal), with `port`.
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>>;

    /// Whether a link naming `ip` directly may be fetched at all (before the address policy).
    fn admits_literal(&self, _ip: IpAddr) -> bool {
        true
    }
}

/// The system's resolver (getaddrinfo, through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

#[async_trait::async_trait]
impl SourceResolver for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        Ok(tokio::net::lookup_host((host, port)).await?.collect())
    }
}

/// Answers `localhost` and loopback literals; refuses every other name without asking the
/// system, and remembers it.
#[derive(Debug, Clone, Default)]
pub struct LoopbackOnlyResolver {
    outside: Arc<Mutex<Vec<String>>>,
}

impl LoopbackOnlyResolver {
    /// A resolver with no attempt recorded.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every outside name or address something tried to reach, in order.
    pub fn outside_attempts(&self) -> Vec<String> {
        self.outside
            .lock()
            .map(|attempts| attempts.clone())
            .unwrap_or_default()
    }

    /// Every attempt so far, forgotten (a test that provoked them on purpose).
    pub fn take_outside_attempts(&self) -> Vec<String> {
        self.outside
            .lock()
            .map(|mut attempts| std::mem::take(&mut *attempts))
            .unwrap_or_default()
    }

    fn record(&self, what: String) {
        if let Ok(mut attempts) = self.outside.lock() {
            attempts.push(what);
        }
    }
}

#[async_trait::async_trait]
impl SourceResolver for LoopbackOnlyResolver {
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        let host = host.trim_matches(['[', ']']);
        if host.eq_ignore_ascii_case("localhost") {
            return Ok(vec![
                SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
                SocketAddr::from((Ipv6Addr::LOCALHOST, port)),
            ]);
        }
        if let Ok(ip) = host.parse::<IpAddr>()
            && ip.is_loopback()
        {
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        self.record(format!("{host}:{port}"));
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{host} is outside this machine: this resolver answers loopback names only"),
        ))
    }

    fn admits_literal(&self, ip: IpAddr) -> bool {
        let loopback = ip.is_loopback() || ip.to_canonical().is_loopback();
        if !loopback {
            self.record(ip.to_string());
        }
        loopback
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn loopback_names_are_answered_and_others_refused_and_recorded() {
        let resolver = LoopbackOnlyResolver::new();
        let local = resolver.resolve("localhost", 443).await.expect("localhost");
        assert!(
            local
                .iter()
                .all(|a| a.ip().is_loopback() && a.port() == 443)
        );
        assert!(resolver.resolve("127.0.0.1", 80).await.is_ok());
        assert!(resolver.resolve("::1", 80).await.is_ok());
        assert!(resolver.outside_attempts().is_empty());

        assert!(resolver.resolve("www.komoot.com", 443).await.is_err());
        assert!(resolver.admits_literal("127.0.0.1".parse().expect("ip")));
        assert!(!resolver.admits_literal("1.1.1.1".parse().expect("ip")));
        assert_eq!(
            resolver.outside_attempts(),
            vec!["www.komoot.com:443".to_owned(), "1.1.1.1".to_owned()]
        );
    }
}

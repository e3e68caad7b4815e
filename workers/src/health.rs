//! The `health` subcommand of both binaries (`etappe health --live|--ready`, `etappe-worker
//! health --live|--ready`): one plain HTTP GET of the process's own `/livez` or `/readyz`
//! over a TCP socket, for container health checks that must not depend on a shell or curl
//! in the image. Exit 0 on a 200, 1 otherwise; two seconds at most.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The longest a probe waits: connecting, asking and reading the status line together.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Which probe is asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// `/livez`: the process runs and serves HTTP.
    Live,
    /// `/readyz`: the process can serve work.
    Ready,
}

impl Probe {
    /// The probe named by the `--live` / `--ready` flags (`--live` when neither is given).
    pub fn from_flags(live: bool, ready: bool) -> Result<Self, HealthError> {
        match (live, ready) {
            (true, true) => Err(HealthError::Usage("give --live or --ready, not both")),
            (_, true) => Ok(Self::Ready),
            _ => Ok(Self::Live),
        }
    }

    fn path(self) -> &'static str {
        match self {
            Self::Live => "/livez",
            Self::Ready => "/readyz",
        }
    }
}

/// Why a probe failed.
#[derive(Debug, thiserror::Error)]
pub enum HealthError {
    #[error("{0}")]
    Usage(&'static str),
    #[error("{0} is not a host:port that resolves")]
    Address(String),
    #[error("{path} on {addr} did not answer within 2 s")]
    Timeout {
        addr: SocketAddr,
        path: &'static str,
    },
    #[error("{path} on {addr}: {source}")]
    Io {
        addr: SocketAddr,
        path: &'static str,
        source: std::io::Error,
    },
    #[error("{path} on {addr} answered {status}")]
    Unhealthy {
        addr: SocketAddr,
        path: &'static str,
        status: String,
    },
}

/// The address to probe for a server listening on `listen`: a wildcard listen address
/// (`0.0.0.0`, `::`) is probed on loopback.
pub fn probe_address(listen: SocketAddr) -> SocketAddr {
    let ip = match listen.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        other => other,
    };
    SocketAddr::new(ip, listen.port())
}

/// The subcommand: probes `addr` (`host:port`) if given, else the server's own listen
/// address `listen`.
pub async fn run(
    addr: Option<&str>,
    listen: SocketAddr,
    live: bool,
    ready: bool,
) -> Result<(), HealthError> {
    let probe = Probe::from_flags(live, ready)?;
    let target = match addr {
        Some(addr) => tokio::time::timeout(PROBE_TIMEOUT, tokio::net::lookup_host(addr))
            .await
            .ok()
            .and_then(Result::ok)
            .and_then(|mut found| found.next())
            .ok_or_else(|| HealthError::Address(addr.to_owned()))?,
        None => probe_address(listen),
    };
    check(target, probe).await
}

/// GETs the probe's path on `addr`; `Ok` on a 200 status.
pub async fn check(addr: SocketAddr, probe: Probe) -> Result<(), HealthError> {
    let path = probe.path();
    tokio::time::timeout(PROBE_TIMEOUT, ask(addr, path))
        .await
        .map_err(|_| HealthError::Timeout { addr, path })?
}

async fn ask(addr: SocketAddr, path: &'static str) -> Result<(), HealthError> {
    let io = |source| HealthError::Io { addr, path, source };
    let mut stream = TcpStream::connect(addr).await.map_err(io)?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.map_err(io)?;
    // The status line is all that is judged; it fits in the first few bytes.
    let mut head = Vec::with_capacity(64);
    let mut buffer = [0u8; 256];
    while !head.contains(&b'\n') && head.len() < 1024 {
        let read = stream.read(&mut buffer).await.map_err(io)?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let line = String::from_utf8_lossy(&head);
    let line = line.lines().next().unwrap_or_default().trim().to_owned();
    let status = line.split_whitespace().nth(1).unwrap_or_default();
    if line.starts_with("HTTP/1.") && status == "200" {
        Ok(())
    } else {
        Err(HealthError::Unhealthy {
            addr,
            path,
            status: if line.is_empty() {
                "nothing".into()
            } else {
                format!("{line:?}")
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// A server answering every connection with `answer`.
    async fn server(answer: &'static str) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buffer = [0u8; 1024];
                let _ = stream.read(&mut buffer).await;
                let _ = stream.write_all(answer.as_bytes()).await;
            }
        });
        addr
    }

    #[tokio::test]
    async fn a_200_passes_and_anything_else_fails() {
        let ok = server("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").await;
        assert!(check(ok, Probe::Live).await.is_ok());
        let unready = server("HTTP/1.1 503 Service Unavailable\r\n\r\n").await;
        let error = check(unready, Probe::Ready).await.expect_err("503");
        assert!(error.to_string().contains("503"), "{error}");
    }

    #[tokio::test]
    async fn a_silent_server_fails_within_the_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let started = std::time::Instant::now();
        let error = check(addr, Probe::Live).await.expect_err("silent");
        assert!(matches!(error, HealthError::Timeout { .. }), "{error}");
        assert!(started.elapsed() < Duration::from_secs(3));
        drop(listener);
    }

    #[test]
    fn wildcard_listen_addresses_are_probed_on_loopback() {
        let probed = probe_address("0.0.0.0:8080".parse().expect("addr"));
        assert_eq!(probed, "127.0.0.1:8080".parse().expect("addr"));
        let probed = probe_address("[::]:9091".parse().expect("addr"));
        assert_eq!(probed, "[::1]:9091".parse().expect("addr"));
        assert!(Probe::from_flags(true, true).is_err());
        assert_eq!(Probe::from_flags(false, true).ok(), Some(Probe::Ready));
    }
}

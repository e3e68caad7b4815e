//! Fetching a route from the link a caller gave, safely: a user-supplied URL must not make
//! the server reach its own network (SSRF). https only; private, loopback, link-local and
//! other non-public addresses are refused, whether named directly, resolved from a host name
//! (checked in the resolver, so every connection is covered) or reached by a redirect —
//! except hosts the operator lists (`ETAPPE_ALLOWED_SOURCE_HOSTS`), which may also use http.
//! Bodies are capped (30 MB), time is bounded, and transient failures are tried twice more.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reqwest::redirect;
use url::Url;

/// The largest body accepted.
pub const MAX_SOURCE_BYTES: usize = 30 * 1024 * 1024;
/// Extra tries after a transient failure.
const RETRIES: u32 = 2;

/// Why a fetch failed. Everything but `Transient` is terminal: trying again would not help.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("the link is refused: {0}")]
    Refused(String),
    #[error("the source answered {0}")]
    Status(u16),
    #[error("the route file is larger than 30 MB")]
    TooLarge,
    #[error("the source could not be reached: {0}")]
    Transient(String),
}

/// Whether an address is on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1]))
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
                || o[0] >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

#[derive(Debug, Clone)]
struct Policy {
    allowed_hosts: Arc<Vec<String>>,
}

impl Policy {
    fn host_allowed(&self, host: &str) -> bool {
        self.allowed_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(host))
    }

    /// Checks a URL before it is requested or followed.
    fn check(&self, url: &Url) -> Result<(), FetchError> {
        let host = url
            .host_str()
            .unwrap_or_default()
            .trim_matches(['[', ']'])
            .to_owned();
        let allowed = self.host_allowed(&host);
        match url.scheme() {
            "https" => {}
            "http" if allowed => {}
            other => {
                return Err(FetchError::Refused(format!(
                    "{other} links are not fetched; use https"
                )));
            }
        }
        if let Ok(ip) = host.parse::<IpAddr>()
            && !allowed
            && !is_public(ip)
        {
            return Err(FetchError::Refused(
                "the link names a private address".into(),
            ));
        }
        Ok(())
    }
}

/// Resolves names and drops every non-public address unless the host is allowed.
#[derive(Debug, Clone)]
struct GuardedResolver {
    policy: Policy,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed = policy.host_allowed(&host);
            let usable: Vec<SocketAddr> = addrs
                .into_iter()
                .filter(|a| allowed || is_public(a.ip()))
                .collect();
            if usable.is_empty() {
                return Err(format!("{host} resolves to no public address").into());
            }
            let iter: reqwest::dns::Addrs = Box::new(usable.into_iter());
            Ok(iter)
        })
    }
}

/// The fetcher shared by the workers.
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    policy: Policy,
}

impl Fetcher {
    /// A fetcher allowing `allowed_hosts` over http and on private addresses.
    pub fn new(allowed_hosts: Vec<String>) -> Result<Self, FetchError> {
        crate::telemetry::install_tls_provider();
        let policy = Policy {
            allowed_hosts: Arc::new(allowed_hosts),
        };
        let redirect_policy = policy.clone();
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver {
                policy: policy.clone(),
            }))
            .redirect(redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() >= 3 {
                    return attempt.error("too many redirects");
                }
                match redirect_policy.check(attempt.url()) {
                    Ok(()) => attempt.follow(),
                    Err(refused) => attempt.error(refused.to_string()),
                }
            }))
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(30))
            .user_agent(concat!(
                "Etappe/",
                env!("CARGO_PKG_VERSION"),
                " (bicycle trip planner)"
            ))
            .build()
            .map_err(|e| FetchError::Transient(e.to_string()))?;
        Ok(Self { client, policy })
    }

    /// GETs `url`, with two more tries on a transient failure.
    pub async fn get(&self, url: &str) -> Result<Vec<u8>, FetchError> {
        let url = Url::parse(url).map_err(|_| FetchError::Refused("not a valid link".into()))?;
        self.policy.check(&url)?;
        let mut last = FetchError::Transient("not tried".into());
        for attempt in 0..=RETRIES {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(300 * u64::from(attempt))).await;
            }
            match self.get_once(url.clone()).await {
                Err(e @ FetchError::Transient(_)) => last = e,
                other => return other,
            }
        }
        Err(last)
    }

    async fn get_once(&self, url: Url) -> Result<Vec<u8>, FetchError> {
        let response = self
            .client
            .get(url)
            .send()
            .await
            .map_err(|e| classify(&e))?;
        let status = response.status();
        if status.is_server_error() || status.as_u16() == 429 {
            return Err(FetchError::Transient(format!(
                "the source answered {status}"
            )));
        }
        if !status.is_success() {
            return Err(FetchError::Status(status.as_u16()));
        }
        if response
            .content_length()
            .is_some_and(|n| n as usize > MAX_SOURCE_BYTES)
        {
            return Err(FetchError::TooLarge);
        }
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| classify(&e))?;
            if body.len() + chunk.len() > MAX_SOURCE_BYTES {
                return Err(FetchError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

fn classify(error: &reqwest::Error) -> FetchError {
    // A refused redirect or address is a policy decision, not a network accident.
    let text = format!("{error:?}");
    if error.is_redirect() || text.contains("no public address") || text.contains("private address")
    {
        return FetchError::Refused(
            "the link leads to a private address or redirects too often".into(),
        );
    }
    FetchError::Transient(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_special_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(!is_public(ip.parse().expect("ip")), "{ip}");
        }
        for ip in ["1.1.1.1", "93.184.216.34", "2606:4700::1111"] {
            assert!(is_public(ip.parse().expect("ip")), "{ip}");
        }
    }

    #[test]
    fn only_https_unless_the_host_is_allowed() {
        let policy = Policy {
            allowed_hosts: Arc::new(vec!["127.0.0.1".into()]),
        };
        let check = |u: &str| policy.check(&Url::parse(u).expect("url"));
        assert!(check("https://example.org/a.gpx").is_ok());
        assert!(check("http://example.org/a.gpx").is_err());
        assert!(check("ftp://example.org/a.gpx").is_err());
        assert!(check("https://10.0.0.1/a.gpx").is_err());
        assert!(check("https://[::1]/a.gpx").is_err());
        assert!(check("http://127.0.0.1:8080/a.gpx").is_ok());
    }
}

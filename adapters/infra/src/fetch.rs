//! Fetching a route from the link a caller gave, safely: a user-supplied URL must not make
//! the server reach its own network (SSRF). https only; private, loopback, link-local and
//! other non-public addresses ([`ranges`]) are refused, whether named directly, resolved from
//! a host name (checked in the resolver, so every connection is covered) or reached by a
//! redirect — except hosts the operator lists (`ETAPPE_ALLOWED_SOURCE_HOSTS`), which may also
//! use http. Bodies are capped (30 MB), time is bounded, and transient failures are tried
//! twice more.
//!
//! The environment's proxy variables (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`) are never
//! read: a proxy receives host names unresolved, which would skip every address check. Only
//! a proxy the operator names (`ETAPPE_FETCH_PROXY`) is used, and then the fetcher resolves
//! and checks the address first and tunnels to that address ([`tunnel`]).
//!
//! Who resolves names is pluggable ([`resolve::SourceResolver`]): the tests install one that
//! answers loopback names only. The tests may also add a root of trust (their throwaway CA, for
//! an https server on loopback) beside the platform's; both are code-level [`FetchHooks`] that
//! no setting reaches, and neither turns a check off.

pub mod origins;
pub mod ranges;
pub mod resolve;
mod tunnel;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reqwest::redirect;
use url::Url;

pub use origins::SourceOrigins;

pub use ranges::is_public;
pub use resolve::{LoopbackOnlyResolver, SourceResolver, SystemResolver};

/// The largest body accepted.
pub const MAX_SOURCE_BYTES: usize = 30 * 1024 * 1024;
/// Extra tries after a transient failure.
const RETRIES: u32 = 2;
/// Redirects followed before giving up.
const MAX_REDIRECTS: usize = 3;
/// The whole of one request, connection to last byte.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const USER_AGENT: &str = concat!(
    "Etappe/",
    env!("CARGO_PKG_VERSION"),
    " (bicycle trip planner)"
);

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
    #[error("the fetch proxy setting is unusable: {0}")]
    InvalidProxy(String),
}

/// What tests plug into the fetcher; production leaves them at their defaults (the system's
/// resolver, the services' real origins, the system's roots of trust only).
///
/// These are code-level hooks only: no environment variable, flag or setting an operator can
/// reach fills them, so nothing configurable weakens production fetching.
#[derive(Clone, Debug, Default)]
pub struct FetchHooks {
    /// Who resolves host names; `None`: the system.
    pub resolver: Option<Arc<dyn SourceResolver>>,
    /// Where the Komoot, Strava and RideWithGPS pages are fetched from.
    pub source_origins: SourceOrigins,
    /// Certificates (DER) trusted as roots beside the system's: the tests' throwaway CA, so
    /// an https server on loopback (a client metadata document) can be fetched with the
    /// certificate checks left on. Adds trust for that CA only; never disables a check.
    pub extra_root_certificates: Vec<Vec<u8>>,
}

#[derive(Debug, Clone)]
struct Policy {
    allowed_hosts: Arc<Vec<String>>,
    resolver: Arc<dyn SourceResolver>,
}

impl Policy {
    fn host_allowed(&self, host: &str) -> bool {
        self.allowed_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(host))
    }

    /// Checks a URL before it is requested or followed.
    fn check(&self, url: &Url) -> Result<(), FetchError> {
        let host = bare_host(url);
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
        if let Ok(ip) = host.parse::<IpAddr>() {
            if !allowed && !is_public(ip) {
                return Err(FetchError::Refused(
                    "the link names a private address".into(),
                ));
            }
            if !self.resolver.admits_literal(ip) {
                return Err(FetchError::Refused(format!(
                    "the link names {ip}, which this fetcher may not reach"
                )));
            }
        }
        Ok(())
    }

    /// The addresses `host` may be reached at: every resolved address is checked, and the
    /// non-public ones dropped (unless the host is allowed).
    async fn addresses(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
        let addrs = match host.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => self
                .resolver
                .resolve(host, port)
                .await
                .map_err(|e| format!("name resolution failed for {host}: {e}"))?,
        };
        let allowed = self.host_allowed(host);
        let usable: Vec<SocketAddr> = addrs
            .into_iter()
            .filter(|a| allowed || is_public(a.ip()))
            .collect();
        if usable.is_empty() {
            return Err(format!("{host} resolves to no public address"));
        }
        Ok(usable)
    }
}

/// The host of `url` without IPv6 brackets.
fn bare_host(url: &Url) -> String {
    url.host_str()
        .unwrap_or_default()
        .trim_matches(['[', ']'])
        .to_owned()
}

/// reqwest's resolver: the policy's checked addresses.
#[derive(Debug, Clone)]
struct GuardedResolver {
    policy: Policy,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        Box::pin(async move {
            let usable = policy.addresses(name.as_str(), 0).await?;
            let iter: reqwest::dns::Addrs = Box::new(usable.into_iter());
            Ok(iter)
        })
    }
}

/// How requests leave the machine.
#[derive(Debug, Clone)]
enum Route {
    /// Straight to the checked address (reqwest, with the guarded resolver).
    Direct(reqwest::Client),
    /// Through the operator's proxy, tunnelled to the checked address.
    Proxy(Arc<tunnel::Tunnel>),
}

/// The fetcher shared by the workers.
#[derive(Debug, Clone)]
pub struct Fetcher {
    route: Route,
    policy: Policy,
    limits: Limits,
}

/// Builds a [`Fetcher`]: the allowed hosts, and optionally the operator's proxy and the
/// resolver.
#[derive(Debug, Clone)]
pub struct FetcherBuilder {
    allowed_hosts: Vec<String>,
    proxy: Option<String>,
    resolver: Arc<dyn SourceResolver>,
    limits: Limits,
    extra_roots: Vec<Vec<u8>>,
}

/// How far one fetch may go: redirects followed, bytes read, time taken, tries after a
/// transient failure. Route files get [`Limits::default`]; small documents (an OAuth
/// client's metadata) get far tighter ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_redirects: usize,
    pub max_bytes: usize,
    pub timeout: Duration,
    pub retries: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_redirects: MAX_REDIRECTS,
            max_bytes: MAX_SOURCE_BYTES,
            timeout: REQUEST_TIMEOUT,
            retries: RETRIES,
        }
    }
}

/// A small document, fetched with [`Fetcher::get_document`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub body: Vec<u8>,
    /// The `Cache-Control` header, if any.
    pub cache_control: Option<String>,
}

impl FetcherBuilder {
    /// The proxy the operator named (`http://host:port`, optionally with credentials). The
    /// environment's proxy variables are not consulted, here or anywhere.
    pub fn proxy(mut self, proxy: Option<String>) -> Self {
        self.proxy = proxy.filter(|p| !p.trim().is_empty());
        self
    }

    /// Who resolves host names (default: the system).
    pub fn resolver(mut self, resolver: Arc<dyn SourceResolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// How far each fetch may go (default: a route file's limits).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Roots of trust (DER certificates) added to the system's; only
    /// [`FetchHooks::extra_root_certificates`] passes any (tests), so production trusts the
    /// system's roots alone.
    pub fn extra_roots(mut self, roots: Vec<Vec<u8>>) -> Self {
        self.extra_roots = roots;
        self
    }

    /// The fetcher.
    pub fn build(self) -> Result<Fetcher, FetchError> {
        crate::telemetry::install_tls_provider();
        let policy = Policy {
            allowed_hosts: Arc::new(self.allowed_hosts),
            resolver: self.resolver,
        };
        let route = match self.proxy {
            Some(proxy) => Route::Proxy(Arc::new(tunnel::Tunnel::new(&proxy, &self.extra_roots)?)),
            None => Route::Direct(direct_client(&policy, &self.limits, &self.extra_roots)?),
        };
        Ok(Fetcher {
            route,
            policy,
            limits: self.limits,
        })
    }
}

fn direct_client(
    policy: &Policy,
    limits: &Limits,
    extra_roots: &[Vec<u8>],
) -> Result<reqwest::Client, FetchError> {
    let redirect_policy = policy.clone();
    let max_redirects = limits.max_redirects;
    let mut roots = Vec::with_capacity(extra_roots.len());
    for der in extra_roots {
        roots.push(reqwest::Certificate::from_der(der).map_err(|e| {
            FetchError::Transient(format!("an extra root certificate is unusable: {e}"))
        })?);
    }
    let builder = if roots.is_empty() {
        reqwest::Client::builder()
    } else {
        // Merged with the platform's roots: the added CA is trusted besides, never instead.
        reqwest::Client::builder().tls_certs_merge(roots)
    };
    builder
        // Proxy variables would send host names out unresolved and unchecked.
        .no_proxy()
        .dns_resolver(Arc::new(GuardedResolver {
            policy: policy.clone(),
        }))
        .redirect(if max_redirects == 0 {
            // A redirect is answered as it is (a status), not followed.
            redirect::Policy::none()
        } else {
            redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() >= max_redirects {
                    return attempt.error("too many redirects");
                }
                match redirect_policy.check(attempt.url()) {
                    Ok(()) => attempt.follow(),
                    Err(refused) => attempt.error(refused.to_string()),
                }
            })
        })
        .connect_timeout(CONNECT_TIMEOUT.min(limits.timeout))
        .timeout(limits.timeout)
        .user_agent(USER_AGENT)
        .build()
        .map_err(|e| FetchError::Transient(e.to_string()))
}

impl Fetcher {
    /// A fetcher allowing `allowed_hosts` over http and on private addresses, straight to
    /// the network, resolving names with the system.
    pub fn new(allowed_hosts: Vec<String>) -> Result<Self, FetchError> {
        Self::builder(allowed_hosts).build()
    }

    /// A builder allowing `allowed_hosts` over http and on private addresses.
    pub fn builder(allowed_hosts: Vec<String>) -> FetcherBuilder {
        FetcherBuilder {
            allowed_hosts,
            proxy: None,
            resolver: Arc::new(SystemResolver),
            limits: Limits::default(),
            extra_roots: Vec::new(),
        }
    }

    /// The address a request to `url` goes to through the proxy: the first the policy
    /// admits for its host (resolved here, so the proxy cannot be sent elsewhere).
    async fn address_of(&self, url: &Url) -> Result<std::net::SocketAddr, FetchError> {
        let host = bare_host(url);
        let port = url.port_or_known_default().unwrap_or(443);
        let addrs = self
            .policy
            .addresses(&host, port)
            .await
            .map_err(|why| refusal_or_transient(&why))?;
        addrs
            .first()
            .copied()
            .ok_or_else(|| FetchError::Refused(format!("{host} has no usable address")))
    }

    /// GETs a small document once, within the limits: only a 200 counts (a redirect is
    /// answered, not followed, when `max_redirects` is 0), the body is cut off while it
    /// streams past `max_bytes`, and the `Cache-Control` header comes back with it.
    pub async fn get_document(&self, url: &str) -> Result<Document, FetchError> {
        let url = Url::parse(url).map_err(|_| FetchError::Refused("not a valid link".into()))?;
        self.policy.check(&url)?;
        let max = self.limits.max_bytes;
        let fetch = async {
            match &self.route {
                Route::Direct(client) => {
                    let response = client.get(url).send().await.map_err(|e| classify(&e))?;
                    let status = response.status().as_u16();
                    if status != 200 {
                        return Err(FetchError::Status(status));
                    }
                    if response.content_length().is_some_and(|n| n > max as u64) {
                        return Err(FetchError::TooLarge);
                    }
                    let cache_control = response
                        .headers()
                        .get(reqwest::header::CACHE_CONTROL)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    let body = read_capped(response, max).await?;
                    Ok(Document {
                        body,
                        cache_control,
                    })
                }
                Route::Proxy(tunnel) => {
                    let target = self.address_of(&url).await?;
                    let response = tunnel.send(target, &url, USER_AGENT).await?;
                    let status = response.status().as_u16();
                    if status != 200 {
                        return Err(FetchError::Status(status));
                    }
                    let cache_control = response
                        .headers()
                        .get(hyper::header::CACHE_CONTROL)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    let body = tunnel::read_capped(response.into_body(), max).await?;
                    Ok(Document {
                        body,
                        cache_control,
                    })
                }
            }
        };
        tokio::time::timeout(self.limits.timeout, fetch)
            .await
            .unwrap_or_else(|_| Err(FetchError::Transient("timed out".into())))
    }

    /// GETs `url`, with two more tries on a transient failure.
    pub async fn get(&self, url: &str) -> Result<Vec<u8>, FetchError> {
        let url = Url::parse(url).map_err(|_| FetchError::Refused("not a valid link".into()))?;
        self.policy.check(&url)?;
        let mut last = FetchError::Transient("not tried".into());
        for attempt in 0..=self.limits.retries {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(300 * u64::from(attempt))).await;
            }
            let once = match &self.route {
                Route::Direct(client) => get_direct(client, url.clone()).await,
                Route::Proxy(tunnel) => {
                    tokio::time::timeout(REQUEST_TIMEOUT, self.get_via_proxy(tunnel, url.clone()))
                        .await
                        .unwrap_or_else(|_| Err(FetchError::Transient("timed out".into())))
                }
            };
            match once {
                Err(e @ FetchError::Transient(_)) => last = e,
                other => return other,
            }
        }
        Err(last)
    }

    async fn get_via_proxy(
        &self,
        tunnel: &tunnel::Tunnel,
        url: Url,
    ) -> Result<Vec<u8>, FetchError> {
        let mut url = url;
        for _ in 0..=MAX_REDIRECTS {
            self.policy.check(&url)?;
            let target = self.address_of(&url).await?;
            let response = tunnel.send(target, &url, USER_AGENT).await?;
            let status = response.status();
            if status.is_redirection() {
                let next = response
                    .headers()
                    .get(hyper::header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|location| url.join(location).ok())
                    .ok_or_else(|| FetchError::Status(status.as_u16()))?;
                url = next;
                continue;
            }
            judge(status.as_u16(), http_body_length(response.headers()))?;
            return tunnel::read_capped(response.into_body(), MAX_SOURCE_BYTES).await;
        }
        Err(FetchError::Refused(
            "the link leads to a private address or redirects too often".into(),
        ))
    }
}

async fn get_direct(client: &reqwest::Client, url: Url) -> Result<Vec<u8>, FetchError> {
    let response = client.get(url).send().await.map_err(|e| classify(&e))?;
    judge(response.status().as_u16(), response.content_length())?;
    read_capped(response, MAX_SOURCE_BYTES).await
}

/// A response's body as it streams, refused as soon as it passes `max` bytes (an announced
/// length is not trusted).
async fn read_capped(response: reqwest::Response, max: usize) -> Result<Vec<u8>, FetchError> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| classify(&e))?;
        if body.len() + chunk.len() > max {
            return Err(FetchError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// What a status and announced length say before the body is read.
fn judge(status: u16, content_length: Option<u64>) -> Result<(), FetchError> {
    if status >= 500 || status == 429 {
        return Err(FetchError::Transient(format!(
            "the source answered {status}"
        )));
    }
    if !(200..300).contains(&status) {
        return Err(FetchError::Status(status));
    }
    if content_length.is_some_and(|n| n > MAX_SOURCE_BYTES as u64) {
        return Err(FetchError::TooLarge);
    }
    Ok(())
}

fn http_body_length(headers: &hyper::HeaderMap) -> Option<u64> {
    headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

fn refusal_or_transient(why: &str) -> FetchError {
    if why.contains("no public address") {
        FetchError::Refused("the link leads to a private address".into())
    } else {
        FetchError::Transient(why.to_owned())
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
mod tests;

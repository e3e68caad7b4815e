//! Fetching through the proxy the operator named (`ETAPPE_FETCH_PROXY`) without handing it a
//! host name: the fetcher has already resolved and checked the address, asks the proxy for a
//! tunnel to that address (`CONNECT 93.184.216.34:443`), and speaks TLS inside the tunnel
//! with the link's host name as server name (SNI and certificate check). A proxy given the
//! name would resolve it itself, past every address check.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::{BodyExt, Empty};
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use url::Url;

use super::{CONNECT_TIMEOUT, FetchError};

/// The longest proxy answer head read before the tunnel opens.
const MAX_CONNECT_HEAD: usize = 8 * 1024;

/// The operator's proxy and the TLS settings used inside its tunnels.
pub(super) struct Tunnel {
    host: String,
    port: u16,
    /// `Basic …`, from the proxy URL's user and password.
    authorization: Option<String>,
    tls: tokio_rustls::TlsConnector,
}

impl fmt::Debug for Tunnel {
    // The credentials stay out of logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tunnel")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("authorization", &self.authorization.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

impl Tunnel {
    /// A tunnel through `proxy` (`http://[user:password@]host:port`).
    /// `extra_roots` (DER) are trusted beside the platform's roots (tests only).
    pub(super) fn new(proxy: &str, extra_roots: &[Vec<u8>]) -> Result<Self, FetchError> {
        let url = Url::parse(proxy.trim())
            .map_err(|_| FetchError::InvalidProxy("not a URL (http://host:port)".into()))?;
        if url.scheme() != "http" {
            return Err(FetchError::InvalidProxy(format!(
                "{} proxies are not supported; name an http:// proxy that accepts CONNECT",
                url.scheme()
            )));
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| FetchError::InvalidProxy("the proxy URL names no host".into()))?
            .trim_matches(['[', ']'])
            .to_owned();
        let port = url.port_or_known_default().unwrap_or(80);
        let authorization = (!url.username().is_empty()).then(|| {
            let user = percent_decode(url.username());
            let password = percent_decode(url.password().unwrap_or_default());
            format!("Basic {}", base64(format!("{user}:{password}").as_bytes()))
        });
        let tls = if extra_roots.is_empty() {
            <rustls::ClientConfig as rustls_platform_verifier::ConfigVerifierExt>::with_platform_verifier()
                .map_err(|e| FetchError::InvalidProxy(format!("TLS setup: {e}")))?
        } else {
            let provider = rustls::crypto::CryptoProvider::get_default()
                .cloned()
                .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
            let verifier = rustls_platform_verifier::Verifier::new_with_extra_roots(
                extra_roots
                    .iter()
                    .map(|der| rustls::pki_types::CertificateDer::from(der.clone())),
                Arc::clone(&provider),
            )
            .map_err(|e| FetchError::InvalidProxy(format!("TLS setup: {e}")))?;
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| FetchError::InvalidProxy(format!("TLS setup: {e}")))?
                // `dangerous` names the API for a custom verifier; this one is the
                // platform's own, with every check on, trusting the added roots besides.
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
                .with_no_client_auth()
        };
        Ok(Self {
            host,
            port,
            authorization,
            tls: tokio_rustls::TlsConnector::from(Arc::new(tls)),
        })
    }

    /// GETs `url` from `target` (its checked address) through a fresh tunnel.
    pub(super) async fn send(
        &self,
        target: SocketAddr,
        url: &Url,
        user_agent: &str,
    ) -> Result<hyper::Response<Incoming>, FetchError> {
        let connect = TcpStream::connect((self.host.as_str(), self.port));
        let mut stream = tokio::time::timeout(CONNECT_TIMEOUT, connect)
            .await
            .map_err(|_| transient("the fetch proxy did not answer in time"))?
            .map_err(|e| transient(&format!("the fetch proxy could not be reached: {e}")))?;
        let authority = target.to_string();
        let mut head = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
        if let Some(authorization) = &self.authorization {
            head.push_str(&format!("Proxy-Authorization: {authorization}\r\n"));
        }
        head.push_str("\r\n");
        stream
            .write_all(head.as_bytes())
            .await
            .map_err(|e| transient(&format!("the fetch proxy: {e}")))?;
        let status = read_connect_status(&mut stream).await?;
        if status != 200 {
            return Err(transient(&format!(
                "the fetch proxy answered {status} to the tunnel for {authority}"
            )));
        }
        let host = url
            .host_str()
            .unwrap_or_default()
            .trim_matches(['[', ']'])
            .to_owned();
        if url.scheme() == "https" {
            let name = ServerName::try_from(host)
                .map_err(|_| FetchError::Refused("the link's host is not a valid name".into()))?;
            let tls = self
                .tls
                .connect(name, stream)
                .await
                .map_err(|e| transient(&format!("TLS: {e}")))?;
            request(tls, url, user_agent).await
        } else {
            request(stream, url, user_agent).await
        }
    }
}

/// Reads the proxy's answer to CONNECT up to its blank line (byte by byte, so not one byte
/// of the tunnel is consumed), and answers its status code.
async fn read_connect_status(stream: &mut TcpStream) -> Result<u16, FetchError> {
    let mut head = Vec::with_capacity(128);
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_CONNECT_HEAD {
            return Err(transient("the fetch proxy's answer is too long"));
        }
        let read = stream
            .read(&mut byte)
            .await
            .map_err(|e| transient(&format!("the fetch proxy: {e}")))?;
        if read == 0 {
            return Err(transient("the fetch proxy closed the connection"));
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head);
    text.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .filter(|_| text.starts_with("HTTP/1."))
        .ok_or_else(|| transient("the fetch proxy answered something other than HTTP"))
}

async fn request<S>(
    stream: S,
    url: &Url,
    user_agent: &str,
) -> Result<hyper::Response<Incoming>, FetchError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| transient(&format!("HTTP: {e}")))?;
    // Drives the connection until the body is read or dropped.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let host = url.host_str().unwrap_or_default();
    let host_header = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    let path = &url[url::Position::BeforePath..url::Position::AfterQuery];
    let request = hyper::Request::get(path)
        .header(hyper::header::HOST, host_header)
        .header(hyper::header::USER_AGENT, user_agent)
        .body(Empty::<Bytes>::new())
        .map_err(|_| FetchError::Refused("not a valid link".into()))?;
    sender
        .send_request(request)
        .await
        .map_err(|e| transient(&format!("HTTP: {e}")))
}

/// The body, refused beyond `cap` bytes.
pub(super) async fn read_capped(mut body: Incoming, cap: usize) -> Result<Vec<u8>, FetchError> {
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| transient(&format!("reading the body: {e}")))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > cap {
                return Err(FetchError::TooLarge);
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes)
}

fn transient(why: &str) -> FetchError {
    FetchError::Transient(why.to_owned())
}

fn percent_decode(text: &str) -> String {
    // `+` is literal in a URL's user part, not a space as in a form.
    let text = text.replace('+', "%2B");
    url::form_urlencoded::parse(format!("x={text}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// Standard base64 with padding (the Basic scheme's encoding).
fn base64(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_base64() {
        assert_eq!(
            base64(b"Aladdin:open sesame"),
            "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b""), "");
    }

    #[test]
    fn only_http_proxies_with_a_host_are_accepted() {
        assert!(Tunnel::new("socks5://127.0.0.1:1080", &[]).is_err());
        assert!(Tunnel::new("not a url", &[]).is_err());
        let tunnel = Tunnel::new("http://user:p%40ss@127.0.0.1:3128", &[]).expect("proxy");
        assert_eq!(tunnel.port, 3128);
        assert_eq!(
            tunnel.authorization.as_deref(),
            Some(format!("Basic {}", base64(b"user:p@ss")).as_str())
        );
        assert!(!format!("{tunnel:?}").contains("Basic"));
    }
}

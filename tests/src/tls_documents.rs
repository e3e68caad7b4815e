//! A test-only HTTPS server on 127.0.0.1 that serves fixed documents (a client ID metadata
//! document, `https://127.0.0.1:<port>/client.json`), with a throwaway certificate authority
//! made at test time by the `openssl` CLI: a CA valid two days and a leaf for `127.0.0.1` and
//! `localhost` signed by it. The application under test trusts that CA only through
//! `config.work.fetch_hooks.extra_root_certificates`, a code-level hook no setting reaches,
//! so its fetcher keeps every certificate check on and production trusts the system's roots
//! alone.
//!
//! The server speaks just enough HTTP/1.1 for one GET per connection (the fetcher's), counts
//! the requests per path, and answers 404 for a path it was not given.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// Where the `openssl` CLI is looked for first (then `PATH`).
const OPENSSL: &str = "/usr/bin/openssl";

/// A throwaway CA and a leaf certificate for 127.0.0.1 / localhost, in DER.
#[derive(Clone)]
pub struct TestCertificates {
    /// The CA certificate: what the application under test is told to trust.
    pub ca_der: Vec<u8>,
    pub leaf_der: Vec<u8>,
    leaf_key_pkcs8: Vec<u8>,
}

impl std::fmt::Debug for TestCertificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCertificates").finish_non_exhaustive()
    }
}

fn openssl() -> String {
    if Path::new(OPENSSL).exists() {
        OPENSSL.to_owned()
    } else {
        "openssl".to_owned()
    }
}

fn run_openssl(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new(openssl())
        .current_dir(dir)
        .args(args)
        .output()
        .map_err(|e| format!("the openssl CLI could not be run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "openssl {} failed ({}): {}",
            args.first().copied().unwrap_or_default(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

impl TestCertificates {
    /// Makes a fresh CA and leaf with the `openssl` CLI (P-256 keys, two days).
    pub fn generate() -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let d = dir.path();
        std::fs::write(
            d.join("leaf.ext"),
            "basicConstraints=critical,CA:FALSE\n\
             keyUsage=critical,digitalSignature\n\
             extendedKeyUsage=serverAuth\n\
             subjectAltName=IP:127.0.0.1,DNS:localhost\n",
        )
        .map_err(|e| e.to_string())?;
        let steps: [&[&str]; 6] = [
            &[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=Etappe tests throwaway CA",
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
            &[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                "leaf.key",
                "-out",
                "leaf.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
            &[
                "x509",
                "-req",
                "-in",
                "leaf.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-set_serial",
                "2",
                "-days",
                "2",
                "-extfile",
                "leaf.ext",
                "-out",
                "leaf.pem",
            ],
            &["x509", "-in", "ca.pem", "-outform", "DER", "-out", "ca.der"],
            &[
                "x509", "-in", "leaf.pem", "-outform", "DER", "-out", "leaf.der",
            ],
            &[
                "pkcs8", "-topk8", "-nocrypt", "-in", "leaf.key", "-outform", "DER", "-out",
                "leaf.p8",
            ],
        ];
        for step in steps {
            run_openssl(d, step)?;
        }
        let read = |name: &str| std::fs::read(d.join(name)).map_err(|e| format!("{name}: {e}"));
        Ok(Self {
            ca_der: read("ca.der")?,
            leaf_der: read("leaf.der")?,
            leaf_key_pkcs8: read("leaf.p8")?,
        })
    }
}

/// A running HTTPS document server; stopped when dropped.
#[derive(Debug)]
pub struct TlsDocumentServer {
    pub addr: SocketAddr,
    /// `https://127.0.0.1:<port>`.
    pub origin: String,
    hits: Arc<Mutex<HashMap<String, usize>>>,
    task: JoinHandle<()>,
}

impl Drop for TlsDocumentServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TlsDocumentServer {
    /// Starts serving `documents` (path → (content type, body)) on 127.0.0.1 with `certs`.
    /// The bodies may mention `{origin}`, replaced by the server's own origin (a metadata
    /// document names its own URL).
    pub async fn start(
        certs: &TestCertificates,
        documents: Vec<(&str, &str, String)>,
    ) -> Result<Self, String> {
        etappe_services::telemetry::install_tls_provider();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certs.leaf_key_pkcs8.clone()));
        let chain = vec![CertificateDer::from(certs.leaf_der.clone())];
        let config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| format!("the test server's TLS setup: {e}"))?;
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let origin = format!("https://127.0.0.1:{}", addr.port());
        let documents: Arc<HashMap<String, (String, String)>> = Arc::new(
            documents
                .into_iter()
                .map(|(path, kind, body)| {
                    (
                        path.to_owned(),
                        (kind.to_owned(), body.replace("{origin}", &origin)),
                    )
                })
                .collect(),
        );
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let counted = Arc::clone(&hits);
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                let documents = Arc::clone(&documents);
                let hits = Arc::clone(&counted);
                tokio::spawn(async move {
                    let Ok(Ok(mut tls)) =
                        tokio::time::timeout(Duration::from_secs(5), acceptor.accept(tcp)).await
                    else {
                        return;
                    };
                    let Some(path) = read_request_path(&mut tls).await else {
                        return;
                    };
                    if let Ok(mut hits) = hits.lock() {
                        *hits.entry(path.clone()).or_default() += 1;
                    }
                    let response = match documents.get(&path) {
                        Some((kind, body)) => format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\
                             cache-control: max-age=600\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        ),
                        None => "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\
                                 connection: close\r\n\r\n"
                            .to_owned(),
                    };
                    let _ = tls.write_all(response.as_bytes()).await;
                    let _ = tls.shutdown().await;
                });
            }
        });
        Ok(Self {
            addr,
            origin,
            hits,
            task,
        })
    }

    /// How many requests asked for `path`.
    pub fn hits(&self, path: &str) -> usize {
        self.hits
            .lock()
            .map(|h| h.get(path).copied().unwrap_or_default())
            .unwrap_or_default()
    }
}

/// The path of a GET request's head (at most 16 KB, 5 s).
async fn read_request_path<S: AsyncReadExt + Unpin>(stream: &mut S) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    let read = async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 {
                return None;
            }
            head.extend_from_slice(&buf[..n]);
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .ok()??;
    let text = String::from_utf8_lossy(&head);
    let mut line = text.lines().next()?.split_whitespace();
    (line.next()? == "GET").then_some(())?;
    Some(line.next()?.to_owned())
}

/// Where the OAuth journeys serve their client's metadata document.
pub const CLIENT_DOCUMENT_PATH: &str = "/client.json";

/// A client metadata document naming `name`, redirecting to `redirect_uri`; `{origin}` is
/// the server's own origin, so the document names its own URL.
pub fn client_document(name: &str, redirect_uri: &str) -> String {
    serde_json::json!({
        "client_id": format!("{{origin}}{CLIENT_DOCUMENT_PATH}"),
        "client_name": name,
        "client_uri": "{origin}/",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    })
    .to_string()
}

/// What an OAuth journey through an SDK runs against: the app, whose fetcher trusts a
/// throwaway CA (through the test hook only) and whose access tokens live `access_ttl_secs`,
/// and the https server of the client's metadata document at `cimd_url`.
#[derive(Debug)]
pub struct OAuthJourneySetup {
    pub app: crate::TestApp,
    pub documents: TlsDocumentServer,
    pub cimd_url: String,
}

impl OAuthJourneySetup {
    /// Starts both on `backend` (`None` when the backend is not configured: the test skips).
    pub async fn start(
        backend: crate::Backend,
        access_ttl_secs: u64,
        client_name: &str,
        redirect_uri: &str,
    ) -> Option<Self> {
        let certs = tokio::task::spawn_blocking(TestCertificates::generate)
            .await
            .expect("the certificate maker")
            .expect("a throwaway CA and leaf from the openssl CLI");
        let ca = certs.ca_der.clone();
        let app = crate::TestApp::spawn_with(backend, |c| {
            c.oauth.access_ttl_secs = access_ttl_secs;
            c.work.fetch_hooks.extra_root_certificates = vec![ca];
        })
        .await?;
        let documents = TlsDocumentServer::start(
            &certs,
            vec![(
                CLIENT_DOCUMENT_PATH,
                "application/json",
                client_document(client_name, redirect_uri),
            )],
        )
        .await
        .expect("the https document server");
        let cimd_url = format!("{}{CLIENT_DOCUMENT_PATH}", documents.origin);
        Some(Self {
            app,
            documents,
            cimd_url,
        })
    }
}

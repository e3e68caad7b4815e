//! The fetcher's policy, its resolver hook and its proxy handling, against local servers.

use std::sync::Mutex;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::*;

fn policy(allowed: &[&str]) -> Policy {
    Policy {
        allowed_hosts: Arc::new(allowed.iter().map(|h| (*h).to_owned()).collect()),
        resolver: Arc::new(SystemResolver),
    }
}

#[test]
fn only_https_unless_the_host_is_allowed() {
    let policy = policy(&["127.0.0.1"]);
    let check = |u: &str| policy.check(&Url::parse(u).expect("url"));
    assert!(check("https://route.test/a.gpx").is_ok());
    assert!(check("http://route.test/a.gpx").is_err());
    assert!(check("ftp://route.test/a.gpx").is_err());
    assert!(check("https://10.0.0.1/a.gpx").is_err());
    assert!(check("https://[::1]/a.gpx").is_err());
    assert!(check("https://[64:ff9b::7f00:1]/a.gpx").is_err());
    assert!(check("https://198.18.0.1/a.gpx").is_err());
    assert!(check("http://127.0.0.1:8080/a.gpx").is_ok());
}

#[tokio::test]
async fn the_plugged_resolver_decides_and_sees_every_outside_name() {
    let resolver = LoopbackOnlyResolver::new();
    let fetcher = Fetcher::builder(Vec::new())
        .resolver(Arc::new(resolver.clone()))
        .build()
        .expect("fetcher");
    let answer = fetcher.get("https://www.komoot.com/tour/1").await;
    assert!(answer.is_err(), "{answer:?}");
    let literal = fetcher.get("https://1.1.1.1/route.gpx").await;
    assert!(
        matches!(literal, Err(FetchError::Refused(_))),
        "{literal:?}"
    );
    let attempts = resolver.outside_attempts();
    assert!(attempts.contains(&"1.1.1.1".to_owned()), "{attempts:?}");
    assert!(
        attempts.iter().any(|a| a.starts_with("www.komoot.com")),
        "{attempts:?}"
    );
}

/// A fake proxy: records each CONNECT line; answers 200 and then, inside the tunnel, one
/// plain HTTP answer `hello` (enough for an http link), or closes (an https link).
async fn fake_proxy() -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let record = Arc::clone(&record);
            tokio::spawn(async move {
                let head = read_head(&mut stream).await;
                let first = head.lines().next().unwrap_or_default().to_owned();
                record.lock().expect("lock").push(first.clone());
                if !first.starts_with("CONNECT ") {
                    return;
                }
                let _ = stream
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await;
                // A TLS ClientHello (0x16) gets no answer but a close: fails at once.
                let mut first = [0u8; 1];
                if stream.peek(&mut first).await.is_err() || first[0] == 0x16 {
                    return;
                }
                let inner = read_head(&mut stream).await;
                if let Some(host) = inner
                    .lines()
                    .find(|l| l.to_lowercase().starts_with("host:"))
                {
                    record.lock().expect("lock").push(host.to_owned());
                }
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
                    )
                    .await;
            });
        }
    });
    (addr, seen)
}

async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 8192 {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

#[tokio::test]
async fn a_named_proxy_is_asked_for_the_checked_address_never_the_name() {
    let (proxy, seen) = fake_proxy().await;
    let fetcher = Fetcher::builder(vec!["localhost".into()])
        .proxy(Some(format!("http://{proxy}")))
        .resolver(Arc::new(LoopbackOnlyResolver::new()))
        .build()
        .expect("fetcher");
    let body = fetcher
        .get("http://localhost:9/route.gpx")
        .await
        .expect("fetched through the tunnel");
    assert_eq!(body, b"hello");
    let lines = seen.lock().expect("lock").clone();
    assert_eq!(
        lines.first().map(String::as_str),
        Some("CONNECT 127.0.0.1:9 HTTP/1.1")
    );
    // Inside the tunnel the request still names the host.
    assert_eq!(
        lines.get(1).map(|l| l.to_ascii_lowercase()).as_deref(),
        Some("host: localhost:9")
    );

    // https: the tunnel goes to the address too (TLS then fails on the fake, a transient).
    let tls = fetcher.get("https://localhost:6379/").await;
    assert!(matches!(tls, Err(FetchError::Transient(_))), "{tls:?}");
    let lines = seen.lock().expect("lock").clone();
    assert!(
        lines.contains(&"CONNECT 127.0.0.1:6379 HTTP/1.1".to_owned()),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("CONNECT localhost")),
        "{lines:?}"
    );
}

#[tokio::test]
async fn a_named_proxy_never_sees_a_refused_address() {
    let (proxy, seen) = fake_proxy().await;
    let fetcher = Fetcher::builder(Vec::new())
        .proxy(Some(format!("http://{proxy}")))
        .resolver(Arc::new(LoopbackOnlyResolver::new()))
        .build()
        .expect("fetcher");
    for link in [
        "https://localhost:6379/",
        "https://127.0.0.1:6379/",
        "https://[::1]/",
        "https://[64:ff9b::a00:1]/",
    ] {
        let answer = fetcher.get(link).await;
        assert!(
            matches!(answer, Err(FetchError::Refused(_))),
            "{link}: {answer:?}"
        );
    }
    assert!(seen.lock().expect("lock").is_empty());
}

/// The environment variable naming where [`child_fetches_with_proxy_variables_set`] fetches.
const CHILD_TARGET: &str = "ETAPPE_FETCH_TEST_TARGET";

/// The proxy variables of the environment are ignored. The variables are set on a child
/// process (this test binary, running the ignored test below), never on this process, whose
/// other tests run in parallel.
#[tokio::test]
async fn proxy_variables_in_the_environment_are_ignored() {
    let (proxy, seen) = fake_proxy().await;
    // The target accepts and closes: the child's direct attempt reaches it and fails.
    let target = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let target_addr = target.local_addr().expect("addr");
    let reached = Arc::new(Mutex::new(0u32));
    let count = Arc::clone(&reached);
    tokio::spawn(async move {
        while let Ok((stream, _)) = target.accept().await {
            *count.lock().expect("lock") += 1;
            drop(stream);
        }
    });
    let proxy_url = format!("http://{proxy}");
    let exe = std::env::current_exe().expect("test binary");
    let child_target = format!("https://localhost:{}/", target_addr.port());
    let status = tokio::task::spawn_blocking(move || {
        std::process::Command::new(exe)
            .args([
                "--exact",
                "fetch::tests::child_fetches_with_proxy_variables_set",
                "--ignored",
                "--quiet",
            ])
            .env("HTTPS_PROXY", &proxy_url)
            .env("https_proxy", &proxy_url)
            .env("HTTP_PROXY", &proxy_url)
            .env("http_proxy", &proxy_url)
            .env("ALL_PROXY", &proxy_url)
            .env("NO_PROXY", "")
            .env(CHILD_TARGET, child_target)
            .stdout(std::process::Stdio::null())
            .status()
    })
    .await
    .expect("join")
    .expect("run the child");
    assert!(status.success(), "the child test failed");
    assert!(seen.lock().expect("lock").is_empty(), "the proxy was asked");
    assert!(
        *reached.lock().expect("lock") > 0,
        "the target was not tried directly"
    );
}

#[tokio::test]
#[ignore = "run by proxy_variables_in_the_environment_are_ignored in a child process"]
async fn child_fetches_with_proxy_variables_set() {
    let Ok(target) = std::env::var(CHILD_TARGET) else {
        return;
    };
    let fetcher = Fetcher::new(vec!["localhost".into()]).expect("fetcher");
    let answer = fetcher.get(&target).await;
    assert!(
        matches!(answer, Err(FetchError::Transient(_))),
        "{answer:?}"
    );
}

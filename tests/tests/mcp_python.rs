//! The agent journey through the official Python MCP SDK (PyPI `mcp`, pinned in
//! `tests/python/requirements.txt`): `tests/python/mcp_journey.py` walks the steps of
//! `mcp.rs`'s journey (initialize, tools/list with hints, create, poll, a day, an edit and a
//! stale one, settings, share, unshare and delete through their confirmations, and, in the
//! 2026-07-28 era, delete confirmed by the person through an elicitation form) against a real
//! Etappe, so the surface is proven with a second, independent client. Without a Python that
//! can `import mcp` the test skips (and fails under `ETAPPE_REQUIRE_SERVICES=1`, as in CI).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use etappe_tests::{Backend, TestApp, fixtures};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/mcp_journey.py");
const DEFAULT_PYTHON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/.venv/bin/python");
const INSTALL: &str = "python3 -m venv tests/python/.venv && tests/python/.venv/bin/pip install -r tests/python/requirements.txt";
/// The whole script, both eras; its own polling deadline is 60 s.
const TIMEOUT: Duration = Duration::from_secs(150);

/// The interpreter to run the script with (`ETAPPE_PYTHON`, else the workspace's venv), or
/// why there is none usable.
fn find_python() -> Result<PathBuf, String> {
    let path = std::env::var_os("ETAPPE_PYTHON")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_PYTHON), PathBuf::from);
    match Command::new(&path)
        .args(["-c", "import mcp"])
        .stdin(Stdio::null())
        .output()
    {
        Ok(out) if out.status.success() => Ok(path),
        Ok(out) => Err(format!(
            "{} cannot import mcp ({})",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("no error printed")
        )),
        Err(e) => Err(format!("cannot run {}: {e}", path.display())),
    }
}

/// The interpreter, or `None` (skip) with the reason and the remedy printed; a failure under
/// `ETAPPE_REQUIRE_SERVICES=1`.
fn usable(found: Result<PathBuf, String>) -> Option<PathBuf> {
    let problem = match found {
        Ok(path) => return Some(path),
        Err(problem) => problem,
    };
    assert!(
        std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
        "ETAPPE_REQUIRE_SERVICES=1 but {problem}. Install the SDK: {INSTALL} (or set ETAPPE_PYTHON)"
    );
    eprintln!(
        "skipped: {problem}. Install the SDK from the workspace root: {INSTALL} (or set ETAPPE_PYTHON to a Python with `mcp` 2.x)"
    );
    None
}

/// What the script did.
#[derive(Debug)]
struct Run {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// Runs `python script args…`, killed after `timeout`; both streams are drained as it runs.
fn run(python: &Path, args: &[String], timeout: Duration) -> Run {
    let started = Instant::now();
    let mut child = Command::new(python)
        .arg(SCRIPT)
        .args(args)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
    let drain = |stream: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut stream) = stream {
                let _ = stream.read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    Run {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        elapsed: started.elapsed(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_sdk_walks_the_whole_journey() {
    // Importing the SDK takes about a second: probe it while Etappe starts.
    let probe = tokio::task::spawn_blocking(find_python);
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let Some(python) = usable(probe.await.expect("the interpreter probe")) else {
        return;
    };
    let fixtures = fixtures::start().await;
    // One token per era, and one for the 2026-07-28 client that confirms through a form: each
    // is a client with its own rate budget (20 changes a minute).
    let args = vec![
        "--url".to_owned(),
        format!("{}/mcp", app.base),
        "--token".to_owned(),
        app.user().await,
        "--token".to_owned(),
        app.user().await,
        "--token".to_owned(),
        app.user().await,
        "--gpx-url".to_owned(),
        fixtures.url("/route.gpx"),
    ];
    // The server runs on this runtime's workers; the script waits on a blocking thread.
    let run = tokio::task::spawn_blocking(move || run(&python, &args, TIMEOUT))
        .await
        .expect("the script's runner");
    let report = format!("--- stdout\n{}--- stderr\n{}---", run.stdout, run.stderr);
    let Some(status) = run.status else {
        panic!(
            "the Python journey did not finish within {} s and was killed\n{report}",
            TIMEOUT.as_secs()
        );
    };
    assert!(
        status.success(),
        "the Python journey failed ({status})\n{report}"
    );
    // The script's last line is its summary; without it the journey did not run to the end.
    assert!(
        run.stdout
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("journey complete:")),
        "the Python journey exited 0 without its summary line\n{report}"
    );
    if !run.stderr.trim().is_empty() {
        // Warnings of the SDK (a protocol quirk shows here first).
        eprintln!("--- the script's stderr\n{}---", run.stderr);
    }
    eprintln!(
        "{}python journey: {:.1} s",
        run.stdout,
        run.elapsed.as_secs_f64()
    );
}

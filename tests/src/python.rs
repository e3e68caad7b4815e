//! Running the official Python SDK's scripts (tests/python/) from a test: find an interpreter
//! that can `import mcp` (`ETAPPE_PYTHON`, else the workspace's venv), skip with the remedy
//! printed when there is none (a failure under `ETAPPE_REQUIRE_SERVICES=1`), and run a script
//! with a deadline, draining both streams.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The workspace's venv interpreter.
pub const DEFAULT_PYTHON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/.venv/bin/python");
/// How to install the SDK.
pub const INSTALL: &str = "python3 -m venv tests/python/.venv && tests/python/.venv/bin/pip install -r tests/python/requirements.txt";

/// The interpreter to run the script with (`ETAPPE_PYTHON`, else the workspace's venv), or
/// why there is none usable.
pub fn find_python() -> Result<PathBuf, String> {
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
pub fn usable(found: Result<PathBuf, String>) -> Option<PathBuf> {
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
pub struct Run {
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Runs `python script args…`, killed after `timeout`; both streams are drained as it runs.
pub fn run(python: &Path, script: &str, args: &[String], timeout: Duration) -> Run {
    let started = Instant::now();
    let mut child = Command::new(python)
        .arg(script)
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

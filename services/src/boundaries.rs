//! The house's rules, checked on the build itself: the application layer (the `etappe-app`
//! crate every transport shares) declares no HTTP framework, OpenAPI generator or MCP SDK
//! among its dependencies — so its code cannot name one — and the transports are siblings
//! that never import each other. A rule broken here is a dependency
//! pointing the wrong way, caught before review.

use std::path::{Path, PathBuf};

/// The transports: each a sibling module over `app`.
const TRANSPORTS: [&str; 4] = ["http", "mcp", "web", "oauth"];

/// Every `.rs` file under `src/<module>` (and `src/<module>.rs`).
fn sources(module: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![root.join(format!("{module}.rs"))];
    let mut dirs = vec![root.join(module)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.retain(|f| f.exists());
    files
}

/// The code lines of `file` (comments left out) that name the path `name::` or `use name`.
fn naming(file: &Path, names: &[String]) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|line| !line.starts_with("//"))
        .filter(|line| {
            names.iter().any(|name| {
                line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .any(|word| word == name.as_str() || word.starts_with(&format!("{name}::")))
            })
        })
        .map(|line| format!("{}: {line}", file.display()))
        .collect()
}

/// Crates only a transport may depend on: the HTTP framework, the OpenAPI generator, the
/// MCP SDK and the server's layers.
const TRANSPORT_CRATES: [&str; 5] = ["axum", "utoipa", "rmcp", "tower-http", "hyper-util"];

/// The packages `package` names in its `Cargo.toml` (normal, dev and build), as `Cargo.lock`
/// resolves them: the only crates its code can name (a crate reached only through another
/// cannot be imported).
fn direct_dependencies(lock: &str, package: &str) -> std::collections::BTreeSet<String> {
    // `[[package]]` blocks: `name = "…"`, then `dependencies = [ "name", "name version", … ]`.
    lock.split("[[package]]")
        .skip(1)
        .filter(|block| {
            block
                .lines()
                .any(|l| l.strip_prefix("name = ") == Some(&format!("\"{package}\"")))
        })
        .flat_map(|block| {
            block
                .split_once("dependencies = [")
                .map(|(_, rest)| rest.split(']').next().unwrap_or_default())
                .unwrap_or_default()
                .lines()
                .filter_map(|l| {
                    l.trim()
                        .trim_end_matches(',')
                        .trim_matches('"')
                        .split(' ')
                        .next()
                })
                .filter(|d| !d.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn workspace_lock() -> String {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    std::fs::read_to_string(&lock).expect("the workspace's Cargo.lock")
}

#[test]
fn the_application_layer_depends_on_no_transport_crate() {
    let lock = workspace_lock();
    let app = direct_dependencies(&lock, "etappe-app");
    assert!(
        app.contains("etappe-domain") && app.contains("sqlx"),
        "the application's dependencies were read: {app:?}"
    );
    let found: Vec<&str> = TRANSPORT_CRATES
        .into_iter()
        .filter(|c| app.contains(*c))
        .collect();
    assert!(
        found.is_empty(),
        "the application layer depends on transport crates {found:?}"
    );
    // The reading sees a transport crate where there is one: the services crate holds them.
    let services = direct_dependencies(&lock, "etappe-services");
    assert!(
        TRANSPORT_CRATES.iter().all(|c| services.contains(*c)),
        "{services:?}"
    );
}

#[test]
fn transports_never_import_each_other() {
    for transport in TRANSPORTS {
        let others: Vec<String> = TRANSPORTS
            .iter()
            .filter(|t| **t != transport)
            .flat_map(|t| [format!("crate::{t}"), format!("super::super::{t}")])
            .collect();
        let found: Vec<String> = sources(transport)
            .iter()
            .flat_map(|f| naming(f, &others))
            .collect();
        assert!(
            found.is_empty(),
            "{transport} imports another transport:\n{}",
            found.join("\n")
        );
    }
}

#[test]
fn the_rules_see_a_broken_import() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("probe.rs");
    std::fs::write(
        &file,
        "// axum in a comment is fine\nuse axum::http::HeaderMap;\n",
    )
    .expect("write");
    let found = naming(&file, &["axum".to_owned()]);
    assert_eq!(found.len(), 1, "{found:?}");
}

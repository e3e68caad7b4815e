//! The house's rules, checked on the source itself: `app` (the application layer every
//! transport shares) names neither the HTTP framework nor the OpenAPI generator, and the
//! transports are siblings that never import each other. A rule broken here is a dependency
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

#[test]
fn the_application_layer_names_no_transport_crate() {
    let files = sources("app");
    assert!(files.len() > 10, "app's sources were found: {files:?}");
    let names = ["axum".to_owned(), "utoipa".to_owned()];
    let found: Vec<String> = files.iter().flat_map(|f| naming(f, &names)).collect();
    assert!(
        found.is_empty(),
        "app imports a transport crate:\n{}",
        found.join("\n")
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

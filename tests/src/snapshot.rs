//! Committed snapshots of what clients read (`tests/snapshots/`): a change to one shows up
//! in review as a diff of its file. `ETAPPE_UPDATE_SNAPSHOTS=1` writes the live text first.

/// Asserts that `live` is the committed snapshot `name` (a file in `tests/snapshots/`),
/// after writing it there when `ETAPPE_UPDATE_SNAPSHOTS=1`.
pub fn assert_matches(name: &str, live: &str) {
    let path = format!("{}/snapshots/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var("ETAPPE_UPDATE_SNAPSHOTS").as_deref() == Ok("1") {
        std::fs::write(&path, live).expect("write the snapshot");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == live,
        "{name} differs from {path}; if the change is intended, regenerate it with ETAPPE_UPDATE_SNAPSHOTS=1 and review the diff"
    );
}

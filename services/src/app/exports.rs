//! Exports served from a cache. A GPX or FIT file is a pure function of the trip's stream
//! version, the day asked for and the format, so it is built once per (trip, version, day,
//! format) and served from memory after, with an ETag a client can revalidate (304). At most
//! a few builds run at once; a request for a file being built waits for it instead of
//! building its own copy, so a crowd reading one public link costs one build, not one each.

use std::collections::VecDeque;
use std::sync::Mutex;

use etappe_domain::projection::TripView;
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use super::AppError;
use super::trips::{ExportFile, ExportFormat, TripService};

/// Builds that may run at once (each holds a trip's points and its output in memory).
pub const PARALLEL_BUILDS: usize = 2;
/// Bytes of finished files the cache keeps; the oldest go first.
pub const CACHE_BYTES: usize = 128 * 1024 * 1024;

/// What identifies one export.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ExportKey {
    trip: String,
    stream_version: u64,
    stage: Option<uuid::Uuid>,
    format: ExportFormat,
}

/// A built file and its validator.
#[derive(Clone, Debug)]
pub struct CachedExport {
    pub file: ExportFile,
    /// A strong ETag of this exact file.
    pub etag: String,
}

/// The cache and the bound on parallel builds.
#[derive(Debug)]
pub struct ExportCache {
    builds: Semaphore,
    entries: Mutex<VecDeque<(ExportKey, CachedExport)>>,
}

impl Default for ExportCache {
    fn default() -> Self {
        Self {
            builds: Semaphore::new(PARALLEL_BUILDS),
            entries: Mutex::new(VecDeque::new()),
        }
    }
}

impl ExportCache {
    fn get(&self, key: &ExportKey) -> Option<CachedExport> {
        let entries = self.entries.lock().ok()?;
        entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    fn put(&self, key: ExportKey, value: CachedExport) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        // An older version of the same file is of no use any more.
        entries.retain(|(k, _)| {
            !(k.trip == key.trip && k.stage == key.stage && k.format == key.format)
        });
        entries.push_back((key, value));
        let mut total: usize = entries.iter().map(|(_, v)| v.file.bytes.len()).sum();
        while total > CACHE_BYTES && entries.len() > 1 {
            if let Some((_, old)) = entries.pop_front() {
                total -= old.file.bytes.len();
            }
        }
    }
}

impl TripService {
    /// The export of an authorized view, from the cache when it was built before.
    pub async fn cached_export(
        &self,
        view: &TripView,
        stage_id: Option<uuid::Uuid>,
        format: ExportFormat,
    ) -> Result<CachedExport, AppError> {
        let key = ExportKey {
            trip: view.trip.id.to_string(),
            stream_version: view.stream_version,
            stage: stage_id,
            format,
        };
        if let Some(hit) = self.exports.get(&key) {
            return Ok(hit);
        }
        let _build = self
            .exports
            .builds
            .acquire()
            .await
            .map_err(|_| AppError::Unavailable("exports are shutting down".into()))?;
        // Another request may have built it while this one waited.
        if let Some(hit) = self.exports.get(&key) {
            return Ok(hit);
        }
        let file = self.export_view(view, stage_id, format).await?;
        let digest = Sha256::digest(&file.bytes);
        let built = CachedExport {
            etag: format!("\"x{}\"", hex::encode(&digest[..12])),
            file,
        };
        self.exports.put(key, built.clone());
        Ok(built)
    }
}

/// A file name from the trip's title: what a person recognises in a downloads folder, with
/// no internal id and nothing a header could not carry.
pub fn file_stem(title: &str, day: Option<u32>) -> String {
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 60 {
            break;
        }
    }
    let slug = slug.trim_matches('-');
    let slug = if slug.is_empty() { "etappe-trip" } else { slug };
    match day {
        Some(day) => format!("{slug}-day-{day}"),
        None => slug.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::file_stem;

    #[test]
    fn file_names_come_from_the_title_without_ids_or_unsafe_characters() {
        assert_eq!(
            file_stem("Danube: Passau → Wien", None),
            "danube-passau-wien"
        );
        assert_eq!(file_stem("Alps", Some(3)), "alps-day-3");
        assert_eq!(file_stem("\"; rm -rf /", None), "rm-rf");
        assert_eq!(file_stem("→→", None), "etappe-trip");
    }
}

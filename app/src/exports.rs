//! Exports: a trip or a day as a GPX 1.1 or FIT course file, built from the stored track of
//! the current generation, and served from a cache. A file is a pure function of the trip's
//! stream version, the day asked for and the format, so it is built once per (trip, version,
//! day, format) and served from memory after, with an ETag a client can revalidate (304). At
//! most a few builds run at once; a request for a file being built waits for it instead of
//! building its own copy, so a crowd reading one public link costs one build, not one each.

use std::collections::VecDeque;
use std::sync::Mutex;

use etappe_domain::projection::TripView;
use etappe_domain::trip::Trip;
use etappe_domain::trip::stage::Stage;
use etappe_route::gpx::TrackPoint;
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use etappe_domain::ids::TripId;

use std::sync::Arc;

use etappe_events::Store;
use etappe_track::stored::StoredTrack;

use super::AppError;
use super::access::{owned_view, require};
use crate::identity::{Principal, Scope};

/// Builds that may run at once (each holds a trip's points and its output in memory).
pub const PARALLEL_BUILDS: usize = 2;
/// Bytes of finished files the cache keeps; the oldest go first.
pub const CACHE_BYTES: usize = 128 * 1024 * 1024;

/// A file format for exports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    Gpx,
    Fit,
}

/// An exported file.
#[derive(Clone, Debug)]
pub struct ExportFile {
    /// Reference-counted: the cache and every response share one copy.
    pub bytes: bytes::Bytes,
    pub content_type: &'static str,
    pub file_name: String,
}

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

/// Exports of trips, with their cache: built once by the composition root, shared by REST
/// and the public share links.
#[derive(Debug)]
pub struct ExportService {
    store: Arc<dyn Store>,
    cache: ExportCache,
}

impl ExportService {
    /// Exports of the trips in `store`, with an empty cache.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            cache: ExportCache::default(),
        }
    }

    /// The trip (or one day of it) as a GPX 1.1 or FIT course file: a track per day at full
    /// resolution, from the stored track of the current generation.
    pub async fn export(
        &self,
        principal: &Principal,
        trip_id: TripId,
        stage_id: Option<uuid::Uuid>,
        format: ExportFormat,
    ) -> Result<CachedExport, AppError> {
        require(principal, Scope::TripsRead)?;
        let view = owned_view(self.store.as_ref(), principal, trip_id).await?;
        self.cached_export(&view, stage_id, format).await
    }

    /// Export of a trip already authorized (also used by public share links).
    pub async fn export_view(
        &self,
        view: &TripView,
        stage_id: Option<uuid::Uuid>,
        format: ExportFormat,
    ) -> Result<ExportFile, AppError> {
        let trip = &view.trip;
        let stored = super::access::stored_track(self.store.as_ref(), trip).await?;
        let stages: Vec<_> = match stage_id {
            Some(id) => trip.stages.iter().filter(|s| s.id == id).collect(),
            None => trip.stages.iter().collect(),
        };
        if stages.is_empty() {
            return Err(AppError::NotFound);
        }
        // The one text gate, here too: a title from a route file may carry what the JSON
        // views strip (tag characters spelling hidden words), and files travel further.
        let title = trip
            .settings
            .title
            .as_deref()
            .map(etappe_domain::text::strip_controls)
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| "Etappe trip".into());
        let mut days: Vec<etappe_export::ExportDay> = Vec::with_capacity(stages.len());
        for stage in &stages {
            let slice =
                super::access::day_points(self.store.as_ref(), stage, &stored.points).await?;
            // A detour is its own geometry, without the source's breaks.
            let breaks = match stage.detour {
                Some(_) => Vec::new(),
                None => stored.breaks_within(stage.first_point, stage.last_point),
            };
            days.push(export_day(stage, &slice, breaks));
        }
        let waypoints = waypoints_of(&stages, &stored, format);
        let stem = file_stem(&title, stage_id.map(|_| stages[0].day_number));
        match format {
            ExportFormat::Gpx => Ok(ExportFile {
                bytes: etappe_export::to_gpx(&title, &days, &waypoints)
                    .into_bytes()
                    .into(),
                content_type: "application/gpx+xml",
                file_name: format!("{stem}.gpx"),
            }),
            ExportFormat::Fit => {
                let one_day = stage_id.and(stages.first().copied());
                let (course_name, identity) = fit_course(trip, &title, one_day);
                let bytes =
                    etappe_export::trip_to_fit_with(&course_name, &days, &waypoints, &identity)
                        .map_err(|e| {
                            AppError::Conflict(format!("the route cannot be written as FIT: {e}"))
                        })?;
                Ok(ExportFile {
                    bytes: bytes.into(),
                    content_type: "application/vnd.ant.fit",
                    file_name: format!("{stem}.fit"),
                })
            }
        }
    }

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
        if let Some(hit) = self.cache.get(&key) {
            return Ok(hit);
        }
        let _build = self
            .cache
            .builds
            .acquire()
            .await
            .map_err(|_| AppError::Unavailable("exports are shutting down".into()))?;
        // Another request may have built it while this one waited.
        if let Some(hit) = self.cache.get(&key) {
            return Ok(hit);
        }
        let file = self.export_view(view, stage_id, format).await?;
        let digest = Sha256::digest(&file.bytes);
        let built = CachedExport {
            etag: format!("\"x{}\"", hex::encode(&digest[..12])),
            file,
        };
        self.cache.put(key, built.clone());
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

/// A day as a file carries it: its name ("Day 2: Basel - Olten") and points.
fn export_day(
    stage: &Stage,
    points: &[TrackPoint],
    breaks: Vec<usize>,
) -> etappe_export::ExportDay {
    let name = match (&stage.start_label, &stage.end_label) {
        (Some(a), Some(b)) => format!("Day {}: {a} - {b}", stage.day_number),
        _ => format!("Day {}", stage.day_number),
    };
    etappe_export::ExportDay {
        name: etappe_domain::text::strip_controls(&name),
        points: points
            .iter()
            .map(|p| etappe_export::ExportPoint {
                lat: p.lat,
                lon: p.lon,
                ele: p.ele,
            })
            .collect(),
        breaks,
    }
}

/// A FIT file's course name and identity: each file is its own course on a device, with a
/// file_id from (trip, day, version) and the export time; a day's course is named after
/// that day (`one_day`), the whole trip's after its title.
fn fit_course(
    trip: &Trip,
    title: &str,
    one_day: Option<&Stage>,
) -> (String, etappe_export::FitIdentity) {
    let (day, course_name) = match one_day {
        Some(stage) => (
            stage.day_number,
            etappe_export::day_course_name(
                stage.day_number,
                stage.start_label.as_deref(),
                stage.end_label.as_deref(),
            ),
        ),
        None => (0, title.to_owned()),
    };
    let identity = etappe_export::FitIdentity {
        serial_number: etappe_export::fit_serial(&trip.id.to_string(), day, trip.version),
        time_created_unix: chrono::Utc::now().timestamp(),
    };
    (course_name, identity)
}

/// The waypoints a file carries: the chosen places to sleep, what the analysis found along
/// each day, and the source file's own waypoints, each with the day passing closest to it.
fn waypoints_of(
    stages: &[&Stage],
    stored: &StoredTrack,
    format: ExportFormat,
) -> Vec<etappe_export::ExportWaypoint> {
    // Chosen places to sleep travel with the file as waypoints: in GPX "Night 1: name",
    // in FIT the name first ("Gasthof Post N1"), as a course point holds 15 bytes.
    let lodging_name = |day: u32, name: &str| match format {
        ExportFormat::Gpx => format!("Night {day}: {name}"),
        ExportFormat::Fit => etappe_export::course_point_name(name, &format!("N{day}")),
    };
    let mut waypoints: Vec<etappe_export::ExportWaypoint> = stages
        .iter()
        .filter_map(|s| s.accommodation.as_ref().map(|a| (s.day_number, a)))
        .map(|(day, a)| etappe_export::ExportWaypoint {
            name: etappe_domain::text::strip_controls(&lodging_name(
                day,
                a.name.as_deref().unwrap_or(&a.kind),
            )),
            lat: a.lat,
            lon: a.lon,
            kind: etappe_export::WaypointKind::Lodging,
        })
        .collect();
    // What the analysis found along each day travels too, so the device shows the water,
    // food, shops and stations on the road ("Water (day 2 km 34.5, 120 m off): Fontaine";
    // in FIT the name first).
    for stage in stages {
        for found in stage.found.iter().flatten() {
            let (kind, what) = match found.category.as_str() {
                "water" => (etappe_export::WaypointKind::Water, "Water"),
                "resupply" => (etappe_export::WaypointKind::Food, "Food"),
                "bike_shop" => (etappe_export::WaypointKind::BikeShop, "Bike"),
                "railway_station" => (etappe_export::WaypointKind::Station, "Station"),
                _ => continue,
            };
            let named = found
                .name
                .as_deref()
                .map(etappe_domain::text::strip_controls);
            // Where the rider leaves the route for it, and how far off it lies.
            let place = format!(
                "day {} km {}, {} m off",
                stage.day_number,
                found.km,
                found.off_route_m.round()
            );
            let name = match format {
                ExportFormat::Gpx => match &named {
                    Some(n) => format!("{what} ({place}): {n}"),
                    None => format!("{what} ({place})"),
                },
                ExportFormat::Fit => {
                    etappe_export::course_point_name(named.as_deref().unwrap_or(what), "")
                }
            };
            waypoints.push(etappe_export::ExportWaypoint {
                name,
                lat: found.lat,
                lon: found.lon,
                kind,
            });
        }
    }
    // The source file's own waypoints, each with the day that passes closest to it.
    for stage in stages {
        for w in stored.waypoints_within(stage.first_point, stage.last_point) {
            waypoints.push(etappe_export::ExportWaypoint {
                name: etappe_domain::text::strip_controls(w.name.as_deref().unwrap_or("")),
                lat: w.lat,
                lon: w.lon,
                kind: etappe_export::WaypointKind::Generic,
            });
        }
    }
    waypoints
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

//! What the pipeline's tests over a real (SQLite) store share: a pipeline over a new store,
//! and a trip whose route job recorded it as one day.

use std::path::Path;
use std::sync::Arc;

use etappe_domain::ids::{TripId, UserId};
use etappe_domain::trip::TripCommand;
use etappe_domain::trip::settings::SettingsPatch;
use etappe_domain::trip::source::SourceUrl;
use etappe_domain::trip::stage::{Point, RouteSummary, Stage};
use etappe_events::{SqliteStore, Store};
use etappe_route::gpx::TrackPoint;
use etappe_track::labels::NoLabels;
use uuid::Uuid;

use super::{Applied, Pipeline};
use crate::progress::memory::MemoryProgress;
use crate::upstreams::Upstreams;

/// A pipeline over a new SQLite store in `dir`, asking `upstreams`.
pub(crate) async fn pipeline_on_sqlite(dir: &Path, upstreams: Upstreams) -> Pipeline {
    let store: Arc<dyn Store> = Arc::new(
        SqliteStore::open(&dir.join("etappe.db"))
            .await
            .expect("a store"),
    );
    Pipeline {
        store,
        fetcher: etappe_infra::fetch::Fetcher::builder(Vec::new())
            .build()
            .expect("a fetcher"),
        source_origins: etappe_infra::fetch::SourceOrigins::default(),
        progress: Arc::new(MemoryProgress::default()),
        labeller: Arc::new(NoLabels),
        upstreams,
        metrics: Arc::default(),
    }
}

/// A track point where a day's end is written.
pub(crate) fn point_at(p: &TrackPoint) -> Point {
    Point {
        lat: p.lat,
        lon: p.lon,
        ele: p.ele,
    }
}

/// Creates `trip` and records what its route job `route_job` found: the one day `stage`
/// over `point_count` points (storing the track is the caller's), then applies `then`.
/// A command refused fails the test, naming it.
pub(crate) async fn one_day_trip(
    pipeline: &Pipeline,
    trip: TripId,
    route_job: Uuid,
    point_count: usize,
    stage: Stage,
    then: Vec<TripCommand>,
) {
    let route = RouteSummary {
        title: None,
        total_distance_km: stage.distance_km,
        ascent_m: stage.ascent_m,
        descent_m: stage.descent_m,
        point_count,
        track_key: "track".into(),
        elevation: None,
    };
    let commands = [
        TripCommand::Create {
            trip_id: trip,
            owner_id: UserId(Uuid::from_u128(2)),
            source: SourceUrl::parse("https://example.org/a.gpx", &[]).expect("url"),
            settings: SettingsPatch::default(),
        },
        TripCommand::StartRoute {
            generation: 1,
            job_id: route_job,
        },
        TripCommand::RecordRoute {
            generation: 1,
            route,
            stages: vec![stage],
        },
    ];
    for (i, command) in commands.into_iter().chain(then).enumerate() {
        let applied = pipeline
            .apply(trip, &format!("{route_job}:fixture-{i}"), None, || {
                command.clone()
            })
            .await;
        assert!(matches!(applied, Ok(Applied::Done(_))), "command {i}");
    }
}

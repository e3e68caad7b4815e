//! A route job redelivered after its first delivery died (`kill -9` of the worker holding
//! it) between recording the days and ending their analysis: it goes on with the analysis
//! still open instead of dropping itself, so no trip keeps categories pending for good (#33).
//! Run over a real (SQLite) store.

use std::sync::Arc;

use etappe_domain::ids::TripId;
use etappe_domain::trip::stage::Stage;
use etappe_domain::trip::{Category, ComputationStatus};
use etappe_route::gpx::TrackPoint;
use uuid::Uuid;

use crate::jobs::Job;
use crate::pipeline::{Outcome, Pipeline, one_day_trip, pipeline_on_sqlite, point_at};
use crate::upstreams::Upstreams;
use etappe_track::stored;

const TRIP: TripId = TripId(Uuid::from_u128(11));

/// A trip whose route job recorded its one day and died: the route done, the analysis open.
async fn days_recorded_then_the_worker_died(pipeline: &Pipeline) {
    let points: Vec<TrackPoint> = (0..50)
        .map(|i| TrackPoint {
            lat: 47.0 + f64::from(i) * 0.001,
            lon: 9.5,
            ele: Some(450.0),
        })
        .collect();
    pipeline
        .store
        .put_blob(
            "track",
            &stored::encode_stored(&stored::StoredTrack {
                points: points.clone(),
                ..Default::default()
            }),
        )
        .await
        .expect("the track");
    let stage = Stage {
        id: Uuid::from_u128(12),
        day_number: 1,
        distance_km: 5.5,
        ascent_m: Some(0.0),
        descent_m: Some(0.0),
        start: point_at(&points[0]),
        end: point_at(&points[49]),
        last_point: 49,
        ..Default::default()
    };
    one_day_trip(
        pipeline,
        TRIP,
        Uuid::from_u128(13),
        points.len(),
        stage,
        Vec::new(),
    )
    .await;
}

#[tokio::test]
async fn a_redelivered_route_job_finishes_the_analysis_its_first_delivery_left_open() {
    let dir = std::env::temp_dir().join(format!("etappe-redelivery-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let pipeline = pipeline_on_sqlite(&dir, Upstreams::default()).await;
    days_recorded_then_the_worker_died(&pipeline).await;
    let before = pipeline.view(TRIP).await.expect("read").expect("trip").trip;
    assert!(
        !before.open_analysis().is_empty(),
        "the analysis was left open"
    );

    let job = Job::ComputeRoute {
        job_id: Uuid::from_u128(13),
        trip_id: TRIP,
        generation: 1,
    };
    let outcome = pipeline.run(&job, None).await.expect("no retry");
    assert_eq!(outcome, Outcome::Completed, "it went on, not dropped");
    let after = pipeline.view(TRIP).await.expect("read").expect("trip").trip;
    assert_eq!(
        after.open_analysis(),
        Vec::<Category>::new(),
        "{:?}",
        after.computations
    );
    assert!(!after.is_partial(), "every category ended");
    assert_eq!(
        after.computations.get(&Category::TerrainSecurity),
        Some(&ComputationStatus::Done)
    );

    // Delivered once more: nothing left, a duplicate, it ends without writing.
    let again = pipeline.run(&job, None).await.expect("no retry");
    assert!(matches!(again, Outcome::Dropped(_)), "{again:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The sweeper: a trip left with its analysis open and untouched for longer than the sweep's
/// deadline gets that analysis asked again (a job the dispatcher publishes), counted.
#[tokio::test]
async fn the_sweeper_asks_again_for_work_nobody_finished() {
    use crate::dispatcher::{Dispatcher, Sweep};
    let dir = std::env::temp_dir().join(format!("etappe-sweeper-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let pipeline = pipeline_on_sqlite(&dir, Upstreams::default()).await;
    days_recorded_then_the_worker_died(&pipeline).await;
    let metrics = Arc::new(etappe_infra::metrics::Metrics::default());
    let queue: Arc<dyn crate::queue::JobQueue> =
        Arc::new(crate::queue::memory::MemoryQueue::default());
    let sweep = |after| Sweep {
        after: std::time::Duration::from_secs(after),
        every: std::time::Duration::from_secs(1),
    };
    // Touched moments ago: not yet.
    let patient = Dispatcher::new(
        Arc::clone(&pipeline.store),
        Arc::clone(&queue),
        Arc::clone(&metrics),
    )
    .with_sweep(sweep(3600));
    assert_eq!(patient.sweep().await.expect("sweep"), 0);
    // Past the deadline: the analysis still open is asked again, once.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let due = Dispatcher::new(Arc::clone(&pipeline.store), queue, Arc::clone(&metrics))
        .with_sweep(sweep(1));
    assert_eq!(due.sweep().await.expect("sweep"), 1);
    assert_eq!(metrics.work_resumed.get(), 1);
    let events = pipeline
        .store
        .read_stream(&TRIP.stream_id())
        .await
        .expect("read");
    let last = events.last().expect("events");
    assert_eq!(last.event_type, "AnalysisRequested");
    assert_eq!(last.metadata.actor.as_deref(), Some("sweeper"));
    // Just asked: the trip was touched, so the next sweep leaves it to the new job.
    assert_eq!(due.sweep().await.expect("sweep"), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

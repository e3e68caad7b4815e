//! Jobs: the work an event asks for. The job id is the id of the requesting event, so a job
//! published twice (after a dispatcher crash) is recognisably the same job, and a worker's
//! results carry ids derived from it, so a duplicate delivery writes nothing new.

use etappe_domain::ids::TripId;
use etappe_domain::trip::{Category, TripEvent};
use etappe_events::RecordedEvent;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A unit of work for the fleet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Job {
    /// Fetch the trip's route, cut it into days, label and analyse them, for one generation.
    ComputeRoute {
        job_id: Uuid,
        trip_id: TripId,
        generation: u64,
    },
    /// Analyse the current days again for these categories.
    Analyse {
        job_id: Uuid,
        trip_id: TripId,
        generation: u64,
        categories: Vec<Category>,
    },
    /// Look for places to sleep around the days' ends (one day, or all).
    ScanAccommodations {
        job_id: Uuid,
        trip_id: TripId,
        generation: u64,
        radius_km: f64,
        stage_id: Option<Uuid>,
    },
    /// Re-route a day through a waypoint.
    RerouteStage {
        job_id: Uuid,
        trip_id: TripId,
        generation: u64,
        stage_id: Uuid,
        lat: f64,
        lon: f64,
    },
}

/// A job as it travels on the queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobMessage {
    pub job: Job,
    /// The W3C trace context of the request that asked for the work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
}

impl Job {
    /// The job a stored event requests, if it requests one.
    pub fn requested_by(event: &RecordedEvent) -> Option<Job> {
        let trip_id = TripId::from_stream_id(&event.stream_id)?;
        let typed =
            TripEvent::from_stored(&event.event_type, event.schema_version, &event.data).ok()?;
        match typed {
            TripEvent::RouteRequested { generation } => Some(Job::ComputeRoute {
                job_id: event.event_id,
                trip_id,
                generation,
            }),
            TripEvent::AnalysisRequested {
                generation,
                categories,
            } => Some(Job::Analyse {
                job_id: event.event_id,
                trip_id,
                generation,
                categories,
            }),
            TripEvent::AccommodationScanRequested {
                generation,
                radius_km,
                stage_id,
            } => Some(Job::ScanAccommodations {
                job_id: event.event_id,
                trip_id,
                generation,
                radius_km,
                stage_id,
            }),
            TripEvent::WaypointRequested {
                generation,
                stage_id,
                waypoint,
            } => Some(Job::RerouteStage {
                job_id: event.event_id,
                trip_id,
                generation,
                stage_id,
                lat: waypoint.lat,
                lon: waypoint.lon,
            }),
            _ => None,
        }
    }

    /// The job's id (that of the event that requested it).
    pub fn id(&self) -> Uuid {
        match self {
            Job::ComputeRoute { job_id, .. }
            | Job::Analyse { job_id, .. }
            | Job::ScanAccommodations { job_id, .. }
            | Job::RerouteStage { job_id, .. } => *job_id,
        }
    }

    /// The trip it works on.
    pub fn trip_id(&self) -> TripId {
        match self {
            Job::ComputeRoute { trip_id, .. }
            | Job::Analyse { trip_id, .. }
            | Job::ScanAccommodations { trip_id, .. }
            | Job::RerouteStage { trip_id, .. } => *trip_id,
        }
    }

    /// The generation of the trip's days it was asked for.
    pub fn generation(&self) -> u64 {
        match self {
            Job::ComputeRoute { generation, .. }
            | Job::Analyse { generation, .. }
            | Job::ScanAccommodations { generation, .. }
            | Job::RerouteStage { generation, .. } => *generation,
        }
    }

    /// A short name for metrics and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Job::ComputeRoute { .. } => "compute_route",
            Job::Analyse { .. } => "analyse",
            Job::ScanAccommodations { .. } => "scan_accommodations",
            Job::RerouteStage { .. } => "reroute_stage",
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use etappe_events::EventMetadata;
    use serde_json::json;

    use super::*;

    fn recorded(stream_id: String, event_type: &str, data: serde_json::Value) -> RecordedEvent {
        RecordedEvent {
            global_position: 1,
            tx_id: 0,
            stream_id,
            version: 2,
            event_id: Uuid::now_v7(),
            event_type: event_type.into(),
            schema_version: 1,
            data,
            metadata: EventMetadata::default(),
            recorded_at: Utc::now(),
        }
    }

    #[test]
    fn a_route_request_is_a_route_job_named_after_its_event() {
        let trip = TripId::new();
        let event = recorded(trip.stream_id(), "RouteRequested", json!({"generation": 3}));
        let job = Job::requested_by(&event).expect("a job");
        assert_eq!(
            job,
            Job::ComputeRoute {
                job_id: event.event_id,
                trip_id: trip,
                generation: 3
            }
        );
        assert_eq!(job.id(), event.event_id);
    }

    #[test]
    fn an_analysis_request_is_an_analysis_job() {
        let trip = TripId::new();
        let event = recorded(
            trip.stream_id(),
            "AnalysisRequested",
            json!({"generation": 2, "categories": ["terrain_security"]}),
        );
        let job = Job::requested_by(&event).expect("a job");
        assert_eq!(job.kind(), "analyse");
    }

    #[test]
    fn other_events_and_streams_request_nothing() {
        let trip = TripId::new();
        assert_eq!(
            Job::requested_by(&recorded(trip.stream_id(), "TripDeleted", json!(null))),
            None
        );
        assert_eq!(
            Job::requested_by(&recorded(
                "bench-1".into(),
                "RouteRequested",
                json!({"generation": 1})
            )),
            None
        );
    }
}

//! Jobs: the work an event asks for. The job id is the id of the requesting event, so a job
//! published twice (after a dispatcher crash) is recognisably the same job.

use etappe_events::ids::TripId;
use etappe_events::store::RecordedEvent;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A unit of work for the fleet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Job {
    /// Fetch the trip's route, cut it into days and label them, for one pacing generation.
    ComputeRoute {
        job_id: Uuid,
        trip_id: TripId,
        generation: u64,
    },
}

impl Job {
    /// The job a stored event requests, if it requests one.
    pub fn requested_by(event: &RecordedEvent) -> Option<Job> {
        let trip_id = TripId::from_stream_id(&event.stream_id)?;
        match event.event_type.as_str() {
            "RouteRequested" => Some(Job::ComputeRoute {
                job_id: event.event_id,
                trip_id,
                generation: event.data.get("generation")?.as_u64()?,
            }),
            _ => None,
        }
    }

    /// The job's id (that of the event that requested it).
    pub fn id(&self) -> Uuid {
        match self {
            Job::ComputeRoute { job_id, .. } => *job_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use etappe_events::store::EventMetadata;
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

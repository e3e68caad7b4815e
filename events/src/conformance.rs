//! The contract every event store adapter must keep, written once and run against each
//! backend (`events/tests/store/store_sqlite.rs` always, `store_postgres.rs` when PostgreSQL is
//! configured). Each check uses its own streams and owner, so checks can share a database.

use std::collections::HashSet;

use serde_json::json;
use uuid::Uuid;

use crate::{EventMetadata, NewEvent, RecordedEvent, Store};
use etappe_domain::ids::TripId;
use etappe_domain::trip::{TripCommand, TripEvent, decide, fold};

mod gate;
mod log;
mod projections;

pub use gate::*;
pub use log::*;
pub use projections::*;

pub(crate) fn event(kind: &str) -> NewEvent {
    NewEvent {
        event_id: Uuid::now_v7(),
        event_type: kind.to_owned(),
        schema_version: 1,
        data: json!({"n": kind}),
        metadata: EventMetadata {
            actor: Some("conformance".into()),
            ..Default::default()
        },
    }
}

pub(crate) fn stream(prefix: &str) -> String {
    format!("{prefix}-{}", Uuid::now_v7())
}

pub(crate) fn assert_contiguous(events: &[RecordedEvent]) {
    let versions: Vec<u64> = events.iter().map(|e| e.version).collect();
    let expected: Vec<u64> = (1..=events.len() as u64).collect();
    assert_eq!(
        versions, expected,
        "stream versions must be contiguous from 1"
    );
    let ids: HashSet<Uuid> = events.iter().map(|e| e.event_id).collect();
    assert_eq!(ids.len(), events.len(), "no event may be stored twice");
}

pub(crate) fn trip_events(
    state: Option<&etappe_domain::trip::Trip>,
    command: TripCommand,
) -> Vec<NewEvent> {
    let metadata = EventMetadata {
        actor: Some("conformance".into()),
        ..Default::default()
    };
    decide(state, command)
        .expect("command accepted")
        .iter()
        .map(|e| e.to_new_event(&metadata))
        .collect()
}

pub(crate) async fn load(
    store: &dyn Store,
    trip: TripId,
) -> (u64, Option<etappe_domain::trip::Trip>) {
    let events = store.read_stream(&trip.stream_id()).await.expect("read");
    let typed: Vec<TripEvent> = events
        .iter()
        .map(|e| {
            TripEvent::from_stored(&e.event_type, e.schema_version, &e.data).expect("trip event")
        })
        .collect();
    (events.len() as u64, fold(&typed))
}

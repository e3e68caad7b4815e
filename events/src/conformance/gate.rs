//! The command gate: asked once about what was decided, able to stop it.

use std::sync::Arc;

use crate::command::{Gate, GateStop};
use crate::{CommandMetadata, DecidedOn, EventIds, EventMetadata, ExecuteError, Store};
use etappe_domain::ids::{TripId, UserId};
use etappe_domain::trip::settings::SettingsPatch;
use etappe_domain::trip::source::SourceUrl;
use etappe_domain::trip::{TripCommand, TripEvent};

/// A gate that counts what it is asked and lets it through or stops it.
struct CountingGate {
    asked: std::sync::Mutex<Vec<Vec<TripEvent>>>,
    stops: bool,
}

impl CountingGate {
    fn new(stops: bool) -> Self {
        Self {
            asked: std::sync::Mutex::new(Vec::new()),
            stops,
        }
    }

    fn asked(&self) -> Vec<Vec<TripEvent>> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

impl Gate for CountingGate {
    fn pass<'a>(
        &'a self,
        _state: Option<&'a etappe_domain::projection::TripView>,
        events: &'a [TripEvent],
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), GateStop>> + Send + 'a>>
    {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(events.to_vec());
        }
        let stops = self.stops;
        Box::pin(async move {
            if stops {
                Err("not confirmed".into())
            } else {
                Ok(())
            }
        })
    }
}

/// A command's gate is asked once, about the events decided (none, too), after the domain's
/// refusals; a stop writes nothing; a retry after a lost race does not ask again.
pub async fn a_gate_sees_the_decision_once_and_can_stop_it(store: Arc<dyn Store>) {
    let meta = CommandMetadata {
        metadata: EventMetadata {
            actor: Some("conformance".into()),
            ..Default::default()
        },
        ids: EventIds::Fresh,
    };
    let trip_id = TripId::new();
    store
        .execute(trip_id, DecidedOn::NewStream, &meta, |_| {
            TripCommand::Create {
                trip_id,
                owner_id: UserId::new(),
                source: SourceUrl::parse("https://example.org/route.gpx", &[]).expect("url"),
                settings: SettingsPatch::default(),
            }
        })
        .await
        .expect("create");
    let length = |store: Arc<dyn Store>| async move {
        store
            .read_stream(&trip_id.stream_id())
            .await
            .expect("read")
            .len()
    };
    let before = length(store.clone()).await;

    // Stopped: asked once about the deletion, nothing written.
    let stopping = CountingGate::new(true);
    let stopped = store
        .execute_through(
            trip_id,
            DecidedOn::Current,
            &meta,
            |_| TripCommand::Delete,
            Some(&stopping),
        )
        .await;
    assert!(
        matches!(&stopped, Err(ExecuteError::Stopped(why)) if why.to_string() == "not confirmed"),
        "{stopped:?}"
    );
    assert_eq!(stopping.asked(), vec![vec![TripEvent::TripDeleted]]);
    assert_eq!(length(store.clone()).await, before, "a stop writes nothing");

    // Refused by the domain: the gate is never asked.
    let refused = store
        .execute_through(
            trip_id,
            DecidedOn::Current,
            &meta,
            |_| TripCommand::UpdateSettings {
                patch: SettingsPatch {
                    title: Some("stale".into()),
                    ..Default::default()
                },
                plan: None,
                expected_version: 99,
                today: "2030-01-01".parse().expect("date"),
            },
            Some(&stopping),
        )
        .await;
    assert!(
        matches!(refused, Err(ExecuteError::Refused(_))),
        "{refused:?}"
    );
    assert_eq!(stopping.asked().len(), 1, "a refused command asks nobody");

    // A decision that changes nothing (revoking a link never made) is asked about too: a
    // confirmation is spent on a no-op as on a change.
    let asking = CountingGate::new(true);
    let noop = store
        .execute_through(
            trip_id,
            DecidedOn::Current,
            &meta,
            |_| TripCommand::Unshare,
            Some(&asking),
        )
        .await;
    assert!(matches!(noop, Err(ExecuteError::Stopped(_))), "{noop:?}");
    assert_eq!(asking.asked(), vec![Vec::<TripEvent>::new()]);

    // A lost race: decided on a stale read, decided again on the current one, asked once.
    let stale = store
        .trip_view(trip_id)
        .await
        .expect("view")
        .expect("the trip exists");
    store
        .execute(trip_id, DecidedOn::Current, &meta, |trip| {
            TripCommand::UpdateSettings {
                patch: SettingsPatch {
                    title: Some("renamed meanwhile".into()),
                    ..Default::default()
                },
                plan: None,
                expected_version: trip.map_or(0, |t| t.version),
                today: "2030-01-01".parse().expect("date"),
            }
        })
        .await
        .expect("rename");
    let passing = CountingGate::new(false);
    store
        .execute_through(
            trip_id,
            DecidedOn::Loaded(Box::new(stale)),
            &meta,
            |_| TripCommand::Delete,
            Some(&passing),
        )
        .await
        .expect("deleted");
    assert_eq!(passing.asked().len(), 1, "asked once across the retry");
    assert!(store.trip_view(trip_id).await.expect("view").is_none());
}

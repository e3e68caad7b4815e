//! The contract every event store adapter must keep, written once and run against each
//! backend (`events/tests/store/store_sqlite.rs` always, `store_postgres.rs` when PostgreSQL is
//! configured). Each check uses its own streams and owner, so checks can share a database.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use chrono::NaiveDate;
use serde_json::json;
use uuid::Uuid;

use crate::command::{Gate, GateStop};
use crate::{
    CommandMetadata, Cursor, DecidedOn, EventIds, EventMetadata, ExecuteError, ExpectedVersion,
    NewEvent, RecordedEvent, Store, StoreError,
};
use etappe_domain::ids::{TripId, UserId};
use etappe_domain::trip::settings::SettingsPatch;
use etappe_domain::trip::source::SourceUrl;
use etappe_domain::trip::{TripCommand, TripEvent, decide, fold};

fn event(kind: &str) -> NewEvent {
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

fn stream(prefix: &str) -> String {
    format!("{prefix}-{}", Uuid::now_v7())
}

fn assert_contiguous(events: &[RecordedEvent]) {
    let versions: Vec<u64> = events.iter().map(|e| e.version).collect();
    let expected: Vec<u64> = (1..=events.len() as u64).collect();
    assert_eq!(
        versions, expected,
        "stream versions must be contiguous from 1"
    );
    let ids: HashSet<Uuid> = events.iter().map(|e| e.event_id).collect();
    assert_eq!(ids.len(), events.len(), "no event may be stored twice");
}

/// 32 appends at the same expected version: exactly one wins, the others get a `Conflict`
/// naming the real version; then 32 writers that reload and retry all land, contiguously.
pub async fn concurrent_appends_have_exactly_one_winner(store: Arc<dyn Store>) {
    let s = stream("race");
    store
        .append(&s, ExpectedVersion::NoStream, vec![event("Opened")])
        .await
        .expect("first append");

    let attempts = (0..32).map(|_| {
        let store = Arc::clone(&store);
        let s = s.clone();
        tokio::spawn(async move {
            store
                .append(&s, ExpectedVersion::Exact(1), vec![event("Raced")])
                .await
        })
    });
    let results = futures::future::join_all(attempts).await;
    let mut winners = 0;
    for result in results {
        match result.expect("task") {
            Ok(outcome) => {
                winners += 1;
                assert_eq!((outcome.first_version, outcome.last_version), (2, 2));
            }
            Err(StoreError::Conflict {
                actual, expected, ..
            }) => {
                assert_eq!(expected, ExpectedVersion::Exact(1));
                assert_eq!(actual, 2, "a conflict names the version that won");
            }
            Err(other) => panic!("unexpected error: {other}"),
        }
    }
    assert_eq!(winners, 1, "exactly one append may win version 2");
    assert_contiguous(&store.read_stream(&s).await.expect("read"));

    let retrying = (0..32).map(|_| {
        let store = Arc::clone(&store);
        let s = s.clone();
        tokio::spawn(async move {
            loop {
                let version = store.read_stream(&s).await.expect("read").len() as u64;
                match store
                    .append(&s, ExpectedVersion::Exact(version), vec![event("Retried")])
                    .await
                {
                    Ok(_) => return,
                    Err(StoreError::Conflict { .. }) => tokio::task::yield_now().await,
                    Err(other) => panic!("unexpected error: {other}"),
                }
            }
        })
    });
    for task in futures::future::join_all(retrying).await {
        task.expect("task");
    }
    let all = store.read_stream(&s).await.expect("read");
    assert_eq!(all.len(), 34);
    assert_contiguous(&all);
}

/// Appending events whose ids are already stored returns the first outcome and writes
/// nothing, whatever version the retry expected.
pub async fn a_retried_append_is_idempotent(store: Arc<dyn Store>) {
    let s = stream("retry");
    let batch = vec![event("A"), event("B")];
    let first = store
        .append(&s, ExpectedVersion::NoStream, batch.clone())
        .await
        .expect("first");
    assert!(!first.already_appended);
    for expected in [
        ExpectedVersion::NoStream,
        ExpectedVersion::Exact(0),
        ExpectedVersion::Any,
    ] {
        let again = store
            .append(&s, expected, batch.clone())
            .await
            .expect("retry succeeds");
        assert!(again.already_appended);
        assert_eq!((again.first_version, again.last_version), (1, 2));
        assert_eq!(again.positions, first.positions);
    }
    let stored = store.read_stream(&s).await.expect("read");
    assert_eq!(stored.len(), 2, "a retry writes nothing");
    assert_eq!(stored[0].metadata.actor.as_deref(), Some("conformance"));

    // A different event at a stale version is still a conflict.
    let stale = store
        .append(&s, ExpectedVersion::Exact(1), vec![event("C")])
        .await;
    assert!(
        matches!(stale, Err(StoreError::Conflict { actual: 2, .. })),
        "{stale:?}"
    );
}

async fn drain(store: &dyn Store, mut cursor: Cursor) -> (Cursor, Vec<RecordedEvent>) {
    let mut seen = Vec::new();
    loop {
        let batch = store.read_all(cursor, 500).await.expect("read_all");
        let Some(last) = batch.last() else {
            return (cursor, seen);
        };
        assert!(
            last.cursor() > cursor,
            "a subscriber's cursor only moves forward"
        );
        cursor = last.cursor();
        seen.extend(batch);
    }
}

/// A transaction held open while later ones commit: the subscriber delivers nothing past it
/// until it commits, then delivers it and everything after, skipping nothing; and a held
/// transaction that rolls back does not stall the subscriber.
pub async fn a_subscriber_never_skips_a_late_commit(store: Arc<dyn Store>) {
    let (cursor, _) = drain(store.as_ref(), Cursor::START).await;

    let held_stream = stream("held");
    let held = store
        .begin_append(&held_stream, ExpectedVersion::NoStream, vec![event("Held")])
        .await
        .expect("begin held append");
    let later: Vec<String> = (0..3).map(|_| stream("later")).collect();
    let writers: Vec<_> = later
        .iter()
        .map(|s| {
            let store = Arc::clone(&store);
            let s = s.clone();
            tokio::spawn(async move {
                store
                    .append(&s, ExpectedVersion::NoStream, vec![event("Later")])
                    .await
            })
        })
        .collect();
    // Give the later appends time to commit where the backend lets them (PostgreSQL); on
    // SQLite they wait for the held writer.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let ours = |events: &[RecordedEvent]| -> Vec<String> {
        events
            .iter()
            .filter(|e| e.stream_id == held_stream || later.contains(&e.stream_id))
            .map(|e| e.stream_id.clone())
            .collect()
    };
    let (cursor_while_held, seen_while_held) = drain(store.as_ref(), cursor).await;
    assert!(
        ours(&seen_while_held).is_empty(),
        "nothing after the held transaction may be delivered while it is open: {:?}",
        ours(&seen_while_held)
    );

    held.commit().await.expect("commit held");
    for w in writers {
        w.await.expect("task").expect("later append");
    }
    let (_, seen_after) = drain(store.as_ref(), cursor_while_held).await;
    let delivered = ours(&seen_after);
    assert_eq!(
        delivered.len(),
        4,
        "the held event and the three later ones: {delivered:?}"
    );
    assert!(
        delivered.contains(&held_stream),
        "the late commit is delivered"
    );
    let unique: HashSet<&String> = delivered.iter().collect();
    assert_eq!(unique.len(), 4, "each delivered exactly once");

    // Rolled back: the subscriber moves on to what committed after it.
    let (cursor, _) = drain(store.as_ref(), Cursor::START).await;
    let doomed_stream = stream("doomed");
    let doomed = store
        .begin_append(
            &doomed_stream,
            ExpectedVersion::NoStream,
            vec![event("Doomed")],
        )
        .await
        .expect("begin doomed append");
    let after = stream("after");
    let writer = {
        let store = Arc::clone(&store);
        let after = after.clone();
        tokio::spawn(async move {
            store
                .append(&after, ExpectedVersion::NoStream, vec![event("After")])
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    doomed.rollback().await.expect("rollback");
    writer.await.expect("task").expect("append after rollback");
    let (_, seen) = drain(store.as_ref(), cursor).await;
    assert!(
        seen.iter().any(|e| e.stream_id == after),
        "the subscriber is not stalled by a rollback"
    );
    assert!(
        !seen.iter().any(|e| e.stream_id == doomed_stream),
        "a rolled-back event is never delivered"
    );
}

/// Checkpoints survive a round trip and start at the beginning.
pub async fn checkpoints_round_trip(store: Arc<dyn Store>) {
    let name = format!("sub-{}", Uuid::now_v7());
    assert_eq!(
        store.load_checkpoint(&name).await.expect("load"),
        Cursor::START
    );
    let s = stream("cp");
    store
        .append(&s, ExpectedVersion::NoStream, vec![event("X")])
        .await
        .expect("append");
    let last = store.read_stream(&s).await.expect("read")[0].cursor();
    store.save_checkpoint(&name, last).await.expect("save");
    assert_eq!(store.load_checkpoint(&name).await.expect("load"), last);
}

/// An old shape is read in the new one: stored events are never rewritten.
pub async fn old_shapes_are_upcast_on_load(store: Arc<dyn Store>) {
    let kind = format!("Legacy{}", Uuid::now_v7().simple());
    let s = stream("legacy");
    let mut old = event(&kind);
    old.data = json!({"km": 12});
    store
        .append(&s, ExpectedVersion::NoStream, vec![old])
        .await
        .expect("append v1");
    crate::upcast::register(&kind, 1, |v| json!({"distanceKm": v["km"]}));
    let read = store.read_stream(&s).await.expect("read");
    assert_eq!(read[0].schema_version, 2);
    assert_eq!(read[0].data, json!({"distanceKm": 12}));
}

fn trip_events(state: Option<&etappe_domain::trip::Trip>, command: TripCommand) -> Vec<NewEvent> {
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

async fn load(store: &dyn Store, trip: TripId) -> (u64, Option<etappe_domain::trip::Trip>) {
    let events = store.read_stream(&trip.stream_id()).await.expect("read");
    let typed: Vec<TripEvent> = events
        .iter()
        .map(|e| {
            TripEvent::from_stored(&e.event_type, e.schema_version, &e.data).expect("trip event")
        })
        .collect();
    (events.len() as u64, fold(&typed))
}

/// The inline projection is read-your-writes, and folding the whole log afresh gives the
/// same read models as the live ones.
pub async fn a_rebuilt_projection_equals_the_live_one(store: Arc<dyn Store>) {
    let owner = UserId::new();
    let today: NaiveDate = "2030-01-01".parse().expect("date");
    let mut trips = Vec::new();
    for i in 0..5 {
        let trip_id = TripId::new();
        let create = TripCommand::Create {
            trip_id,
            owner_id: owner,
            source: SourceUrl::parse("https://example.org/route.gpx", &[]).expect("url"),
            settings: SettingsPatch {
                title: Some(format!("Trip {i}")),
                ..Default::default()
            },
        };
        store
            .append(
                &trip_id.stream_id(),
                ExpectedVersion::NoStream,
                trip_events(None, create),
            )
            .await
            .expect("create");
        let view = store
            .trip_view(trip_id)
            .await
            .expect("view")
            .expect("read-your-writes");
        assert_eq!(
            view.trip.settings.title.as_deref(),
            Some(&*format!("Trip {i}"))
        );
        trips.push(trip_id);
    }
    for (i, trip_id) in trips.iter().enumerate() {
        let (stream_version, state) = load(store.as_ref(), *trip_id).await;
        let command = if i == 4 {
            TripCommand::Delete
        } else {
            TripCommand::UpdateSettings {
                patch: SettingsPatch {
                    max_distance_per_day: Some(50.0 + i as f64),
                    ..Default::default()
                },
                plan: None,
                expected_version: 1,
                today,
            }
        };
        store
            .append(
                &trip_id.stream_id(),
                ExpectedVersion::Exact(stream_version),
                trip_events(state.as_ref(), command),
            )
            .await
            .expect("update");
    }
    assert!(
        store.trip_view(trips[4]).await.expect("view").is_none(),
        "a deleted trip has no view"
    );
    assert_eq!(
        store.trip_owner(trips[0]).await.expect("owner"),
        Some(owner)
    );

    let ours = |rows: Vec<serde_json::Value>| -> Vec<serde_json::Value> {
        rows.into_iter()
            .filter(|r| r["ownerId"] == json!(owner.to_string()))
            .collect()
    };
    let live = ours(store.dump_trip_views().await.expect("dump"));
    assert_eq!(live.len(), 4);
    let report = store.rebuild_projections().await.expect("rebuild");
    assert!(report.trips >= 4 && report.events >= 14, "{report:?}");
    let rebuilt = ours(store.dump_trip_views().await.expect("dump"));
    assert_eq!(rebuilt, live, "a rebuilt projection equals the live one");
}

/// Lists are per owner, filtered and paginated.
pub async fn trip_lists_filter_and_paginate(store: Arc<dyn Store>) {
    let owner = UserId::new();
    let titles = ["Alps crossing", "Loire valley", "Alpine loop"];
    for (i, title) in titles.iter().enumerate() {
        let trip_id = TripId::new();
        let start: NaiveDate = format!("2031-0{}-01", i + 1).parse().expect("date");
        let create = TripCommand::Create {
            trip_id,
            owner_id: owner,
            source: SourceUrl::parse("https://example.org/route.gpx", &[]).expect("url"),
            settings: SettingsPatch {
                title: Some((*title).to_owned()),
                start_date: Some(Some(start)),
                end_date: Some(Some(start + chrono::Days::new(3))),
                ..Default::default()
            },
        };
        store
            .append(
                &trip_id.stream_id(),
                ExpectedVersion::NoStream,
                trip_events(None, create),
            )
            .await
            .expect("create");
    }
    let page = |page, per_page| crate::Page { page, per_page };
    let all = crate::TripFilter::default();
    let (first, total) = store
        .list_trip_views(owner, &all, page(1, 2))
        .await
        .expect("list");
    assert_eq!((first.len(), total), (2, 3));
    assert_eq!(
        first[0].trip.settings.title.as_deref(),
        Some("Alpine loop"),
        "newest first"
    );
    let (second, _) = store
        .list_trip_views(owner, &all, page(2, 2))
        .await
        .expect("list");
    assert_eq!(second.len(), 1);
    let alp = crate::TripFilter {
        title: Some("ALP".into()),
        ..Default::default()
    };
    assert_eq!(
        store
            .list_trip_views(owner, &alp, page(1, 30))
            .await
            .expect("list")
            .1,
        2
    );
    let from_feb = crate::TripFilter {
        start_date: Some("2031-02-01".parse().expect("d")),
        ..Default::default()
    };
    assert_eq!(
        store
            .list_trip_views(owner, &from_feb, page(1, 30))
            .await
            .expect("list")
            .1,
        2
    );
    let until_feb = crate::TripFilter {
        end_date: Some("2031-02-10".parse().expect("d")),
        ..Default::default()
    };
    assert_eq!(
        store
            .list_trip_views(owner, &until_feb, page(1, 30))
            .await
            .expect("list")
            .1,
        2
    );
    let stranger = store
        .list_trip_views(UserId::new(), &all, page(1, 30))
        .await
        .expect("list");
    assert_eq!(stranger.1, 0, "another user sees none of them");
}

/// An account's deletion: every trip an owner ever had is listed (a deleted one too, whose
/// read model is gone but whose stream is not), and purging them leaves no event, stream,
/// read model or file, touches no one else's, and lets no late append bring one back.
pub async fn an_owners_trips_are_listed_and_purged(store: Arc<dyn Store>) {
    let owner = UserId::new();
    let stranger = UserId::new();
    let create = |trip_id, owner_id| TripCommand::Create {
        trip_id,
        owner_id,
        source: SourceUrl::parse("https://example.org/route.gpx", &[]).expect("url"),
        settings: SettingsPatch::default(),
    };
    let mut mine = vec![TripId::new(), TripId::new()];
    mine.sort_by_key(|t| t.0);
    let theirs = TripId::new();
    for (trip, who) in [(mine[0], owner), (mine[1], owner), (theirs, stranger)] {
        store
            .append(
                &trip.stream_id(),
                ExpectedVersion::NoStream,
                trip_events(None, create(trip, who)),
            )
            .await
            .expect("create");
    }
    // One of them deleted the ordinary way: its read model goes, its stream stays.
    let (version, state) = load(store.as_ref(), mine[1]).await;
    store
        .append(
            &mine[1].stream_id(),
            ExpectedVersion::Exact(version),
            trip_events(state.as_ref(), TripCommand::Delete),
        )
        .await
        .expect("delete");
    assert!(store.trip_view(mine[1]).await.expect("view").is_none());
    store
        .put_blob(&format!("upload:{}", mine[0]), b"gpx")
        .await
        .expect("blob");
    store
        .put_blob(&format!("upload:{theirs}"), b"gpx")
        .await
        .expect("blob");

    assert_eq!(store.owned_trips(owner).await.expect("owned"), mine);
    let (before, _) = load(store.as_ref(), mine[0]).await;
    let removed = store.purge_trips(&mine).await.expect("purge");
    assert!(removed >= 3, "every event of both trips: {removed}");
    for trip in &mine {
        assert!(
            store
                .read_stream(&trip.stream_id())
                .await
                .expect("read")
                .is_empty()
        );
        assert!(store.trip_view(*trip).await.expect("view").is_none());
        assert_eq!(
            store
                .stream_version(&trip.stream_id())
                .await
                .expect("version"),
            0
        );
    }
    assert!(store.owned_trips(owner).await.expect("owned").is_empty());
    assert!(
        store
            .get_blob(&format!("upload:{}", mine[0]))
            .await
            .expect("blob")
            .is_none()
    );
    // A writer that read the trip before the purge cannot bring it back.
    let late = store
        .append(
            &mine[0].stream_id(),
            ExpectedVersion::Exact(before),
            vec![event("Late")],
        )
        .await;
    assert!(matches!(late, Err(StoreError::Conflict { .. })), "{late:?}");
    // Someone else's trip is untouched.
    assert_eq!(
        store.owned_trips(stranger).await.expect("owned"),
        vec![theirs]
    );
    assert!(store.trip_view(theirs).await.expect("view").is_some());
    assert!(
        store
            .get_blob(&format!("upload:{theirs}"))
            .await
            .expect("blob")
            .is_some()
    );
    assert_eq!(store.purge_trips(&[]).await.expect("nothing"), 0);
}

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

/// The sweeper's query: a trip whose work has not ended is listed once nothing touched it
/// since the given time, not before; a trip whose work has ended (its route failed for good)
/// is never listed.
pub async fn trips_with_stale_open_work_are_found(store: Arc<dyn Store>) {
    let create = |trip_id| TripCommand::Create {
        trip_id,
        owner_id: UserId::new(),
        source: SourceUrl::parse("https://example.org/route.gpx", &[]).expect("url"),
        settings: SettingsPatch::default(),
    };
    let (waiting, ended) = (TripId::new(), TripId::new());
    for trip_id in [waiting, ended] {
        store
            .append(
                &trip_id.stream_id(),
                ExpectedVersion::NoStream,
                trip_events(None, create(trip_id)),
            )
            .await
            .expect("create");
    }
    let (version, state) = load(store.as_ref(), ended).await;
    let failed = TripCommand::FailRoute {
        generation: state.as_ref().map_or(0, |t| t.generation),
        reason: "the link is gone".into(),
    };
    store
        .append(
            &ended.stream_id(),
            ExpectedVersion::Exact(version),
            trip_events(state.as_ref(), failed),
        )
        .await
        .expect("fail the route");
    // Other checks share the database: read them all.
    let listed = |since| {
        let store = Arc::clone(&store);
        async move {
            store
                .stale_open_work(since, 100_000)
                .await
                .expect("the sweeper's query")
        }
    };
    let now = chrono::Utc::now();
    let quiet = listed(now + chrono::Duration::seconds(5)).await;
    assert!(
        quiet.contains(&waiting),
        "its work is open and quiet since: {quiet:?}"
    );
    assert!(!quiet.contains(&ended), "its work has ended");
    let busy = listed(now - chrono::Duration::hours(1)).await;
    assert!(!busy.contains(&waiting), "touched within the hour");
}

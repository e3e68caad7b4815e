//! The log itself: one winner among concurrent appends, idempotent retries, a subscriber that
//! never skips a late commit, checkpoints, and old shapes read in the new one.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use uuid::Uuid;

use crate::{Cursor, ExpectedVersion, RecordedEvent, Store, StoreError};

use super::*;

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

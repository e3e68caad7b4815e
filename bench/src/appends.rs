//! `appends`: durable single-event appends per second through the event store, with N
//! concurrent clients, on PostgreSQL (`DATABASE_URL`) or the embedded SQLite.

use std::sync::Arc;
use std::time::{Duration, Instant};

use etappe_events::{EventMetadata, ExpectedVersion, NewEvent};
use serde_json::json;

use crate::common::{open_store, report};
use etappe_tests::temp_dir;

/// Appends single events from `clients` tasks for `seconds`, then prints the rate and latencies.
pub async fn run(clients: usize, seconds: u64, sqlite: bool) -> anyhow::Result<()> {
    let dir = temp_dir();
    let (store, backend) = open_store(sqlite, &dir).await?;
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut errors = 0;
                while Instant::now() < deadline {
                    let event = NewEvent {
                        event_id: uuid::Uuid::now_v7(),
                        event_type: "BenchmarkRecorded".into(),
                        schema_version: 1,
                        data: json!({"payload": "x".repeat(160)}),
                        metadata: EventMetadata {
                            actor: Some("bench".into()),
                            ..Default::default()
                        },
                    };
                    let stream = format!("bench-{}", uuid::Uuid::now_v7());
                    let t = Instant::now();
                    match store
                        .append(&stream, ExpectedVersion::NoStream, vec![event])
                        .await
                    {
                        Ok(_) => latencies.push(t.elapsed()),
                        Err(_) => errors += 1,
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let (l, e) = task.await?;
        all.extend(l);
        errors += e;
    }
    report(
        &format!("appends on {backend}, {clients} client(s)"),
        all,
        started.elapsed(),
        errors,
    );
    Ok(())
}

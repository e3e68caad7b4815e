//! The store conformance suite on PostgreSQL, when `DATABASE_URL` names one. Without it the
//! tests say why they skip; with `ETAPPE_REQUIRE_SERVICES=1` (CI) a missing server fails them.

use std::sync::Arc;

use etappe_events::{PostgresStore, Store, conformance};

async fn store() -> Option<Arc<dyn Store>> {
    let url = match std::env::var("DATABASE_URL") {
        Ok(url) if url.starts_with("postgres") => url,
        _ => {
            assert!(
                std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "ETAPPE_REQUIRE_SERVICES=1 but DATABASE_URL does not name a PostgreSQL database"
            );
            eprintln!(
                "skipped: set DATABASE_URL=postgres://… to run the PostgreSQL conformance suite"
            );
            return None;
        }
    };
    let store = PostgresStore::connect(&url, 40)
        .await
        .expect("connect to PostgreSQL");
    Some(Arc::new(store))
}

macro_rules! conformance_tests {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $name() {
            let Some(store) = store().await else { return };
            conformance::$name(store).await;
        }
    )*};
}

conformance_tests!(
    concurrent_appends_have_exactly_one_winner,
    a_retried_append_is_idempotent,
    a_subscriber_never_skips_a_late_commit,
    checkpoints_round_trip,
    old_shapes_are_upcast_on_load,
    a_rebuilt_projection_equals_the_live_one,
    trip_lists_filter_and_paginate,
    an_owners_trips_are_listed_and_purged,
    a_gate_sees_the_decision_once_and_can_stop_it,
    trips_with_stale_open_work_are_found,
);

/// A lease whose holder stopped renewing it (a paused or hung leader) is taken over once it
/// expires, whatever the old holder's connection does; the old holder learns it on its next
/// renewal, and giving its handle back frees nothing of the new holder's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_its_holder_stopped_renewing_is_taken_over() {
    let Some(store) = store().await else { return };
    let name = format!("test-lease-{}", uuid::Uuid::now_v7());
    let first = store.try_lease(&name).await.expect("lease").expect("taken");
    assert!(
        store.try_lease(&name).await.expect("lease").is_none(),
        "held"
    );
    assert!(first.renew().await.expect("renew"), "its holder renews it");
    // The holder hangs: nobody renews, and the lease runs out (moved back, not waited for).
    let url = std::env::var("DATABASE_URL").expect("the URL");
    let pool = sqlx::PgPool::connect(&url).await.expect("a pool");
    sqlx::query("UPDATE leases SET expires_at = now() - interval '1 second' WHERE name = $1")
        .bind(&name)
        .execute(&pool)
        .await
        .expect("expire it");
    let second = store
        .try_lease(&name)
        .await
        .expect("lease")
        .expect("taken over once expired");
    assert!(
        !first.renew().await.expect("renew"),
        "the old holder learns it lost the lease"
    );
    drop(first);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        store.try_lease(&name).await.expect("lease").is_none(),
        "the old holder's release frees nothing of the new holder's"
    );
    assert!(second.renew().await.expect("renew"));
    drop(second);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        store.try_lease(&name).await.expect("lease").is_some(),
        "given back when dropped"
    );
}

/// A process that does not migrate (`ETAPPE_MIGRATE_ON_START=false`) refuses a database
/// behind its build, naming the command that fixes it, and starts once one process migrated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_does_not_migrate_refuses_a_schema_behind_it() {
    let Some(_store) = store().await else { return };
    let url = std::env::var("DATABASE_URL").expect("the URL");
    let admin = sqlx::PgPool::connect(&url).await.expect("a pool");
    let name = format!("etappe_migrate_{}", uuid::Uuid::now_v7().simple());
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&admin)
        .await
        .expect("a fresh database");
    let fresh = match url.rsplit_once('/') {
        Some((server, _)) => format!("{server}/{name}"),
        None => panic!("a database URL ends in its name: {url}"),
    };
    let refused = PostgresStore::connect_migrating(&fresh, 2, false)
        .await
        .expect_err("an empty schema is refused");
    assert!(
        refused.to_string().contains("etappe migrate"),
        "names the fix: {refused}"
    );
    let migrated = PostgresStore::connect(&fresh, 2)
        .await
        .expect("one process migrates");
    drop(migrated);
    PostgresStore::connect_migrating(&fresh, 2, false)
        .await
        .expect("then the others start without migrating");
    admin.close().await;
    let admin = sqlx::PgPool::connect(&url).await.expect("a pool");
    let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
    )))
    .execute(&admin)
    .await;
}

/// A projection rebuild is online: reads go on while it runs (it holds one trip's stream at a
/// time, never the read model; an append to that trip waits a moment), and every trip is
/// there after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rebuild_runs_online_while_reads_and_appends_go_on() {
    use etappe_domain::ids::{TripId, UserId};
    use etappe_domain::trip::settings::SettingsPatch;
    use etappe_domain::trip::source::SourceUrl;
    use etappe_domain::trip::{TripCommand, decide};
    use etappe_events::{EventMetadata, ExpectedVersion};
    let Some(store) = store().await else { return };
    let metadata = EventMetadata::default();
    let mut trips = Vec::new();
    for _ in 0..400 {
        let trip_id = TripId::new();
        let events = decide(
            None,
            TripCommand::Create {
                trip_id,
                owner_id: UserId::new(),
                source: SourceUrl::parse("https://example.org/r.gpx", &[]).expect("url"),
                settings: SettingsPatch::default(),
            },
        )
        .expect("create");
        store
            .append(
                &trip_id.stream_id(),
                ExpectedVersion::NoStream,
                events.iter().map(|e| e.to_new_event(&metadata)).collect(),
            )
            .await
            .expect("append");
        trips.push(trip_id);
    }
    let rebuilding = {
        let store = Arc::clone(&store);
        tokio::spawn(async move { store.rebuild_projections().await })
    };
    let mut slowest = std::time::Duration::ZERO;
    let mut reads = 0;
    while !rebuilding.is_finished() {
        let started = std::time::Instant::now();
        let view = store
            .trip_view(trips[reads % trips.len()])
            .await
            .expect("a read during the rebuild");
        assert!(view.is_some());
        slowest = slowest.max(started.elapsed());
        reads += 1;
    }
    let report = rebuilding.await.expect("join").expect("rebuilt");
    eprintln!(
        "rebuild of {} trips / {} events: {reads} reads meanwhile, the slowest {:?}",
        report.trips, report.events, slowest
    );
    assert!(report.trips >= 400, "{report:?}");
    assert!(
        slowest < std::time::Duration::from_secs(1),
        "reads waited {slowest:?} during the rebuild"
    );
    for trip_id in trips.iter().take(20) {
        assert!(store.trip_view(*trip_id).await.expect("read").is_some());
    }
}

//! The store conformance suite on the embedded SQLite backend (always runs).

use std::sync::Arc;

use etappe_events::{SqliteStore, Store, conformance};

async fn store() -> (tempdir::Dir, Arc<dyn Store>) {
    let dir = tempdir::Dir::new();
    let store = SqliteStore::open(&dir.path().join("etappe.db"))
        .await
        .expect("open sqlite");
    (dir, Arc::new(store))
}

mod tempdir {
    //! A directory removed when dropped (no extra crate for one helper).
    use std::path::{Path, PathBuf};

    pub(crate) struct Dir(PathBuf);

    impl Dir {
        pub(crate) fn new() -> Self {
            let path = std::env::temp_dir().join(format!("etappe-test-{}", uuid::Uuid::now_v7()));
            std::fs::create_dir_all(&path).expect("temp dir");
            Self(path)
        }

        pub(crate) fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

macro_rules! conformance_tests {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $name() {
            let (_dir, store) = store().await;
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

mod spans {
    //! A store call shows in a trace as its own span, named and attributed as OpenTelemetry's
    //! database conventions say, so an operator sees where a command's time went.
    use std::sync::{Arc, Mutex};

    use etappe_events::{EventMetadata, EventStore, ExpectedVersion, NewEvent, SqliteStore};
    use tracing::field::{Field, Visit};
    use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

    /// A span as opened: its name and its `key=value` fields.
    type Opened = (String, Vec<String>);

    /// The spans opened.
    #[derive(Clone, Default)]
    struct Recorded(Arc<Mutex<Vec<Opened>>>);

    struct Fields(Vec<String>);

    impl Visit for Fields {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            self.0.push(format!("{}={value:?}", field.name()));
        }
        fn record_str(&mut self, field: &Field, value: &str) {
            self.0.push(format!("{}={value}", field.name()));
        }
    }

    impl<S: tracing::Subscriber> Layer<S> for Recorded {
        fn on_new_span(
            &self,
            attrs: &tracing::span::Attributes<'_>,
            _id: &tracing::span::Id,
            _ctx: Context<'_, S>,
        ) {
            let mut fields = Fields(Vec::new());
            attrs.record(&mut fields);
            if let Ok(mut all) = self.0.lock() {
                all.push((attrs.metadata().name().to_owned(), fields.0));
            }
        }
    }

    #[tokio::test]
    async fn an_append_is_a_store_span_with_the_database_conventions() {
        let recorded = Recorded::default();
        let subscriber = tracing_subscriber::registry().with(recorded.clone());
        let _guard = tracing::subscriber::set_default(subscriber);
        // Other tests of this binary, on other threads, may have registered the store's span
        // callsites while no subscriber of theirs wanted them, and the callsite caches that
        // "never". A rebuild asks every live subscriber again, this one included.
        tracing::callsite::rebuild_interest_cache();
        let dir = super::tempdir::Dir::new();
        let store = SqliteStore::open(&dir.path().join("etappe.db"))
            .await
            .expect("open sqlite");
        let event = NewEvent {
            event_id: uuid::Uuid::now_v7(),
            event_type: "noted".into(),
            schema_version: 1,
            data: serde_json::json!({"n": 1}),
            metadata: EventMetadata::default(),
        };
        store
            .append("spans-1", ExpectedVersion::NoStream, vec![event])
            .await
            .expect("append");
        let spans = recorded.0.lock().expect("spans").clone();
        let append = spans
            .iter()
            .find(|(name, fields)| {
                name == "store" && fields.iter().any(|f| f == "otel.name=append events")
            })
            .unwrap_or_else(|| panic!("no append span among {spans:?}"));
        for expected in [
            "db.system.name=sqlite",
            "db.operation.name=append",
            "db.collection.name=events",
            "etappe.stream=spans-1",
        ] {
            assert!(
                append.1.iter().any(|f| f == expected),
                "{expected} missing in {:?}",
                append.1
            );
        }
    }
}

//! The store conformance suite on the embedded SQLite backend (always runs).

use std::sync::Arc;

use etappe_store::{SqliteStore, Store, conformance};

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

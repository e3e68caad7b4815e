//! The read models: read-your-writes, a rebuild equal to the live one, owners' lists, an
//! account's purge, and the sweeper's query for stale open work.

use std::sync::Arc;

use chrono::NaiveDate;
use serde_json::json;

use crate::{ExpectedVersion, Store, StoreError};
use etappe_domain::ids::{TripId, UserId};
use etappe_domain::trip::TripCommand;
use etappe_domain::trip::settings::SettingsPatch;
use etappe_domain::trip::source::SourceUrl;

use super::*;

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

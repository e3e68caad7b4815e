//! What every service reads the same way: the scope a call needs, the trip it may touch (a
//! trip another user owns is answered like one that does not exist, so ids cannot be
//! probed), and a day's points. Shared by the services; it imports none of them.

use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use etappe_domain::trip::Trip;
use etappe_domain::trip::stage::Stage;
use etappe_events::Store;
use etappe_route::gpx::TrackPoint;
use etappe_track::stored::StoredTrack;

use super::AppError;
use crate::identity::{Principal, Scope};

/// Refuses a caller that does not hold `scope`.
pub(super) fn require(principal: &Principal, scope: Scope) -> Result<(), AppError> {
    if principal.has(scope) {
        Ok(())
    } else {
        Err(AppError::InsufficientScope(scope))
    }
}

/// The trip `trip_id` as its owner `principal` sees it; not found for anyone else.
pub(super) async fn owned_view(
    store: &dyn Store,
    principal: &Principal,
    trip_id: TripId,
) -> Result<TripView, AppError> {
    match store.trip_view(trip_id).await? {
        Some(view) if view.trip.owner_id == principal.user_id => Ok(view),
        _ => Err(AppError::NotFound),
    }
}

/// The stored track of the trip's current generation, with its breaks and waypoints; not
/// ready until the route job has written it.
pub(super) async fn stored_track(store: &dyn Store, trip: &Trip) -> Result<StoredTrack, AppError> {
    let route = trip.route.as_ref().ok_or(AppError::NotReady)?;
    let bytes = store
        .get_blob(&route.track_key)
        .await?
        .ok_or(AppError::NotReady)?;
    etappe_track::stored::decode_stored(&bytes)
        .ok_or_else(|| AppError::Internal("the stored track does not decode".into()))
}

/// A day's points: its slice of the track, with its detour's spur spliced in.
pub(super) async fn day_points(
    store: &dyn Store,
    stage: &Stage,
    track: &[TrackPoint],
) -> Result<Vec<TrackPoint>, AppError> {
    let stored = match &stage.detour {
        Some(detour) => store
            .get_blob(&detour.track_key)
            .await?
            .as_deref()
            .and_then(etappe_track::stored::decode),
        None => None,
    };
    Ok(etappe_track::detour::day_points(
        stage,
        track,
        stored.as_deref(),
    ))
}

//! The trip's public link: opened and revoked, both allowed on a locked trip (the link is not
//! part of the trip a caller edits, so neither moves the version).

use chrono::{DateTime, Utc};

use crate::trip::{Trip, TripError, TripEvent};

use super::guards::existing;

/// Opens a link with `code`; a trip already shared keeps its link.
pub(super) fn share(
    live: Option<&Trip>,
    code: String,
    at: DateTime<Utc>,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = existing(live)?;
    if trip.share.is_some() {
        return Ok(vec![]);
    }
    Ok(vec![TripEvent::TripShared { code, at }])
}

/// Revokes the link; nothing happens when there is none.
pub(super) fn unshare(live: Option<&Trip>) -> Result<Vec<TripEvent>, TripError> {
    let trip = existing(live)?;
    Ok(if trip.share.is_some() {
        vec![TripEvent::TripUnshared]
    } else {
        vec![]
    })
}

//! The trip's public link in the state.

use chrono::{DateTime, Utc};

use crate::trip::{ShareLink, Trip};

/// A link was opened with `code` at `at`.
pub(super) fn shared(trip: &mut Trip, code: &str, at: DateTime<Utc>) {
    trip.share = Some(ShareLink {
        code: code.to_owned(),
        created_at: at,
    });
}

/// The link was revoked.
pub(super) fn unshared(trip: &mut Trip) {
    trip.share = None;
}

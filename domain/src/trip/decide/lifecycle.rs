//! A trip's life as a whole: it is created, deleted, or restored to what it was at an earlier
//! version. (A copy of another trip is born in [`crate::trip::duplicate`].)

use chrono::NaiveDate;

use crate::ids::{TripId, UserId};
use crate::trip::settings::{SettingsPatch, TripSettings};
use crate::trip::source::SourceUrl;
use crate::trip::stage::ANALYSIS_CATEGORIES;
use crate::trip::{FieldError, Trip, TripError, TripEvent};

use super::guards::{existing, not_yet_created, open_at_version};

/// A new trip from its source and the settings given over the defaults; its route is asked
/// for at once (generation 1).
pub(super) fn create(
    state: Option<&Trip>,
    trip_id: TripId,
    owner_id: UserId,
    source: SourceUrl,
    settings: &SettingsPatch,
) -> Result<Vec<TripEvent>, TripError> {
    not_yet_created(state)?;
    let settings = settings.apply_to(&TripSettings::default());
    let errors = settings.cross_field_errors();
    if !errors.is_empty() {
        return Err(TripError::Invalid(errors));
    }
    Ok(vec![
        TripEvent::TripCreated {
            trip_id,
            owner_id,
            source,
            settings,
            version: 1,
        },
        TripEvent::RouteRequested { generation: 1 },
    ])
}

/// Deleting is allowed on a locked trip too.
pub(super) fn delete(live: Option<&Trip>) -> Result<Vec<TripEvent>, TripError> {
    existing(live)?;
    Ok(vec![TripEvent::TripDeleted])
}

/// The trip made what it was at `past`'s version, under a new version and a new pacing
/// generation (late results of the current one are dropped), its analysis asked again.
/// Restoring a version not older than the current one changes nothing.
pub(super) fn restore(
    live: Option<&Trip>,
    past: &Trip,
    expected_version: u64,
    today: NaiveDate,
) -> Result<Vec<TripEvent>, TripError> {
    let trip = open_at_version(live, expected_version, today)?;
    if past.version >= trip.version {
        return Ok(vec![]);
    }
    if !past.has_days() {
        return Err(TripError::Invalid(vec![FieldError::new(
            "version",
            format!(
                "version {} has no days to restore (they were still being computed); pick a version that has days",
                past.version
            ),
        )]));
    }
    let generation = trip.generation + 1;
    Ok(vec![
        TripEvent::TripRestored {
            from_version: past.version,
            source: past.source.clone(),
            settings: past.settings.clone(),
            route: past.route.clone(),
            stages: past.stages.clone(),
            generation,
            version: trip.version + 1,
            because: None,
        },
        TripEvent::AnalysisRequested {
            generation,
            categories: ANALYSIS_CATEGORIES.to_vec(),
        },
    ])
}

//! The trip aggregate: commands are judged against the trip's history (`decide`), and the
//! history is folded into the trip's current state (`evolve`). Both are pure functions; the
//! application services load, decide and append, and the tests run without any I/O.
//!
//! Two versions exist. The event store's stream version orders every event of the stream.
//! The trip's `version` published to clients counts *structural* changes only: creation,
//! re-pacing, stage edits, and settings changes that recompute something. Enrichments landing
//! from workers do not move it, so an agent's edit is not refused because a forecast arrived.

mod events;
pub mod input;
pub mod settings;
pub mod source;

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

pub use self::events::{EVENT_TYPES, TripEvent, TripEventError};
pub use self::input::{FieldError, InputError};
use self::settings::{Invalidation, SettingsPatch, TripSettings};
use self::source::SourceUrl;
use crate::ids::{TripId, UserId};

/// The user-facing groups of computations, each with one status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Route,
    PointsOfInterest,
    Accommodations,
    TerrainSecurity,
    Weather,
    Context,
}

impl Category {
    /// Every category, in publication order.
    pub const ALL: [Category; 6] = [
        Self::Route,
        Self::PointsOfInterest,
        Self::Accommodations,
        Self::TerrainSecurity,
        Self::Weather,
        Self::Context,
    ];
}

/// Where a category's computation stands. Derived from events only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComputationStatus {
    Pending,
    Running,
    Done,
    Failed,
    Superseded,
}

/// The current state of a trip, folded from its events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trip {
    pub id: TripId,
    pub owner_id: UserId,
    pub source: SourceUrl,
    pub settings: TripSettings,
    /// The structural version (see the module documentation).
    pub version: u64,
    /// The pacing generation: a re-pacing starts a new one; results of older ones are dropped.
    pub generation: u64,
    pub computations: BTreeMap<Category, ComputationStatus>,
    pub deleted: bool,
}

impl Trip {
    /// A trip whose start date is today or earlier (UTC) is locked: no structural edit, no
    /// analysis. Deleting and sharing stay allowed.
    pub fn is_locked(&self, today: NaiveDate) -> bool {
        self.settings.start_date.is_some_and(|start| start <= today)
    }
}

/// What a caller asks of a trip.
#[derive(Clone, Debug, PartialEq)]
pub enum TripCommand {
    Create {
        trip_id: TripId,
        owner_id: UserId,
        source: SourceUrl,
        settings: SettingsPatch,
    },
    UpdateSettings {
        patch: SettingsPatch,
        expected_version: u64,
        today: NaiveDate,
    },
    Delete,
}

/// Why a command was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TripError {
    #[error("trip not found")]
    NotFound,
    #[error("the trip already exists")]
    AlreadyExists,
    #[error("this trip is locked: its start date is today or in the past")]
    Locked,
    #[error("the trip has moved on: you edited version {expected}, the current one is {current}")]
    StaleVersion { expected: u64, current: u64 },
    #[error("invalid input")]
    Invalid(Vec<FieldError>),
}

/// Judges a command against the current state and answers the events it causes.
pub fn decide(state: Option<&Trip>, command: TripCommand) -> Result<Vec<TripEvent>, TripError> {
    let live = state.filter(|t| !t.deleted);
    match command {
        TripCommand::Create {
            trip_id,
            owner_id,
            source,
            settings,
        } => {
            if state.is_some() {
                return Err(TripError::AlreadyExists);
            }
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
        TripCommand::UpdateSettings {
            patch,
            expected_version,
            today,
        } => {
            let trip = live.ok_or(TripError::NotFound)?;
            // Guard order: lock, then version. The lock judges the state *before* the edit,
            // so moving the start date into the future cannot unlock the trip being edited.
            if trip.is_locked(today) {
                return Err(TripError::Locked);
            }
            if expected_version != trip.version {
                return Err(TripError::StaleVersion {
                    expected: expected_version,
                    current: trip.version,
                });
            }
            let after = patch.apply_to(&trip.settings);
            let errors = after.cross_field_errors();
            if !errors.is_empty() {
                return Err(TripError::Invalid(errors));
            }
            let changed = trip.settings.changed_fields(&after);
            if changed.is_empty() {
                return Ok(vec![]);
            }
            let invalidation = Invalidation::between(&trip.settings, &after);
            let version = if invalidation.is_empty() {
                trip.version
            } else {
                trip.version + 1
            };
            let mut events = vec![TripEvent::TripSettingsUpdated {
                settings: after,
                changed,
                invalidated: invalidation.categories.iter().copied().collect(),
                version,
            }];
            if invalidation.repace {
                events.push(TripEvent::RouteRequested {
                    generation: trip.generation + 1,
                });
            }
            Ok(events)
        }
        TripCommand::Delete => {
            live.ok_or(TripError::NotFound)?;
            Ok(vec![TripEvent::TripDeleted])
        }
    }
}

/// Folds one event into the state. Never fails: an event is a fact already accepted.
pub fn evolve(state: Option<Trip>, event: &TripEvent) -> Option<Trip> {
    match (state, event) {
        (
            None,
            TripEvent::TripCreated {
                trip_id,
                owner_id,
                source,
                settings,
                version,
            },
        ) => Some(Trip {
            id: *trip_id,
            owner_id: *owner_id,
            source: source.clone(),
            settings: settings.clone(),
            version: *version,
            generation: 0,
            computations: Category::ALL
                .into_iter()
                .map(|c| (c, ComputationStatus::Pending))
                .collect(),
            deleted: false,
        }),
        (
            Some(mut trip),
            TripEvent::TripSettingsUpdated {
                settings,
                invalidated,
                version,
                ..
            },
        ) => {
            trip.settings = settings.clone();
            trip.version = *version;
            for category in invalidated {
                trip.computations
                    .insert(*category, ComputationStatus::Pending);
            }
            Some(trip)
        }
        (Some(mut trip), TripEvent::RouteRequested { generation }) => {
            trip.generation = *generation;
            Some(trip)
        }
        (Some(mut trip), TripEvent::TripDeleted) => {
            trip.deleted = true;
            Some(trip)
        }
        (state, _) => state,
    }
}

/// Folds a whole history.
pub fn fold<'a>(events: impl IntoIterator<Item = &'a TripEvent>) -> Option<Trip> {
    events.into_iter().fold(None, evolve)
}

#[cfg(test)]
mod tests;

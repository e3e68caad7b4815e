//! The trip aggregate: commands are judged against the trip's history (`decide`), and the
//! history is folded into the trip's current state (`evolve`). Both are pure functions; the
//! application services load, decide and append, and the tests run without any I/O.
//!
//! Two versions exist. The event store's stream version orders every event of the stream.
//! The trip's `version` published to clients (the ETag, MCP's `version`) moves with every
//! change a caller makes to what it edits: creation, settings (a title too), stage edits, and
//! the days a route job cuts. Enrichments landing from workers (alerts, accommodations found,
//! detours asked with `add_waypoint`) do not move it, so an agent's edit is not refused
//! because a forecast arrived; sharing does not either (the link is not part of the trip a
//! caller edits).

pub mod duplicate;
pub mod edits;
mod events;
pub mod input;
pub mod settings;
pub mod source;
pub mod stage;

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

pub use self::edits::{Boundary, LabelChange, RouteGeometry, RouteSnapshot, StageEdit};
pub use self::events::{EVENT_TYPES, StageAccommodations, TripEvent, TripEventError};
pub use self::input::{FieldError, InputError};
use self::settings::{Invalidation, SettingsPatch, TripSettings};
use self::source::SourceUrl;
use self::stage::{
    ANALYSIS_CATEGORIES, DETOUR_INVALIDATES, RouteSummary, Stage, StageAlerts, Unavailable,
};
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
    /// Why a category could not be computed, for those that failed.
    #[serde(default)]
    pub unavailable: BTreeMap<Category, String>,
    /// The days; empty until the route job of the current generation has run.
    #[serde(default)]
    pub stages: Vec<Stage>,
    #[serde(default)]
    pub route: Option<RouteSummary>,
    /// The active public link, if any.
    #[serde(default)]
    pub share: Option<ShareLink>,
    pub deleted: bool,
}

/// A trip's public link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShareLink {
    pub code: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl Trip {
    /// A trip whose start date is today or earlier (UTC) is locked: no structural edit, no
    /// analysis. Deleting and sharing stay allowed.
    pub fn is_locked(&self, today: NaiveDate) -> bool {
        self.settings.start_date.is_some_and(|start| start <= today)
    }

    /// True while the days are still to come: they do not exist yet and the route has not
    /// failed. A failed route is an answer too, so an agent's poll ends on it.
    pub fn is_partial(&self) -> bool {
        !self.has_days() && self.status(Category::Route) != ComputationStatus::Failed
    }

    /// Whether the days exist (what work on the days needs).
    pub fn has_days(&self) -> bool {
        !self.stages.is_empty()
    }

    /// Whether the route of the current generation failed for good.
    pub fn route_failed(&self) -> bool {
        self.status(Category::Route) == ComputationStatus::Failed
    }

    fn status(&self, category: Category) -> ComputationStatus {
        self.computations
            .get(&category)
            .copied()
            .unwrap_or(ComputationStatus::Pending)
    }

    /// Whether any analysis category is being computed right now.
    pub fn analysis_running(&self) -> bool {
        ANALYSIS_CATEGORIES
            .iter()
            .any(|c| self.status(*c) == ComputationStatus::Running)
    }

    fn set_status(
        &mut self,
        categories: impl IntoIterator<Item = Category>,
        status: ComputationStatus,
    ) {
        for category in categories {
            self.computations.insert(category, status);
            if status != ComputationStatus::Failed {
                self.unavailable.remove(&category);
            }
        }
    }
}

/// What a caller (or a worker) asks of a trip.
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
    /// Open a public link with this (random, service-chosen) code; a trip already shared keeps
    /// its link. Allowed when locked.
    Share {
        code: String,
        at: chrono::DateTime<chrono::Utc>,
    },
    /// Revoke the public link (nothing happens when there is none). Allowed when locked.
    Unshare,
    /// Re-run the analysis of the current days.
    RequestAnalysis {
        today: NaiveDate,
    },
    /// Look for places to sleep around the days' ends (all, or one).
    RequestAccommodationScan {
        radius_km: f64,
        stage_id: Option<uuid::Uuid>,
        today: NaiveDate,
    },
    /// A worker's scan results.
    RecordAccommodations {
        generation: u64,
        stages: Vec<StageAccommodations>,
    },
    /// A worker could not scan: the category is failed, with the reason.
    FailAccommodations {
        generation: u64,
        reason: String,
    },
    /// Re-route a day through a waypoint (not structural: no version, no If-Match).
    RequestWaypoint {
        stage_id: uuid::Uuid,
        waypoint: stage::Point,
        today: NaiveDate,
    },
    /// A worker's re-routed day.
    RecordDetour {
        generation: u64,
        stage_id: uuid::Uuid,
        detour: stage::Detour,
        distance_km: f64,
        ascent_m: f64,
        descent_m: f64,
    },
    /// A worker starts the route job of `generation`.
    StartRoute {
        generation: u64,
        job_id: uuid::Uuid,
    },
    /// A worker's route result.
    RecordRoute {
        generation: u64,
        route: RouteSummary,
        stages: Vec<Stage>,
    },
    /// A worker's terminal route failure.
    FailRoute {
        generation: u64,
        reason: String,
    },
    /// A worker starts analysing `generation`.
    StartAnalysis {
        generation: u64,
        categories: Vec<Category>,
    },
    /// A worker's analysis result.
    RecordAnalysis {
        generation: u64,
        stages: Vec<StageAlerts>,
        done: Vec<Category>,
        unavailable: Vec<Unavailable>,
    },
    /// The fleet gave a job up (retries exhausted, a delivery limit met, a payload no worker
    /// could finish): the work it was doing ends as failed, with a reason a person can act on.
    GiveUp {
        generation: u64,
        work: GivenUpWork,
        reason: String,
    },
    /// One of the day edits, judged against the caller's `expected_version` over the route of
    /// `generation` (a re-pacing meanwhile supersedes it).
    EditStages {
        edit: StageEdit,
        expected_version: u64,
        generation: u64,
        today: NaiveDate,
        route: RouteSnapshot,
    },
    /// Create this (new) trip as a copy of `original` (see [`duplicate`]); `renamed_files`
    /// maps the original's file keys to the keys the service copied them to.
    Duplicate {
        trip_id: TripId,
        owner_id: UserId,
        original: Box<Trip>,
        today: NaiveDate,
        renamed_files: BTreeMap<String, String>,
    },
}

/// The work a given-up job was doing, which decides what the trip records.
#[derive(Clone, Debug, PartialEq)]
pub enum GivenUpWork {
    Route,
    Analysis(Vec<Category>),
    Accommodations,
    Detour { stage_id: uuid::Uuid },
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
    /// A worker's result for a generation that a re-pacing has replaced: dropped, not written.
    #[error("generation {generation} was superseded by generation {current}")]
    Superseded { generation: u64, current: u64 },
    #[error("the trip has no days yet: wait until partial is false")]
    NoStages,
    #[error("an analysis is already in progress")]
    AnalysisRunning,
    #[error("no day with this id in this trip")]
    StageNotFound,
}

/// The radius of an accommodation scan around a day's end, km (inclusive).
pub const SCAN_RADIUS_KM: (f64, f64) = (1.0, 15.0);

fn current_generation(trip: &Trip, generation: u64) -> Result<(), TripError> {
    if generation == trip.generation {
        Ok(())
    } else {
        Err(TripError::Superseded {
            generation,
            current: trip.generation,
        })
    }
}

/// The guard of every command that sets work on the days (analysis, scans, detours): the
/// trip exists, is not locked (judged on the state before the command), and has its days.
fn days_open_to_work(live: Option<&Trip>, today: NaiveDate) -> Result<&Trip, TripError> {
    let trip = live.ok_or(TripError::NotFound)?;
    if trip.is_locked(today) {
        return Err(TripError::Locked);
    }
    if !trip.has_days() {
        return Err(TripError::NoStages);
    }
    Ok(trip)
}

/// Judges a command against the current state and answers the events it causes: the one
/// decision every writer goes through (settings, day edits, duplication, worker results).
pub fn decide(state: Option<&Trip>, command: TripCommand) -> Result<Vec<TripEvent>, TripError> {
    let live = state.filter(|t| !t.deleted);
    match command {
        TripCommand::EditStages {
            edit,
            expected_version,
            generation,
            today,
            route,
        } => {
            if let Some(trip) = live
                && trip.generation != generation
            {
                return Err(TripError::Superseded {
                    generation,
                    current: trip.generation,
                });
            }
            edits::decide_stage_edit(state, edit, expected_version, today, route.geometry())
        }
        TripCommand::Duplicate {
            trip_id,
            owner_id,
            original,
            today,
            renamed_files,
        } => duplicate::decide_duplicate(state, trip_id, owner_id, &original, today)
            .map(|events| duplicate::own_files(events, &renamed_files)),
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
            // Every change a caller makes moves the version, recomputing or not: a title
            // edit made under a stale version must be refused, not silently lost.
            let version = trip.version + 1;
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
            } else if !invalidation.categories.is_empty() && trip.has_days() {
                events.push(TripEvent::AnalysisRequested {
                    generation: trip.generation,
                    categories: invalidation.categories.iter().copied().collect(),
                });
            }
            Ok(events)
        }
        TripCommand::Delete => {
            live.ok_or(TripError::NotFound)?;
            Ok(vec![TripEvent::TripDeleted])
        }
        TripCommand::Share { code, at } => {
            let trip = live.ok_or(TripError::NotFound)?;
            if trip.share.is_some() {
                return Ok(vec![]);
            }
            Ok(vec![TripEvent::TripShared { code, at }])
        }
        TripCommand::Unshare => {
            let trip = live.ok_or(TripError::NotFound)?;
            Ok(if trip.share.is_some() {
                vec![TripEvent::TripUnshared]
            } else {
                vec![]
            })
        }
        TripCommand::RequestAnalysis { today } => {
            // A route that failed for good is asked again (a source back online, a file
            // fixed): the trip is retried without being recreated.
            if let Some(trip) = live
                && trip.route_failed()
                && !trip.has_days()
            {
                if trip.is_locked(today) {
                    return Err(TripError::Locked);
                }
                return Ok(vec![TripEvent::RouteRequested {
                    generation: trip.generation + 1,
                }]);
            }
            let trip = days_open_to_work(live, today)?;
            if trip.analysis_running() {
                return Err(TripError::AnalysisRunning);
            }
            Ok(vec![TripEvent::AnalysisRequested {
                generation: trip.generation,
                categories: ANALYSIS_CATEGORIES.to_vec(),
            }])
        }
        TripCommand::RequestAccommodationScan {
            radius_km,
            stage_id,
            today,
        } => {
            let trip = days_open_to_work(live, today)?;
            if let Some(id) = stage_id
                && !trip.stages.iter().any(|s| s.id == id)
            {
                return Err(TripError::StageNotFound);
            }
            if !(SCAN_RADIUS_KM.0..=SCAN_RADIUS_KM.1).contains(&radius_km) {
                return Err(TripError::Invalid(vec![FieldError::new(
                    "radiusKm",
                    format!(
                        "radiusKm must be a number from {} to {} (km around each day's end)",
                        SCAN_RADIUS_KM.0, SCAN_RADIUS_KM.1
                    ),
                )]));
            }
            Ok(vec![TripEvent::AccommodationScanRequested {
                generation: trip.generation,
                radius_km,
                stage_id,
            }])
        }
        TripCommand::RecordAccommodations { generation, stages } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            Ok(vec![TripEvent::AccommodationsFound { generation, stages }])
        }
        TripCommand::FailAccommodations { generation, reason } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            Ok(vec![TripEvent::AnalysisCompleted {
                generation,
                stages: Vec::new(),
                done: Vec::new(),
                unavailable: vec![Unavailable {
                    category: Category::Accommodations,
                    reason,
                }],
            }])
        }
        TripCommand::RequestWaypoint {
            stage_id,
            waypoint,
            today,
        } => {
            let trip = days_open_to_work(live, today)?;
            let stage = trip
                .stages
                .iter()
                .find(|s| s.id == stage_id)
                .ok_or(TripError::StageNotFound)?;
            if stage.is_rest_day {
                return Err(TripError::Invalid(vec![FieldError::new(
                    "stageId",
                    "a rest day has no route to re-route; name a riding day",
                )]));
            }
            if !edits::input::coordinates_valid(waypoint.lat, waypoint.lon) {
                return Err(TripError::Invalid(vec![FieldError::new(
                    "waypointLat",
                    "waypointLat must be -90…90 and waypointLon -180…180",
                )]));
            }
            Ok(vec![TripEvent::WaypointRequested {
                generation: trip.generation,
                stage_id,
                waypoint,
            }])
        }
        TripCommand::RecordDetour {
            generation,
            stage_id,
            detour,
            distance_km,
            ascent_m,
            descent_m,
        } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            if !trip.stages.iter().any(|s| s.id == stage_id) {
                // The day was deleted or merged meanwhile: the detour has nowhere to go.
                return Err(TripError::StageNotFound);
            }
            // The day's roads changed: what is read off them is asked again. The version does
            // not move (a detour is not a structural edit).
            Ok(vec![
                TripEvent::StageRerouted {
                    generation,
                    stage_id,
                    detour,
                    distance_km,
                    ascent_m,
                    descent_m,
                },
                TripEvent::AnalysisRequested {
                    generation,
                    categories: DETOUR_INVALIDATES.to_vec(),
                },
            ])
        }
        TripCommand::GiveUp {
            generation,
            work,
            reason,
        } => give_up(live.ok_or(TripError::NotFound)?, generation, work, reason),
        TripCommand::StartRoute { generation, job_id } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            // A redelivered job whose route is already done (or running) writes nothing more.
            if trip.status(Category::Route) != ComputationStatus::Pending {
                return Ok(vec![]);
            }
            Ok(vec![TripEvent::RouteComputationStarted {
                generation,
                job_id,
            }])
        }
        TripCommand::RecordRoute {
            generation,
            route,
            stages,
        } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            if trip.status(Category::Route) == ComputationStatus::Done {
                return Ok(vec![]);
            }
            Ok(vec![TripEvent::RouteComputed {
                generation,
                route,
                stages,
                version: trip.version + 1,
            }])
        }
        TripCommand::FailRoute { generation, reason } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            if matches!(
                trip.status(Category::Route),
                ComputationStatus::Done | ComputationStatus::Failed
            ) {
                return Ok(vec![]);
            }
            Ok(vec![TripEvent::RouteFailed { generation, reason }])
        }
        TripCommand::StartAnalysis {
            generation,
            categories,
        } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            let pending: Vec<Category> = categories
                .into_iter()
                .filter(|c| trip.status(*c) == ComputationStatus::Pending)
                .collect();
            if pending.is_empty() || !trip.has_days() {
                return Ok(vec![]);
            }
            Ok(vec![TripEvent::AnalysisStarted {
                generation,
                categories: pending,
            }])
        }
        TripCommand::RecordAnalysis {
            generation,
            stages,
            done,
            unavailable,
        } => {
            let trip = live.ok_or(TripError::NotFound)?;
            current_generation(trip, generation)?;
            if !trip.has_days() {
                return Err(TripError::NoStages);
            }
            Ok(vec![TripEvent::AnalysisCompleted {
                generation,
                stages,
                done,
                unavailable,
            }])
        }
    }
}

/// The events that record a given-up job: the work it did ends as failed with `reason`.
fn give_up(
    trip: &Trip,
    generation: u64,
    work: GivenUpWork,
    reason: String,
) -> Result<Vec<TripEvent>, TripError> {
    current_generation(trip, generation)?;
    let unavailable = |categories: Vec<Category>| {
        let still_open: Vec<Unavailable> = categories
            .into_iter()
            .filter(|c| {
                matches!(
                    trip.status(*c),
                    ComputationStatus::Pending | ComputationStatus::Running
                )
            })
            .map(|category| Unavailable {
                category,
                reason: reason.clone(),
            })
            .collect();
        if still_open.is_empty() || !trip.has_days() {
            return vec![];
        }
        vec![TripEvent::AnalysisCompleted {
            generation,
            stages: Vec::new(),
            done: Vec::new(),
            unavailable: still_open,
        }]
    };
    Ok(match work {
        GivenUpWork::Route => {
            if matches!(
                trip.status(Category::Route),
                ComputationStatus::Done | ComputationStatus::Failed
            ) {
                vec![]
            } else {
                vec![TripEvent::RouteFailed { generation, reason }]
            }
        }
        GivenUpWork::Analysis(categories) => unavailable(categories),
        GivenUpWork::Accommodations => unavailable(vec![Category::Accommodations]),
        GivenUpWork::Detour { stage_id } => {
            if trip.stages.iter().any(|s| s.id == stage_id) {
                vec![TripEvent::DetourFailed {
                    generation,
                    stage_id,
                    reason,
                }]
            } else {
                vec![]
            }
        }
    })
}

/// Folds one event into the state. Never fails: an event is a fact already accepted.
pub fn evolve(state: Option<Trip>, event: &TripEvent) -> Option<Trip> {
    let created = |trip_id: &TripId,
                   owner_id: &UserId,
                   source: &SourceUrl,
                   settings: &TripSettings,
                   version: &u64| Trip {
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
        unavailable: BTreeMap::new(),
        stages: Vec::new(),
        route: None,
        share: None,
        deleted: false,
    };
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
        ) => Some(created(trip_id, owner_id, source, settings, version)),
        (
            None,
            TripEvent::TripDuplicated {
                trip_id,
                owner_id,
                source,
                settings,
                generation,
                route,
                stages,
                computations,
                unavailable,
                version,
                ..
            },
        ) => {
            let mut trip = created(trip_id, owner_id, source, settings, version);
            trip.generation = *generation;
            trip.computations.extend(computations.clone());
            trip.unavailable = unavailable.clone();
            trip.route = route.clone();
            trip.stages = stages.clone();
            Some(trip)
        }
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
            trip.set_status(invalidated.iter().copied(), ComputationStatus::Pending);
            Some(trip)
        }
        (Some(mut trip), TripEvent::RouteRequested { generation }) => {
            // A new generation: work still running for the old one is superseded; the days
            // of the old one are gone (a re-pacing mints new stage ids on purpose).
            trip.generation = *generation;
            for category in Category::ALL {
                let next = if trip.status(category) == ComputationStatus::Running {
                    ComputationStatus::Superseded
                } else {
                    ComputationStatus::Pending
                };
                trip.set_status([category], next);
            }
            trip.stages.clear();
            trip.route = None;
            Some(trip)
        }
        (Some(mut trip), TripEvent::RouteComputationStarted { generation, .. })
            if *generation == trip.generation =>
        {
            trip.set_status([Category::Route], ComputationStatus::Running);
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::RouteComputed {
                generation,
                route,
                stages,
                version,
            },
        ) if *generation == trip.generation => {
            if trip.settings.title.is_none() {
                trip.settings.title = route.title.clone();
            }
            trip.route = Some(route.clone());
            trip.stages = stages.clone();
            trip.version = *version;
            trip.set_status([Category::Route], ComputationStatus::Done);
            Some(trip)
        }
        (Some(mut trip), TripEvent::RouteFailed { generation, reason })
            if *generation == trip.generation =>
        {
            // Nothing after the route can run without it.
            trip.set_status(Category::ALL, ComputationStatus::Failed);
            for category in Category::ALL {
                trip.unavailable.insert(category, reason.clone());
            }
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::AnalysisRequested {
                generation,
                categories,
            },
        ) if *generation == trip.generation => {
            trip.set_status(categories.iter().copied(), ComputationStatus::Pending);
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::AnalysisStarted {
                generation,
                categories,
            },
        ) if *generation == trip.generation => {
            trip.set_status(categories.iter().copied(), ComputationStatus::Running);
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::AnalysisCompleted {
                generation,
                stages,
                done,
                unavailable,
            },
        ) if *generation == trip.generation => {
            for stage in &mut trip.stages {
                if let Some(result) = stages.iter().find(|s| s.stage_id == stage.id) {
                    stage.alerts = result.alerts.clone();
                }
            }
            trip.set_status(done.iter().copied(), ComputationStatus::Done);
            for item in unavailable {
                trip.set_status([item.category], ComputationStatus::Failed);
                trip.unavailable.insert(item.category, item.reason.clone());
            }
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::StagesEdited {
                stages,
                end_date,
                invalidated,
                version,
                ..
            },
        ) => {
            trip.stages = stages.clone();
            trip.settings.end_date = *end_date;
            trip.version = *version;
            trip.set_status(invalidated.iter().copied(), ComputationStatus::Pending);
            Some(trip)
        }
        (Some(mut trip), TripEvent::AccommodationScanRequested { generation, .. })
            if *generation == trip.generation =>
        {
            trip.set_status([Category::Accommodations], ComputationStatus::Pending);
            Some(trip)
        }
        (Some(mut trip), TripEvent::AccommodationsFound { generation, stages })
            if *generation == trip.generation =>
        {
            for stage in &mut trip.stages {
                if let Some(found) = stages.iter().find(|s| s.stage_id == stage.id) {
                    stage.accommodations = found.accommodations.clone();
                }
            }
            trip.set_status([Category::Accommodations], ComputationStatus::Done);
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::StageRerouted {
                generation,
                stage_id,
                detour,
                distance_km,
                ascent_m,
                descent_m,
            },
        ) if *generation == trip.generation => {
            if let Some(stage) = trip.stages.iter_mut().find(|s| s.id == *stage_id) {
                stage.detour = Some(detour.clone());
                stage.detour_failure = None;
                stage.distance_km = *distance_km;
                stage.ascent_m = *ascent_m;
                stage.descent_m = *descent_m;
            }
            Some(trip)
        }
        (
            Some(mut trip),
            TripEvent::DetourFailed {
                generation,
                stage_id,
                reason,
            },
        ) if *generation == trip.generation => {
            if let Some(stage) = trip.stages.iter_mut().find(|s| s.id == *stage_id) {
                stage.detour_failure = Some(reason.clone());
            }
            Some(trip)
        }
        (Some(mut trip), TripEvent::TripShared { code, at }) => {
            trip.share = Some(ShareLink {
                code: code.clone(),
                created_at: *at,
            });
            Some(trip)
        }
        (Some(mut trip), TripEvent::TripUnshared) => {
            trip.share = None;
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

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

mod decide;
pub mod duplicate;
pub mod edits;
mod events;
mod evolve;
pub mod input;
pub mod nights;
pub mod plan;
pub mod settings;
pub mod source;
pub mod stage;

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

pub use self::decide::decide;
pub use self::edits::{Boundary, LabelChange, RouteGeometry, RouteSnapshot, StageEdit};
pub use self::events::{StageAccommodations, TripEvent, TripEventError};
pub use self::evolve::{evolve, fold};
pub use self::input::{FieldError, InputError};
use self::settings::{SettingsPatch, TripSettings};
use self::source::SourceUrl;
use self::stage::{ANALYSIS_CATEGORIES, RouteSummary, Stage, StageAlerts, Unavailable};
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
    /// The version the last change of a caller (a person or an agent) left the trip at.
    /// Etappe's own work that moves the version on (the days a route job cuts) does not move
    /// it, so the version a caller holds stays good for its next edit until another caller
    /// changes the trip. Absent on states folded before it was kept: only the exact version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callers_version: Option<u64>,
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
    /// The days as they were before a change that routes or cuts them again, kept until the
    /// new days exist: a route that fails brings them back instead of leaving none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_reroute: Option<Box<KeptDays>>,
    /// True once a caller edited the days Etappe cut (a split, a moved end, a rest day…):
    /// cutting them again loses that work, so it asks first.
    #[serde(default)]
    pub days_edited: bool,
    /// Why the days shown are not the ones last asked for (a new plan that could not be
    /// routed), until the next change of a caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// The days of a trip as a change that routes them again found them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptDays {
    /// The version they were at.
    pub version: u64,
    pub source: SourceUrl,
    pub settings: TripSettings,
    pub route: Option<RouteSummary>,
    pub stages: Vec<Stage>,
    /// Whether a caller had edited them.
    #[serde(default)]
    pub days_edited: bool,
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

    /// The lock as a guard: the one rule every change of a caller passes, judged on the
    /// state *before* the change (so a command that moves the start date cannot unlock the
    /// trip it edits). `decide` runs it; a service runs it first too, before it reads the
    /// change's values or does any work for them.
    pub fn open_to_change(&self, today: NaiveDate) -> Result<(), TripError> {
        if self.is_locked(today) {
            Err(TripError::Locked)
        } else {
            Ok(())
        }
    }

    /// True when the days hold something a person made that cutting them again would lose:
    /// an edit of the days, a night they chose, a detour, a day's name, a rest day.
    pub fn days_hold_persons_work(&self) -> bool {
        self.days_edited
            || self.stages.iter().any(|s| {
                s.detour.is_some()
                    || s.waypoint_pending.is_some()
                    || s.label.is_some()
                    || s.is_rest_day
                    || s.accommodation
                        .as_ref()
                        .is_some_and(|a| a.chosen_by.unwrap_or_default() == nights::ChosenBy::Rider)
            })
    }

    /// The categories of the analysis whose work has not ended (waiting, or running — under a
    /// worker that may have died): what a job that must finish its work still owes.
    pub fn open_analysis(&self) -> Vec<Category> {
        ANALYSIS_CATEGORIES
            .into_iter()
            .filter(|c| {
                matches!(
                    self.status(*c),
                    ComputationStatus::Pending | ComputationStatus::Running
                )
            })
            .collect()
    }

    /// True while any work of the current version is still to come: the days do not exist
    /// yet, or a computation (analysis, places to sleep, weather…) waits or runs. An agent
    /// that stops polling at `partial: false` reads a finished trip: alerts, found places
    /// and nights in. A failed route is an answer too, so an agent's poll ends on it; a
    /// failed or superseded computation has ended (its reason is in `unavailable`).
    pub fn is_partial(&self) -> bool {
        if self.route_failed() {
            return false;
        }
        !self.has_days()
            || Category::ALL.into_iter().any(|c| {
                matches!(
                    self.status(c),
                    ComputationStatus::Pending | ComputationStatus::Running
                )
            })
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

    /// Whether a day that was beyond the forecast horizon when the weather was computed has
    /// come within it by `today` (while the weather is settled: done or failed), so its
    /// forecast can now be asked for.
    pub fn weather_due(&self, today: NaiveDate) -> bool {
        let settled = matches!(
            self.status(Category::Weather),
            ComputationStatus::Done | ComputationStatus::Failed
        );
        let last = today.checked_add_days(chrono::Days::new(stage::WEATHER_HORIZON_DAYS - 1));
        settled
            && self.stages.iter().any(|s| {
                s.weather.as_ref().is_some_and(|w| {
                    w.state == stage::WeatherState::BeyondHorizon
                        && w.date
                            .is_some_and(|d| d >= today && last.is_some_and(|last| d <= last))
                })
            })
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
        /// A planned trip's new plan (places, profile), resolved; `None` keeps it.
        plan: Option<plan::RoutePlan>,
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
    /// Etappe's sweeper: work of the current version that has not ended long after it was
    /// asked (its worker died, its job was lost) is asked again. Not a caller's change: no
    /// lock, no version.
    ResumeWork,
    /// Compute the weather again because a day came within the forecast horizon (asked on
    /// read; nothing happens unless [`Trip::weather_due`]).
    RefreshWeather {
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
        /// The day's figures on its new roads.
        measure: edits::Measure,
    },

    /// Make the trip what it was at an earlier version (`past`, folded from the log up to it):
    /// its source, settings, days and route come back under a new version and a new pacing
    /// generation (late results of the current one are dropped); the analysis runs again.
    Restore {
        past: Box<Trip>,
        expected_version: u64,
        today: NaiveDate,
    },
    /// Remove a day's detour: the day rides its own roads again, measured as `own` (not
    /// structural, like adding it).
    RemoveDetour {
        stage_id: uuid::Uuid,
        own: edits::Measure,
        today: NaiveDate,
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
    /// A command about a day's detour on a day that has none.
    #[error("this day has no detour")]
    NoDetour,
    /// A plan change on a trip whose route comes from a link or a file.
    #[error(
        "this trip's route comes from a link or a file, not from a plan: create a new trip to plan one"
    )]
    NotPlanned,
}

/// The radius of an accommodation scan around a day's end, km (inclusive).
pub const SCAN_RADIUS_KM: (f64, f64) = (1.0, 15.0);
/// The radius of a scan that names none, and of the analysis's own, km.
pub const DEFAULT_SCAN_RADIUS_KM: f64 = 5.0;

#[cfg(test)]
mod tests;

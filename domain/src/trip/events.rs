//! The facts of a trip's life, as stored. Each variant is one `event_type`; its JSON shape is a
//! contract (old shapes are upcast on load, see `store::upcast`), pinned by a snapshot test.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::edits::{Measure, StageAction};
use super::settings::{SettingField, TripSettings};
use super::source::SourceUrl;
use super::stage::{Accommodation, Detour, Point, RouteSummary, Stage, StageAlerts, Unavailable};
use super::{Category, ComputationStatus};
use crate::ids::{TripId, UserId};

/// An event of a trip stream.
// The copy of a trip carries a whole trip's image: events are built a few times a request
// and moved into a Vec, so a large variant costs nothing that boxing would save.
// Its variant's name is its stored `event_type` and serde's `type` tag alike: declared once,
// here (`strum::IntoStaticStr`), never listed again.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(tag = "type", content = "data")]
pub enum TripEvent {
    /// A trip came into being with its source and settings; `version` is 1.
    #[serde(rename_all = "camelCase")]
    TripCreated {
        trip_id: TripId,
        owner_id: UserId,
        source: SourceUrl,
        settings: TripSettings,
        version: u64,
    },
    /// The route must be fetched and cut into days for this pacing generation (a job).
    #[serde(rename_all = "camelCase")]
    RouteRequested { generation: u64 },
    /// Settings changed. `settings` is the whole after-image; `invalidated` lists what must
    /// be computed again; `version` is the structural version after the change.
    #[serde(rename_all = "camelCase")]
    TripSettingsUpdated {
        settings: TripSettings,
        changed: Vec<SettingField>,
        invalidated: Vec<Category>,
        version: u64,
    },
    /// The trip was deleted with everything that hangs off it.
    TripDeleted,
    /// A public link was opened: anyone with the code reads the trip.
    #[serde(rename_all = "camelCase")]
    TripShared {
        code: String,
        at: chrono::DateTime<chrono::Utc>,
    },
    /// The public link was revoked: the code answers 404 to everyone from now on.
    TripUnshared,
    /// A worker started computing the route of this generation.
    #[serde(rename_all = "camelCase")]
    RouteComputationStarted { generation: u64, job_id: uuid::Uuid },
    /// The route was fetched, cut into days and labelled; `version` is the structural
    /// version after the days appeared.
    #[serde(rename_all = "camelCase")]
    RouteComputed {
        generation: u64,
        route: RouteSummary,
        stages: Vec<Stage>,
        version: u64,
    },
    /// The route could not be computed, for a reason a retry would not change.
    #[serde(rename_all = "camelCase")]
    RouteFailed { generation: u64, reason: String },
    /// The analysis must run (again) for these categories (a job).
    #[serde(rename_all = "camelCase")]
    AnalysisRequested {
        generation: u64,
        categories: Vec<Category>,
    },
    /// A worker started analysing.
    #[serde(rename_all = "camelCase")]
    AnalysisStarted {
        generation: u64,
        categories: Vec<Category>,
    },
    /// The analysis results: alerts per day, what was computed, what could not be.
    #[serde(rename_all = "camelCase")]
    AnalysisCompleted {
        generation: u64,
        stages: Vec<StageAlerts>,
        done: Vec<Category>,
        unavailable: Vec<Unavailable>,
    },
    /// The days were edited. `stages` is the whole after-image (ids kept, new days with new
    /// ids); `endDate` follows the number of days when the trip is dated; `invalidated` is what
    /// must be computed again; `version` is the structural version after the edit.
    #[serde(rename_all = "camelCase")]
    StagesEdited {
        action: StageAction,
        stage_id: uuid::Uuid,
        stages: Vec<Stage>,
        end_date: Option<chrono::NaiveDate>,
        invalidated: Vec<super::Category>,
        version: u64,
        /// With nights at accommodation: the nights after a chosen place that moved with it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reflow: Option<super::edits::Reflow>,
        /// What the edit moved or removed beyond what it was asked (said to the person).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        effects: Vec<super::edits::SideEffect>,
    },
    /// Places to sleep must be looked for around the days' ends (a job).
    #[serde(rename_all = "camelCase")]
    AccommodationScanRequested {
        generation: u64,
        radius_km: f64,
        /// One day only, or every day when absent.
        stage_id: Option<uuid::Uuid>,
    },
    /// A scan's results, per day (an enrichment: the version does not move).
    #[serde(rename_all = "camelCase")]
    AccommodationsFound {
        generation: u64,
        stages: Vec<StageAccommodations>,
    },
    /// A day must be re-routed through a waypoint (a job). Not structural: no version.
    #[serde(rename_all = "camelCase")]
    WaypointRequested {
        generation: u64,
        stage_id: uuid::Uuid,
        waypoint: Point,
    },
    /// A day was re-routed through a waypoint (an enrichment: the version does not move).
    #[serde(rename_all = "camelCase")]
    StageRerouted {
        generation: u64,
        stage_id: uuid::Uuid,
        detour: Detour,
        /// The day's figures on its new roads (stored as `distanceKm`, `ascentM`, `descentM`).
        #[serde(flatten)]
        measure: Measure,
    },
    /// A day's detour was removed: the day rides its own roads again with these figures
    /// (an enrichment undone: the version does not move, as adding it did not).
    #[serde(rename_all = "camelCase")]
    DetourRemoved {
        generation: u64,
        stage_id: uuid::Uuid,
        /// The day's figures on its own roads (stored as `distanceKm`, `ascentM`, `descentM`).
        #[serde(flatten)]
        measure: Measure,
    },
    /// The trip was made what it was at version `from_version`: its source, settings, days and
    /// route, under a new pacing generation; `version` is the structural version after it.
    #[serde(rename_all = "camelCase")]
    TripRestored {
        from_version: u64,
        source: SourceUrl,
        settings: TripSettings,
        route: Option<RouteSummary>,
        stages: Vec<Stage>,
        generation: u64,
        version: u64,
        /// Why Etappe restored them (a change whose new route failed); absent when a
        /// caller asked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        because: Option<String>,
    },
    /// A planned trip's plan changed (places or profile): its route is routed again.
    /// `version` is the structural version after the change.
    #[serde(rename_all = "camelCase")]
    TripReplanned {
        plan: super::plan::RoutePlan,
        version: u64,
    },
    /// A day's detour could not be computed, for good (its job was given up): the day keeps
    /// its roads and says why. Not structural: no version.
    #[serde(rename_all = "camelCase")]
    DetourFailed {
        generation: u64,
        stage_id: uuid::Uuid,
        reason: String,
    },
    /// A trip came into being as a deep copy of another (see `trip::duplicate`): its state is
    /// the copy's whole starting image; `version` is 1.
    #[serde(rename_all = "camelCase")]
    TripDuplicated {
        trip_id: TripId,
        owner_id: UserId,
        from_trip_id: TripId,
        source: SourceUrl,
        settings: TripSettings,
        generation: u64,
        route: Option<RouteSummary>,
        stages: Vec<Stage>,
        computations: BTreeMap<Category, ComputationStatus>,
        unavailable: BTreeMap<Category, String>,
        version: u64,
    },
}

/// The candidates found around one day's end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StageAccommodations {
    pub stage_id: uuid::Uuid,
    pub accommodations: Vec<Accommodation>,
}

/// A stored event that is not a trip event of a known shape.
#[derive(Debug, thiserror::Error)]
#[error("event {event_type} (schema {schema_version}) does not read as a trip event: {source}")]
pub struct TripEventError {
    pub event_type: String,
    pub schema_version: i32,
    #[source]
    pub source: serde_json::Error,
}

impl TripEvent {
    /// The current schema version of every trip event type.
    pub const SCHEMA_VERSION: i32 = 1;

    /// The stored `event_type`.
    pub fn event_type(&self) -> &'static str {
        self.into()
    }

    /// The stored `data` (the payload without its type).
    pub fn data(&self) -> Value {
        match serde_json::to_value(self) {
            Ok(Value::Object(mut map)) => map.remove("data").unwrap_or(Value::Null),
            _ => Value::Null,
        }
    }

    /// Reads a stored event (already upcast to the current schema).
    pub fn from_stored(
        event_type: &str,
        schema_version: i32,
        data: &Value,
    ) -> Result<Self, TripEventError> {
        let mut envelope = serde_json::Map::new();
        envelope.insert("type".into(), Value::String(event_type.to_owned()));
        if !data.is_null() {
            envelope.insert("data".into(), data.clone());
        }
        serde_json::from_value(Value::Object(envelope)).map_err(|source| TripEventError {
            event_type: event_type.to_owned(),
            schema_version,
            source,
        })
    }
}

impl TripEvent {
    /// The event ready to append, with a fresh id.
    pub fn to_new_event(
        &self,
        metadata: &crate::envelope::EventMetadata,
    ) -> crate::envelope::NewEvent {
        self.to_new_event_with_id(uuid::Uuid::now_v7(), metadata)
    }

    /// The event ready to append, with a chosen id (deterministic ids make retries idempotent).
    pub fn to_new_event_with_id(
        &self,
        event_id: uuid::Uuid,
        metadata: &crate::envelope::EventMetadata,
    ) -> crate::envelope::NewEvent {
        crate::envelope::NewEvent {
            event_id,
            event_type: self.event_type().to_owned(),
            schema_version: Self::SCHEMA_VERSION,
            data: self.data(),
            metadata: metadata.clone(),
        }
    }
}

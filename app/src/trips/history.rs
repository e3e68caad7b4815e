//! A trip's history: its events as sentences, and the trip as it was at any version.

use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use etappe_domain::text::strip_controls;
use etappe_domain::trip::edits::Reflow;
use etappe_domain::trip::{TripCommand, TripEvent};

use crate::access::require;
use crate::identity::{Principal, Scope};
use crate::views::{TripDetail, today};

use super::{AppError, BaseVersion, Caller, TripService};

impl TripService {
    /// The trip's history: every event, oldest first, with who caused it, when, and a sentence.
    pub async fn history(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<Vec<HistoryEntry>, AppError> {
        self.readable(principal, trip_id).await?;
        let events = self.store.read_stream(&trip_id.stream_id()).await?;
        Ok(events
            .iter()
            .map(|e| HistoryEntry {
                stream_version: e.version,
                event_type: e.event_type.clone(),
                actor: e.metadata.actor.clone(),
                at: e.recorded_at,
                summary: TripEvent::from_stored(&e.event_type, e.schema_version, &e.data)
                    .map(|event| describe(&event))
                    .unwrap_or_else(|_| e.event_type.clone()),
            })
            .collect())
    }

    /// The trip's versions, newest first, at most `limit`: each version a change left it at,
    /// what changed, when, and how many days it had (the last state at that version) — what
    /// an agent picks a version to restore from.
    pub async fn versions(
        &self,
        principal: &Principal,
        trip_id: TripId,
        limit: usize,
    ) -> Result<Vec<VersionEntry>, AppError> {
        self.readable(principal, trip_id).await?;
        let events = self.store.read_stream(&trip_id.stream_id()).await?;
        let mut state: Option<TripView> = None;
        let mut out: Vec<VersionEntry> = Vec::new();
        for event in &events {
            state = TripView::apply(state, event).map_err(|e| AppError::Internal(e.to_string()))?;
            let Some(trip) = state.as_ref().map(|v| &v.trip) else {
                continue;
            };
            match out.last_mut() {
                Some(last) if last.version == trip.version => last.days = trip.stages.len(),
                _ => out.push(VersionEntry {
                    version: trip.version,
                    at: event.recorded_at,
                    change: TripEvent::from_stored(
                        &event.event_type,
                        event.schema_version,
                        &event.data,
                    )
                    .map(|e| describe(&e))
                    .unwrap_or_else(|_| event.event_type.clone()),
                    days: trip.stages.len(),
                }),
            }
        }
        out.reverse();
        out.truncate(limit);
        Ok(out)
    }

    /// The trip as it was at structural version `version` (the last state that had it).
    pub async fn detail_at(
        &self,
        principal: &Principal,
        trip_id: TripId,
        version: u64,
    ) -> Result<TripDetail, AppError> {
        require(principal, Scope::TripsRead)?;
        let view = self.view_at(principal, trip_id, version).await?;
        Ok(TripDetail::of(&view, today()))
    }

    /// The days' lines as they were at `version`: a past version shows its own map and
    /// profile, not today's.
    pub async fn route_lines_at(
        &self,
        principal: &Principal,
        trip_id: TripId,
        version: u64,
    ) -> Result<crate::trips::days::RouteLines, AppError> {
        require(principal, Scope::TripsRead)?;
        let view = self.view_at(principal, trip_id, version).await?;
        self.route_lines_of(&view).await
    }

    /// Makes the trip what it was at `version` (`POST /trips/{id}/restore`): one command
    /// that appends events, so the version moves and REST, MCP and the history see it.
    pub async fn restore(
        &self,
        caller: &Caller,
        trip_id: TripId,
        version: u64,
        base: Option<BaseVersion>,
    ) -> Result<TripDetail, AppError> {
        let current = self.writable(&caller.principal, trip_id).await?;
        let base = base.ok_or(AppError::PreconditionRequired)?;
        let past = self.view_at(&caller.principal, trip_id, version).await?;
        let after = self
            .execute(caller, trip_id, current, |trip| TripCommand::Restore {
                past: Box::new(past.trip.clone()),
                expected_version: base.expected(trip.map_or(0, |t| t.version)),
                today: today(),
            })
            .await?;
        Ok(TripDetail::of(&after, today()))
    }

    /// The trip's state at structural version `version` (the last state that had it),
    /// folded from its log; ownership checked first.
    async fn view_at(
        &self,
        principal: &Principal,
        trip_id: TripId,
        version: u64,
    ) -> Result<TripView, AppError> {
        self.owned_view(principal, trip_id).await?;
        let events = self.store.read_stream(&trip_id.stream_id()).await?;
        let mut state: Option<TripView> = None;
        let mut found: Option<TripView> = None;
        for event in &events {
            state = TripView::apply(state, event).map_err(|e| AppError::Internal(e.to_string()))?;
            if let Some(view) = state.as_ref().filter(|v| v.trip.version == version) {
                found = Some(view.clone());
            }
        }
        found.ok_or(AppError::NoSuchVersion(version))
    }
}

/// One version of a trip, as an agent picks one to restore.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionEntry {
    pub version: u64,
    pub at: chrono::DateTime<chrono::Utc>,
    /// What the change that made it did, in a sentence.
    pub change: String,
    /// Its days (0: none yet, it cannot be restored).
    pub days: usize,
}

/// One line of a trip's history.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub stream_version: u64,
    #[serde(rename = "type")]
    pub event_type: String,
    pub actor: Option<String>,
    pub at: chrono::DateTime<chrono::Utc>,
    pub summary: String,
}

/// A sentence for an event, for people reading the history.
fn describe(event: &TripEvent) -> String {
    match event {
        TripEvent::TripCreated { source, .. } => match &source.plan {
            Some(plan) => format!("Trip planned from places: {} (version 1)", plan.describe()),
            None => format!(
                "Trip created from a {:?} link (version 1)",
                source.source_type
            ),
        },
        TripEvent::TripRestored {
            from_version,
            version,
            stages,
            because,
            ..
        } => match because {
            Some(because) => format!("{because} (version {version})"),
            None => format!(
                "Version {from_version} restored: its {} days are back (version {version})",
                stages.len()
            ),
        },
        TripEvent::TripReplanned { plan, version } => {
            format!("Plan changed: {} (version {version})", plan.describe())
        }
        TripEvent::DetourRemoved { measure, .. } => format!(
            "Detour removed: the day rides its own roads again ({:.1} km)",
            measure.distance_km
        ),
        TripEvent::RouteRequested { generation } => {
            format!("Days requested (pacing generation {generation})")
        }
        TripEvent::TripSettingsUpdated {
            changed, version, ..
        } => format!(
            "Settings changed: {} (version {version})",
            changed
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        TripEvent::TripDeleted => "Trip deleted".into(),
        TripEvent::RouteComputationStarted { generation, .. } => {
            format!("Route computation started (generation {generation})")
        }
        TripEvent::RouteComputed {
            stages,
            route,
            version,
            ..
        } => format!(
            "{} days computed over {:.1} km (version {version})",
            stages.len(),
            route.total_distance_km
        ),
        TripEvent::RouteFailed { reason, .. } => format!("Route failed: {reason}"),
        TripEvent::AnalysisRequested { .. } => "Analysis requested".into(),
        TripEvent::AnalysisStarted { .. } => "Analysis started".into(),
        TripEvent::AnalysisCompleted { stages, .. } => format!(
            "Analysis completed: {} alert(s)",
            stages.iter().map(|s| s.alerts.len()).sum::<usize>()
        ),
        TripEvent::TripShared { .. } => "Public link opened".into(),
        TripEvent::TripUnshared => "Public link revoked".into(),
        TripEvent::StagesEdited {
            action,
            stages,
            version,
            reflow,
            effects,
            ..
        } => {
            let mut sentence = match reflow {
                Some(reflow) => reflow_steps(reflow),
                None => format!(
                    "Days edited ({}): now {} days",
                    action.as_str(),
                    stages.len()
                ),
            };
            // What the edit did beyond what was asked, in the same line.
            for effect in effects {
                sentence.push_str("; ");
                sentence.push_str(&effect.sentence());
            }
            format!("{sentence} (version {version})")
        }
        TripEvent::AccommodationScanRequested { radius_km, .. } => {
            format!("Accommodation scan requested ({radius_km} km around each day's end)")
        }
        TripEvent::AccommodationsFound { stages, .. } => format!(
            "Accommodations found: {} candidate(s)",
            stages.iter().map(|s| s.accommodations.len()).sum::<usize>()
        ),
        TripEvent::WaypointRequested { .. } => "Detour through a waypoint requested".into(),
        TripEvent::TripDuplicated {
            from_trip_id,
            stages,
            ..
        } => format!(
            "Trip created as a copy of trip {from_trip_id} with its {} days (version 1)",
            stages.len()
        ),
        TripEvent::DetourFailed { reason, .. } => format!("Detour failed: {reason}"),
        TripEvent::StageRerouted {
            detour, measure, ..
        } => format!(
            "Day re-routed through a waypoint by {} ({:.1} km{})",
            detour.router,
            measure.distance_km,
            if detour.estimated { ", estimated" } else { "" }
        ),
    }
}

/// A choice of place that re-flowed the nights after it, as one step: "Nights 3–6 moved
/// after you chose Camping Seeblick; night 7 stays at Hotel Post, which you chose".
#[cfg(test)]
fn reflow_sentence(reflow: &Reflow, version: u64) -> String {
    format!("{} (version {version})", reflow_steps(reflow))
}

/// The sentence of a reflow, without its version (the tests add it: `reflow_sentence`).
fn reflow_steps(reflow: &Reflow) -> String {
    let chosen = strip_controls(&reflow.chosen);
    let mut sentence = match reflow.moved.as_slice() {
        [] => format!("You chose {chosen}; no night after it had to move"),
        [one] => format!("Night {one} moved after you chose {chosen}"),
        moved => format!(
            "Nights {} moved after you chose {chosen}",
            night_ranges(moved)
        ),
    };
    if let Some(kept) = &reflow.kept {
        match &kept.place {
            Some(place) => sentence.push_str(&format!(
                "; night {} stays at {}, which you chose",
                kept.night,
                strip_controls(place)
            )),
            None => sentence.push_str(&format!("; night {} stays where you set it", kept.night)),
        }
    }
    sentence
}

/// Day numbers as runs: `[3, 4, 5, 6, 9]` reads "3–6, 9".
fn night_ranges(nights: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &n in nights {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == n => *end = n,
            _ => runs.push((n, n)),
        }
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}–{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use etappe_domain::trip::edits::KeptNight;

    use super::*;

    #[test]
    fn a_reflow_reads_as_one_step_naming_the_nights_and_the_one_kept() {
        let reflow = Reflow {
            chosen: "Camping Seeblick".into(),
            moved: vec![3, 4, 5, 6],
            kept: Some(KeptNight {
                night: 7,
                place: Some("Hotel Post".into()),
            }),
        };
        assert_eq!(
            reflow_sentence(&reflow, 9),
            "Nights 3–6 moved after you chose Camping Seeblick; night 7 stays at Hotel Post, which you chose (version 9)"
        );
        assert_eq!(night_ranges(&[2, 4, 5, 9]), "2, 4–5, 9");
        let none = Reflow {
            moved: Vec::new(),
            kept: None,
            ..reflow
        };
        assert_eq!(
            reflow_sentence(&none, 4),
            "You chose Camping Seeblick; no night after it had to move (version 4)"
        );
    }
}

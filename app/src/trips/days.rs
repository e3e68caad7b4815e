//! The day services: editing the days (add, update, move, delete, rest day), choosing where to
//! sleep, asking for an accommodation scan or a waypoint detour, reading one day and the
//! route's geometry. REST and MCP call these, unchanged.
//!
//! Guard order everywhere: scope, ownership (a foreign trip is a missing one), lock, the
//! presence of a base version, the input, then the aggregate's own rules (version, stage).

use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use etappe_domain::trip::edits::StageAction;
use etappe_domain::trip::edits::input::{
    coordinates_valid, parse_manual_accommodation, parse_stage_edit,
};
use etappe_domain::trip::input::{describe, refuse_unknown};
use etappe_domain::trip::nights::BedOnRoute;
use etappe_domain::trip::settings::NightsMode;
use etappe_domain::trip::stage::Point;
use etappe_domain::trip::{
    FieldError, InputError, RouteSnapshot, SCAN_RADIUS_KM, StageEdit, Trip, TripCommand, TripEvent,
};
use etappe_route::gpx::TrackPoint;
use etappe_track::geometry::TrackGeometry;
use etappe_track::labels::GazetteerLabels;
use serde::Serialize;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::{BaseVersion, TripService};
use crate::access::{require, stored_track};
use crate::confirmation::{Asks, Confirm, Confirmation};
use crate::identity::{Principal, Scope};
use crate::views::{AlsoChanged, StageSummary, TripDetail, TripSummary, today};
use crate::{AppError, Caller};

pub use etappe_domain::trip::DEFAULT_SCAN_RADIUS_KM;
use etappe_domain::trip::edits::{CANDIDATE_MATCH_M, candidate_at};

/// Simplification tolerance of `/route`, metres: a map line, not a navigation track.
const ROUTE_TOLERANCE_M: f64 = 10.0;

/// The answer to a waypoint request: accepted, computed by the workers, version unchanged.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaypointAccepted {
    pub trip_id: String,
    pub stage_id: String,
    /// The trip's version, which a detour does not move.
    pub version: u64,
    pub partial: bool,
}

/// One day's simplified line.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DayLine {
    pub stage_id: String,
    pub day_number: u32,
    pub is_rest_day: bool,
    /// `[lat, lon]` pairs, the whole day as one line (kept for older readers: it joins the
    /// pieces below across the route's breaks).
    pub points: Vec<[f64; 2]>,
    /// The day's line cut at the route's breaks (jumps between the source's pieces that are
    /// not ridden): one `[lat, lon]` list per ridden piece, so a map never draws a gap as
    /// road. One piece for a day without breaks, none for a rest day.
    pub pieces: Vec<Vec<[f64; 2]>>,
    /// The elevation profile: `[km from the day's start, metres]`, at most
    /// `PROFILE_POINTS` samples of the full-resolution track (the map line above drops
    /// the points a straight climb needs), none where the source had no elevation.
    pub profile: Vec<[f64; 2]>,
}

/// Samples per day of a profile: enough for a chart a screen wide.
const PROFILE_POINTS: usize = 400;

/// `[km, m]` samples of a day's track, the first and last included; `breaks` (indices into
/// `points`) count no distance, so the last sample's km is the day's ridden length.
fn profile_of(points: &[TrackPoint], breaks: &[usize]) -> Vec<[f64; 2]> {
    let km = etappe_route::geometry::cumulative_distances_with_breaks(points, breaks);
    let step = points.len().div_ceil(PROFILE_POINTS).max(1);
    let round = |v: f64, places: f64| (v * places).round() / places;
    let mut out: Vec<[f64; 2]> = (0..points.len())
        .step_by(step)
        .chain(points.len().checked_sub(1))
        .filter_map(|i| {
            Some([
                round(km.get(i)? / 1000.0, 100.0),
                round(points[i].ele?, 10.0),
            ])
        })
        .collect();
    out.dedup_by(|a, b| a[0] == b[0]);
    out
}

/// `GET /trips/{id}/route`: the days' geometry, simplified for a map.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteLines {
    pub version: u64,
    pub days: Vec<DayLine>,
    /// A tag that changes whenever the geometry does (version, generation, detours).
    #[serde(skip)]
    pub tag: String,
}

fn field(name: &str, message: impl Into<String>) -> AppError {
    InputError::Invalid(vec![FieldError::new(name, message)]).into()
}

impl TripService {
    /// The caller's trip, open to a change: the write scope, the owner, then the lock (the
    /// first of a change's guards, before its version and values are read; `decide` judges
    /// the same rule again on the state it appends to).
    pub(super) async fn writable(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<TripView, AppError> {
        require(principal, Scope::TripsWrite)?;
        let view = self.owned_view(principal, trip_id).await?;
        view.trip.open_to_change(today())?;
        Ok(view)
    }

    /// The full-resolution track of the trip's current generation.
    pub(super) async fn track_points(&self, trip: &Trip) -> Result<Vec<TrackPoint>, AppError> {
        Ok(stored_track(self.store.as_ref(), trip).await?.points)
    }

    /// Applies one of the five day edits. Answers the trip after it (with the new version).
    pub async fn edit_stage(
        &self,
        caller: &Caller,
        trip_id: TripId,
        (action, stage_id): (StageAction, Uuid),
        input: &Map<String, Value>,
        base: Option<BaseVersion>,
        confirm: &dyn Confirm,
    ) -> Result<TripDetail, AppError> {
        let view = self.writable(&caller.principal, trip_id).await?;
        let base = base.ok_or(AppError::PreconditionRequired)?;
        let edit = parse_stage_edit(action, stage_id, Uuid::now_v7(), input)?;
        self.apply_edit(caller, view, edit, base, confirm).await
    }

    /// The places to sleep the route job found along the trip's route (with nights at
    /// accommodation; none otherwise), which a choice re-flows the later nights over.
    async fn route_beds(&self, trip: &Trip) -> Result<Vec<BedOnRoute>, AppError> {
        let Some(route) = trip
            .route
            .as_ref()
            .filter(|_| trip.settings.nights == NightsMode::AtAccommodation)
        else {
            return Ok(Vec::new());
        };
        let bytes = self
            .store
            .get_blob(&etappe_track::stored::beds_key(&route.track_key))
            .await?;
        Ok(bytes
            .as_deref()
            .and_then(etappe_track::stored::decode_beds)
            .unwrap_or_default())
    }

    /// Applies `edit` through the caller's confirmation, which is asked only when the edit
    /// would remove something a person made; the answer names what it moved or removed
    /// beyond what was asked.
    async fn apply_edit(
        &self,
        caller: &Caller,
        view: TripView,
        edit: StageEdit,
        base: BaseVersion,
        confirm: &dyn Confirm,
    ) -> Result<TripDetail, AppError> {
        let trip_id = view.trip.id;
        let points = if !view.trip.has_days() {
            Vec::new()
        } else {
            self.track_points(&view.trip).await?
        };
        let mut route = RouteSnapshot::new(TrackGeometry::new(points, &GazetteerLabels));
        // A choice re-flows the nights after it, a moved end chooses its night again: both
        // over the beds found along the route (none unless nights are at accommodation).
        if matches!(
            edit,
            StageEdit::ChooseAccommodation { .. } | StageEdit::Update { end: Some(_), .. }
        ) {
            route = route.with_beds(self.route_beds(&view.trip).await?);
        }
        let generation = view.trip.generation;
        let confirmation = Confirmation {
            confirm,
            asks: Asks::WhenPersonsWorkLost,
        };
        let (after, events) = self
            .execute_reporting(caller, trip_id, view, Some(confirmation), |state| {
                TripCommand::EditStages {
                    edit: edit.clone(),
                    expected_version: base.expected(state.map_or(0, |t| t.version)),
                    generation,
                    today: today(),
                    route: route.clone(),
                }
            })
            .await?;
        let mut detail = TripDetail::of(&after.ok_or(AppError::NotFound)?, today());
        detail.also_changed = events
            .iter()
            .filter_map(|e| match e {
                TripEvent::StagesEdited { effects, .. } => Some(AlsoChanged::of(effects)),
                _ => None,
            })
            .flatten()
            .collect();
        Ok(detail)
    }

    /// Chooses where to sleep after a day, by the coordinates of one of its candidates (`lat`,
    /// `lon`); an empty input clears the choice. The day's end moves to the route point
    /// nearest the place, and the next day starts there.
    pub async fn choose_accommodation(
        &self,
        caller: &Caller,
        trip_id: TripId,
        stage_id: Uuid,
        input: &Map<String, Value>,
        base: Option<BaseVersion>,
        confirm: &dyn Confirm,
    ) -> Result<TripDetail, AppError> {
        let view = self.writable(&caller.principal, trip_id).await?;
        let base = base.ok_or(AppError::PreconditionRequired)?;
        refuse_unknown(input, &["lat", "lon", "name"])?;
        // With a name, a place of the rider's own at lat/lon (no candidate needed).
        if input.get("name").is_some_and(|n| !n.is_null()) {
            let accommodation = parse_manual_accommodation(input)?;
            let edit = StageEdit::ChooseAccommodation {
                stage_id,
                accommodation,
            };
            return self.apply_edit(caller, view, edit, base, confirm).await;
        }
        let lat = input.get("lat").filter(|v| !v.is_null());
        let lon = input.get("lon").filter(|v| !v.is_null());
        let edit = match (lat, lon) {
            (None, None) => StageEdit::ClearAccommodation { stage_id },
            (Some(lat), Some(lon)) => {
                let (Some(lat), Some(lon)) = (lat.as_f64(), lon.as_f64()) else {
                    return Err(field(
                        "lat",
                        format!(
                            "lat and lon must be numbers; got {} and {}",
                            describe(lat),
                            describe(lon)
                        ),
                    ));
                };
                let stage = day_of(&view.trip, stage_id)?;
                let target = Point {
                    lat,
                    lon,
                    ele: None,
                };
                // A candidate of the day's scan, or (nights at accommodation) a bed along
                // the route, such as one a night's note names as passed over.
                let beds = self.route_beds(&view.trip).await?;
                let Some(candidate) = candidate_at(
                    stage
                        .accommodations
                        .iter()
                        .chain(beds.iter().map(|b| &b.accommodation)),
                    target,
                ) else {
                    return Err(field(
                        "lat",
                        if stage.accommodations.is_empty() {
                            "this day has no candidates to choose from: enter a place of your own with name, lat and lon (MCP choose_accommodation with name; REST also POST …/accommodations/manual), or let an OpenStreetMap source find some (import an extract with `etappe osm import`, configure ETAPPE_OVERPASS_URL, or start with ETAPPE_ONLINE=1; then analyze_trip, REST POST …/analyze)".to_owned()
                        } else {
                            format!(
                                "no candidate of this day within {CANDIDATE_MATCH_M} m of these coordinates; the day's {} candidates are in its accommodations list (see etappe_help)",
                                stage.accommodations.len()
                            )
                        },
                    ));
                };
                StageEdit::ChooseAccommodation {
                    stage_id,
                    accommodation: candidate.clone(),
                }
            }
            _ => {
                return Err(field(
                    "lat",
                    "give both lat and lon to choose a candidate, or neither to clear the choice",
                ));
            }
        };
        self.apply_edit(caller, view, edit, base, confirm).await
    }

    /// Enters a place to sleep by hand (`name`, `lat`, `lon`, `priceTotal?`, `url?`).
    pub async fn manual_accommodation(
        &self,
        caller: &Caller,
        trip_id: TripId,
        stage_id: Uuid,
        input: &Map<String, Value>,
        base: Option<BaseVersion>,
        confirm: &dyn Confirm,
    ) -> Result<TripDetail, AppError> {
        let view = self.writable(&caller.principal, trip_id).await?;
        let base = base.ok_or(AppError::PreconditionRequired)?;
        let accommodation = parse_manual_accommodation(input)?;
        let edit = StageEdit::ChooseAccommodation {
            stage_id,
            accommodation,
        };
        self.apply_edit(caller, view, edit, base, confirm).await
    }

    /// Asks the workers to look for places to sleep around each day's end (`radiusKm` 1–15,
    /// default 5; `stageId` for one day). Answers at once.
    pub async fn scan_accommodations(
        &self,
        caller: &Caller,
        trip_id: TripId,
        input: &Map<String, Value>,
    ) -> Result<TripSummary, AppError> {
        let view = self.writable(&caller.principal, trip_id).await?;
        refuse_unknown(input, &["radiusKm", "stageId"])?;
        let radius_km = match input.get("radiusKm") {
            None | Some(Value::Null) => DEFAULT_SCAN_RADIUS_KM,
            Some(v) => v.as_f64().ok_or_else(|| {
                field(
                    "radiusKm",
                    format!(
                        "radiusKm must be a number from {} to {}; got {}",
                        SCAN_RADIUS_KM.0,
                        SCAN_RADIUS_KM.1,
                        describe(v)
                    ),
                )
            })?,
        };
        let stage_id = match input.get("stageId") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => {
                Some(Uuid::parse_str(s).map_err(|_| AppError::StageNotFound)?)
            }
            Some(other) => {
                return Err(field(
                    "stageId",
                    format!(
                        "stageId must be a day's id (a string); got {}",
                        describe(other)
                    ),
                ));
            }
        };
        let after = self
            .execute(caller, trip_id, view, |_| {
                TripCommand::RequestAccommodationScan {
                    radius_km,
                    stage_id,
                    today: today(),
                }
            })
            .await?;
        Ok(TripSummary::of(&after, today()))
    }

    /// Re-routes a day through a waypoint (`waypointLat`, `waypointLon`), as a job. The trip
    /// version does not move and no `If-Match` is needed; a locked trip refuses it.
    pub async fn add_waypoint(
        &self,
        caller: &Caller,
        trip_id: TripId,
        stage_id: Uuid,
        input: &Map<String, Value>,
    ) -> Result<WaypointAccepted, AppError> {
        let view = self.writable(&caller.principal, trip_id).await?;
        refuse_unknown(input, &["waypointLat", "waypointLon"])?;
        let number = |name: &str| -> Result<f64, AppError> {
            input.get(name).and_then(Value::as_f64).ok_or_else(|| {
                field(
                    name,
                    format!(
                        "{name} is required: a number ({} )",
                        if name == "waypointLat" {
                            "-90…90"
                        } else {
                            "-180…180"
                        }
                    ),
                )
            })
        };
        let (lat, lon) = (number("waypointLat")?, number("waypointLon")?);
        if !coordinates_valid(lat, lon) {
            return Err(field(
                "waypointLat",
                "waypointLat must be -90…90 and waypointLon -180…180",
            ));
        }
        let view = self
            .execute(caller, trip_id, view, |_| TripCommand::RequestWaypoint {
                stage_id,
                waypoint: Point {
                    lat,
                    lon,
                    ele: None,
                },
                today: today(),
            })
            .await?;
        Ok(WaypointAccepted {
            trip_id: trip_id.to_string(),
            stage_id: stage_id.to_string(),
            version: view.trip.version,
            partial: view.trip.is_partial(),
        })
    }

    /// Removes a day's detour (or the one still being computed): the day rides its own roads
    /// again, measured on them. Like adding one, it moves no version and needs no `If-Match`.
    pub async fn remove_detour(
        &self,
        caller: &Caller,
        trip_id: TripId,
        stage_id: Uuid,
    ) -> Result<TripDetail, AppError> {
        use etappe_domain::trip::RouteGeometry;
        let view = self.writable(&caller.principal, trip_id).await?;
        let stage = day_of(&view.trip, stage_id)?;
        let (first, last) = (stage.first_point, stage.last_point);
        let points = self.track_points(&view.trip).await?;
        let own = TrackGeometry::new(points, &GazetteerLabels).measure(first, last);
        let after = self
            .execute(caller, trip_id, view, |_| TripCommand::RemoveDetour {
                stage_id,
                own,
                today: today(),
            })
            .await?;
        Ok(TripDetail::of(&after, today()))
    }

    /// One day in full (no geometry).
    pub async fn stage_detail(
        &self,
        principal: &Principal,
        trip_id: TripId,
        stage_id: Uuid,
    ) -> Result<(u64, StageSummary), AppError> {
        let view = self.readable(principal, trip_id).await?;
        self.refresh_weather_if_due(&view).await;
        let trip = &view.trip;
        let stage = day_of(trip, stage_id)?;
        Ok((trip.version, StageSummary::of(stage, &trip.settings)))
    }

    /// The days' lines, simplified for a map.
    pub async fn route_lines(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<RouteLines, AppError> {
        let view = self.readable(principal, trip_id).await?;
        self.route_lines_of(&view).await
    }

    /// The lines of a trip already authorized (also the share link's).
    pub async fn route_lines_of(&self, view: &TripView) -> Result<RouteLines, AppError> {
        let trip = &view.trip;
        let stored = stored_track(self.store.as_ref(), trip).await?;
        let mut days = Vec::with_capacity(trip.stages.len());
        let mut tag = format!("{}:{}:{}", trip.id, trip.version, trip.generation);
        for stage in &trip.stages {
            let points =
                crate::access::day_points(self.store.as_ref(), stage, &stored.points).await?;
            // A detour is its own geometry, ridden end to end: the source's breaks are not in it.
            let breaks = match (&stage.detour, stage.is_rest_day) {
                (Some(detour), _) => {
                    tag.push(':');
                    tag.push_str(&detour.track_key);
                    Vec::new()
                }
                (None, true) => Vec::new(),
                (None, false) => stored.breaks_within(stage.first_point, stage.last_point),
            };
            let line = |points: &[TrackPoint]| -> Vec<[f64; 2]> {
                etappe_route::geometry::simplify(points, ROUTE_TOLERANCE_M)
                    .iter()
                    .map(|p| [p.lat, p.lon])
                    .collect()
            };
            let pieces = if stage.is_rest_day {
                Vec::new()
            } else {
                split_at(&points, &breaks)
                    .into_iter()
                    .filter(|piece| piece.len() >= 2)
                    .map(line)
                    .collect()
            };
            days.push(DayLine {
                stage_id: stage.id.to_string(),
                day_number: stage.day_number,
                is_rest_day: stage.is_rest_day,
                points: line(&points),
                pieces,
                profile: profile_of(&points, &breaks),
            });
        }
        Ok(RouteLines {
            version: trip.version,
            days,
            tag: super::canonical_digest(&[&Value::String(tag)]),
        })
    }
}

/// `points` cut before each index of `breaks` (sorted; out-of-range ones ignored).
fn split_at<'p>(points: &'p [TrackPoint], breaks: &[usize]) -> Vec<&'p [TrackPoint]> {
    let mut pieces = Vec::with_capacity(breaks.len() + 1);
    let mut start = 0;
    for &at in breaks {
        if at > start && at < points.len() {
            pieces.push(&points[start..at]);
            start = at;
        }
    }
    pieces.push(&points[start..]);
    pieces
}

/// The trip's day `stage_id`, or the day's 404.
fn day_of(trip: &Trip, stage_id: Uuid) -> Result<&etappe_domain::trip::stage::Stage, AppError> {
    trip.stages
        .iter()
        .find(|s| s.id == stage_id)
        .ok_or(AppError::StageNotFound)
}

#[cfg(test)]
mod tests {
    use super::{PROFILE_POINTS, profile_of, split_at};
    use etappe_route::gpx::TrackPoint;

    fn track(n: usize, ele: impl Fn(usize) -> Option<f64>) -> Vec<TrackPoint> {
        (0..n)
            .map(|i| TrackPoint {
                lat: 46.0 + i as f64 * 0.0005,
                lon: 7.0,
                ele: ele(i),
            })
            .collect()
    }

    #[test]
    fn a_profile_keeps_the_climb_within_its_budget() {
        // A straight line with a climb: the map's simplified line keeps two points of it.
        let points = track(5_000, |i| Some(500.0 + (i as f64 / 10.0).sin() * 100.0));
        let profile = profile_of(&points, &[]);
        assert!(profile.len() <= PROFILE_POINTS + 1, "{}", profile.len());
        assert!(profile.len() > PROFILE_POINTS / 2);
        assert_eq!(profile[0][0], 0.0);
        let last = profile.last().expect("a last sample");
        assert!(
            (last[0] - 277.9).abs() < 1.0,
            "the last sample is the day's end: {last:?}"
        );
        assert!(profile.windows(2).all(|w| w[0][0] < w[1][0]), "km grow");
        assert!(profile.iter().any(|p| p[1] > 590.0) && profile.iter().any(|p| p[1] < 410.0));
    }

    #[test]
    fn points_without_elevation_are_left_out() {
        let profile = profile_of(&track(10, |i| (i % 2 == 0).then_some(100.0)), &[]);
        assert_eq!(profile.len(), 5);
        assert!(profile_of(&[], &[]).is_empty());
    }

    #[test]
    fn a_day_is_cut_at_its_breaks_and_its_profile_skips_them() {
        let mut points = track(20, |_| Some(100.0));
        // A 10 km jump after point 9: a break, not riding.
        for p in &mut points[10..] {
            p.lat += 0.09;
        }
        let pieces = split_at(&points, &[10]);
        assert_eq!(pieces.iter().map(|p| p.len()).collect::<Vec<_>>(), [10, 10]);
        assert_eq!(split_at(&points, &[]).len(), 1);
        assert_eq!(split_at(&points, &[0, 25]).len(), 1, "edges are no cuts");
        let with = profile_of(&points, &[10]);
        let without = profile_of(&points, &[]);
        let end = |p: &Vec<[f64; 2]>| p.last().map_or(0.0, |s| s[0]);
        assert!(end(&without) - end(&with) > 9.5, "the jump counts no km");
    }
}

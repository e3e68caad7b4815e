//! What readers receive: shapes built from the trip read model, shared by every transport.
//! The lock is judged here, at read time, because it depends on today's date.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use etappe_domain::projection::TripView;
use etappe_domain::text::strip_controls;
use etappe_domain::trip::nights::{NightCandidate, NightNote};
use etappe_domain::trip::settings::{AccommodationType, NightsMode, TripSettings};
use etappe_domain::trip::source::SourceType;
use etappe_domain::trip::stage::{
    Accommodation, Alert, DayWeather, FoundAlong, Point, Stage, WeatherState,
};
use etappe_domain::trip::{Category, ComputationStatus, Trip};
use serde::Serialize;

/// Today, in UTC: the day the lock rule compares start dates with.
pub fn today() -> NaiveDate {
    Utc::now().date_naive()
}

/// One day as readers see it (no geometry: that is `/route`'s).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageSummary {
    /// Stable within a pacing generation.
    pub stage_id: String,
    pub day_number: u32,
    pub date: Option<NaiveDate>,
    /// Kilometres.
    pub distance: f64,
    /// Metres of climbing; null when unknown (the route has no heights here and no
    /// elevation source filled them: never 0 for "unknown").
    pub elevation: Option<f64>,
    /// Metres of descent; null when unknown.
    pub elevation_loss: Option<f64>,
    pub start_point: Point,
    pub end_point: Point,
    /// Nearest locality (GeoNames data).
    pub start_label: Option<String>,
    pub end_label: Option<String>,
    pub label: Option<String>,
    pub is_rest_day: bool,
    pub alerts: Vec<Alert>,
    /// Places to sleep found near the day's end by the last scan (third-party data).
    pub accommodations: Vec<Accommodation>,
    /// The place chosen for the night after this day.
    pub selected_accommodation: Option<Accommodation>,
    /// Set when the day was re-routed through a waypoint.
    pub detour: Option<DetourSummary>,
    /// Why the last detour asked for this day could not be computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detour_failure: Option<String>,
    /// The day's weather along its ride; null until the weather was computed.
    pub weather: Option<DayWeather>,
    /// Food, water, bike shops and railway stations along the day, in order, from
    /// OpenStreetMap; null until read (`points_of_interest`), empty when none.
    pub found: Option<Vec<FoundAlong>>,
    /// With nights at accommodation: why the night after this day is where it is (the
    /// pacer's target, the window, the beds passed over); null otherwise, or once the rider
    /// moved the day's end or chose its place.
    pub night: Option<NightNote>,
    /// Hours in the saddle, as the sunset rule reckons them (distance ÷ average speed);
    /// null on a rest day.
    pub riding_hours: Option<f64>,
    /// Local arrival, "HH:MM" (with "(+1)" after midnight): the departure hour plus the
    /// riding hours; null on a rest day.
    pub arrival: Option<String>,
    /// The share of the day on rough surface (0–1), as `surface_rough` counts it; null until
    /// OpenStreetMap was read for the day.
    pub unpaved_share: Option<f64>,
    /// The share of the day on busy road (0–1: main and secondary roads without cycle
    /// infrastructure, as the traffic rules count them); null until OpenStreetMap was read.
    pub busy_share: Option<f64>,
}

/// A re-routed day, as readers see it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DetourSummary {
    pub waypoint: Point,
    /// Kilometres the detour added to the day (never negative: the spur keeps the day's own
    /// roads and only adds the way to the point and back).
    pub added_distance: f64,
    /// True when no router was reachable: a straight out-and-back, not a road.
    pub estimated: bool,
    pub router: String,
    /// Metres of the day's own track the spur skips (it may come back a little further on
    /// when that is shorter); 0 for an out-and-back.
    pub skipped_distance_m: f64,
}

/// Where a route's heights come from (`detail.elevation`).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ElevationSummary {
    /// True when every point has a height, so every day's climbing is known.
    pub known: bool,
    /// Which sources gave the heights: `recorded` (the route's own), `srtm`, `open-meteo`.
    pub sources: Vec<String>,
    /// Points without a height.
    pub missing_points: usize,
    /// Why heights are missing and how to get them.
    pub missing_reason: Option<String>,
    /// True when the days were cut by distance alone, the climbing being unknown.
    pub paced_without_climbing: bool,
}

/// A place of a plan.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanPlaceSummary {
    /// The place's name as the geocoder matched it (third-party data), when it was named.
    pub name: Option<String>,
    pub lat: f64,
    pub lon: f64,
}

/// What a planned trip was planned from (`detail.plan`).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanSummary {
    pub from: PlanPlaceSummary,
    pub via: Vec<PlanPlaceSummary>,
    pub to: PlanPlaceSummary,
    /// `touring`, `road`, `gravel` or `mountain`.
    pub profile: String,
}

impl PlanSummary {
    fn of(plan: &etappe_domain::trip::plan::RoutePlan) -> Self {
        let place = |p: &etappe_domain::trip::plan::PlanPlace| PlanPlaceSummary {
            name: p.name.as_deref().map(strip_controls),
            lat: p.lat,
            lon: p.lon,
        };
        Self {
            from: place(&plan.from),
            via: plan.via.iter().map(place).collect(),
            to: place(&plan.to),
            profile: plan.profile.as_str().to_owned(),
        }
    }
}

impl ElevationSummary {
    fn of(info: &etappe_domain::trip::stage::ElevationInfo) -> Self {
        Self {
            known: info.missing_points == 0,
            sources: info.sources.clone(),
            missing_points: info.missing_points,
            missing_reason: info.missing_reason.clone(),
            paced_without_climbing: info.paced_without_climbing,
        }
    }
}

fn clean_accommodation(a: &Accommodation) -> Accommodation {
    let clean = |s: &Option<String>| s.as_deref().map(strip_controls);
    Accommodation {
        name: clean(&a.name),
        address: clean(&a.address),
        phone: clean(&a.phone),
        url: clean(&a.url),
        ..a.clone()
    }
}

impl StageSummary {
    /// Builds the reader's view of a day.
    pub fn of(stage: &Stage, settings: &TripSettings) -> Self {
        let start_date = settings.start_date;
        // The sunset rule's own reckoning, so the day and its alert agree.
        let timing = (!stage.is_rest_day).then(|| {
            etappe_analysis::rules::ride_timing(
                stage.distance_km,
                stage.ascent_m,
                &etappe_analysis::rules::Sanitized::new(&etappe_analysis::AnalysisSettings {
                    departure_hour: settings.departure_hour,
                    average_speed_kmh: settings.average_speed,
                    ebike_mode: settings.ebike_mode,
                    climb_m_per_flat_km: settings.elevation_penalty,
                }),
            )
        });
        Self {
            riding_hours: timing
                .as_ref()
                .map(|t| (t.riding_hours * 10.0).round() / 10.0),
            arrival: timing.map(|t| match t.arrival_day_offset {
                0 => t.arrival_local,
                d => format!("{} (+{d})", t.arrival_local),
            }),
            stage_id: stage.id.to_string(),
            day_number: stage.day_number,
            date: start_date.and_then(|d| {
                d.checked_add_days(chrono::Days::new(u64::from(
                    stage.day_number.saturating_sub(1),
                )))
            }),
            distance: stage.distance_km,
            elevation: stage.ascent_m,
            elevation_loss: stage.descent_m,
            start_point: stage.start,
            end_point: stage.end,
            start_label: stage.start_label.as_deref().map(strip_controls),
            end_label: stage.end_label.as_deref().map(strip_controls),
            label: stage.label.clone(),
            is_rest_day: stage.is_rest_day,
            alerts: stage.alerts.clone(),
            accommodations: stage
                .accommodations
                .iter()
                .map(clean_accommodation)
                .collect(),
            selected_accommodation: stage.accommodation.as_ref().map(clean_accommodation),
            detour: stage.detour.as_ref().map(|d| DetourSummary {
                waypoint: d.waypoint,
                added_distance: (((stage.distance_km - d.original_distance_km) * 100.0).round()
                    / 100.0)
                    .max(0.0),
                estimated: d.estimated,
                router: d.router.clone(),
                skipped_distance_m: d.junction.map_or(0.0, |j| j.skipped_m.max(0.0)),
            }),
            detour_failure: stage.detour_failure.clone(),
            weather: stage.weather.as_ref().map(|w| weather_as_of(w, today())),
            found: stage.found.as_ref().map(|list| {
                list.iter()
                    .map(|f| FoundAlong {
                        name: f.name.as_deref().map(strip_controls),
                        ..f.clone()
                    })
                    .collect()
            }),
            night: stage.night.as_ref().map(clean_night),
            unpaved_share: stage.road.map(|r| share(r.unpaved_m(), stage.distance_km)),
            busy_share: stage.road.map(|r| share(r.busy_m, stage.distance_km)),
        }
    }
}

/// `metres` of a day of `km` as a share from 0 to 1, two decimals (0 for an empty day).
fn share(metres: f64, km: f64) -> f64 {
    if !km.is_finite() || km <= 0.0 || !metres.is_finite() {
        return 0.0;
    }
    // `+ 0.0` turns a negative zero (an empty sum of f64 is -0.0) into 0.
    ((metres / (km * 1000.0)).clamp(0.0, 1.0) * 100.0).round() / 100.0 + 0.0
}

/// A night's note with the third-party names it carries made safe to show.
fn clean_night(note: &NightNote) -> NightNote {
    let clean = |c: &NightCandidate| NightCandidate {
        name: c.name.as_deref().map(strip_controls),
        ..c.clone()
    };
    NightNote {
        passed_over: note.passed_over.iter().map(clean).collect(),
        nearest_before: note.nearest_before.as_ref().map(clean),
        nearest_after: note.nearest_after.as_ref().map(clean),
        why: strip_controls(&note.why),
        ..note.clone()
    }
}

/// A day's weather as read on `today`: a forecast day whose date has gone by reads `past`
/// (the state depends on the reading day, so it is judged here, like the lock).
fn weather_as_of(weather: &DayWeather, today: NaiveDate) -> DayWeather {
    let mut read = weather.clone();
    if weather.date.is_some_and(|d| d < today) {
        read.state = WeatherState::Past;
    }
    read
}

fn stages_of(trip: &Trip) -> Vec<StageSummary> {
    trip.stages
        .iter()
        .map(|s| StageSummary::of(s, &trip.settings))
        .collect()
}

fn total_distance(trip: &Trip) -> f64 {
    let km: f64 = trip
        .stages
        .iter()
        .filter(|s| !s.is_rest_day)
        .map(|s| s.distance_km)
        .sum();
    // An empty sum of floats is -0.0, which JSON prints as `-0.0`: adding 0 makes it 0.
    (km * 100.0).round() / 100.0 + 0.0
}

/// `GET /trips/{id}` and the answer to a creation: where the trip stands.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TripSummary {
    pub id: String,
    /// The structural version; also the ETag.
    pub version: u64,
    /// True until the days exist: `stages: []` then means "not computed yet", not "no days".
    pub partial: bool,
    pub is_locked: bool,
    pub computation_status: BTreeMap<Category, ComputationStatus>,
    /// Why each failed category could not be computed.
    pub unavailable: BTreeMap<Category, String>,
}

/// `GET /trips/{id}/detail`: the whole trip as the rider edits it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TripDetail {
    pub id: String,
    /// The structural version; also the ETag.
    pub version: u64,
    pub title: Option<String>,
    pub source_url: String,
    pub source_type: SourceType,
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
    pub fatigue_factor: f64,
    pub elevation_penalty: f64,
    pub max_distance_per_day: f64,
    pub average_speed: f64,
    pub departure_hour: u8,
    pub ebike_mode: bool,
    pub enabled_accommodation_types: Vec<AccommodationType>,
    /// Where the days end: `anywhere` (by distance and climbing), or `at_accommodation` (at a
    /// place to sleep of the enabled types near each day's planned end).
    pub nights: NightsMode,
    /// The number of days asked without dates; null when the dates or the daily maximum
    /// decide.
    pub days: Option<u32>,
    /// `draft` until the days exist, then `ready`.
    pub status: &'static str,
    /// True until every computation of this version has ended (done or failed): the days
    /// come first, their alerts, found places and nights after.
    pub partial: bool,
    /// While partial: when to read again, milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    pub is_locked: bool,
    pub computation_status: BTreeMap<Category, ComputationStatus>,
    pub unavailable: BTreeMap<Category, String>,
    pub stage_count: usize,
    /// Kilometres, rest days excluded.
    pub total_distance: f64,
    /// Metres of climbing of the whole route, once computed; null while unknown.
    pub total_elevation: Option<f64>,
    /// Where the route's heights come from, once the route is computed.
    pub elevation: Option<ElevationSummary>,
    /// What a planned trip was planned from (`sourceType: plan`); null for a link or file.
    pub plan: Option<PlanSummary>,
    /// The trip's open public link; null when none is open (the owner's views only: a
    /// shared trip never names its code to its visitors).
    pub share: Option<ShareSummary>,
    pub stages: Vec<StageSummary>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Why the days shown are not the ones last asked for (a change whose new route could
    /// not be computed: its days are kept, and this says which place failed), until the next
    /// change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// In the answer to a change of the days: what it moved or removed beyond what was
    /// asked (a detour that moved to another day, a night dropped or chosen again), for the
    /// person to be told. Absent when nothing else changed, and on reads.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_changed: Vec<AlsoChanged>,
}

/// Something a change did beyond what was asked, as the person reads it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AlsoChanged {
    /// `detour_moved`, `detour_removed`, `night_removed` or `night_rechosen`.
    pub kind: &'static str,
    /// True when it removed something a person made (a detour, a night they chose).
    pub removed_persons_work: bool,
    pub message: String,
}

impl AlsoChanged {
    /// The notes of `effects`, in order.
    pub fn of(effects: &[etappe_domain::trip::edits::SideEffect]) -> Vec<Self> {
        use etappe_domain::trip::edits::SideEffect as E;
        effects
            .iter()
            .map(|effect| Self {
                kind: match effect {
                    E::DetourMoved { .. } => "detour_moved",
                    E::DetourRemoved { .. } => "detour_removed",
                    E::NightRemoved { .. } => "night_removed",
                    E::NightRechosen { .. } => "night_rechosen",
                },
                removed_persons_work: effect.loses_persons_work(),
                message: effect.sentence(),
            })
            .collect()
    }
}

/// The open public link of a trip, as its owner reads it in the detail.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShareSummary {
    /// The link's code (as in `/s/{code}`).
    pub code: String,
    /// The link's path on this server, `/s/{code}` (with `.gpx` or `.fit`: the files). A
    /// path, not an address: the detail is built without the request, and the address
    /// riders reach is the one they read it on (`POST /trips/{id}/share` answers the full
    /// address).
    pub url: String,
    pub created_at: DateTime<Utc>,
}

/// One line of `GET /trips`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TripListItem {
    pub id: String,
    pub title: Option<String>,
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
    pub status: &'static str,
    pub is_locked: bool,
    pub stage_count: usize,
    pub total_distance: f64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A page of trips.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TripList {
    pub items: Vec<TripListItem>,
    pub total_items: u64,
    pub page: u32,
    pub items_per_page: u32,
}

/// `ready` with days, `failed` when the route failed for good, `draft` while it is coming.
fn status(trip: &Trip) -> &'static str {
    if trip.has_days() {
        "ready"
    } else if trip.route_failed() {
        "failed"
    } else {
        "draft"
    }
}

impl TripSummary {
    /// Builds the summary of a view.
    pub fn of(view: &TripView, today: NaiveDate) -> Self {
        let trip = &view.trip;
        Self {
            id: trip.id.to_string(),
            version: trip.version,
            partial: trip.is_partial(),
            is_locked: trip.is_locked(today),
            computation_status: trip.computations.clone(),
            unavailable: trip.unavailable.clone(),
        }
    }
}

impl TripDetail {
    /// Builds the detail of a view.
    pub fn of(view: &TripView, today: NaiveDate) -> Self {
        let trip = &view.trip;
        let s = &trip.settings;
        Self {
            id: trip.id.to_string(),
            version: trip.version,
            title: s.title.as_deref().map(strip_controls),
            source_url: trip.source.url.clone(),
            source_type: trip.source.source_type,
            start_date: s.start_date,
            end_date: s.end_date,
            fatigue_factor: s.fatigue_factor,
            elevation_penalty: s.elevation_penalty,
            max_distance_per_day: s.max_distance_per_day,
            average_speed: s.average_speed,
            departure_hour: s.departure_hour,
            ebike_mode: s.ebike_mode,
            nights: s.nights,
            days: s.days,
            enabled_accommodation_types: s.enabled_accommodation_types.clone(),
            status: status(trip),
            partial: trip.is_partial(),
            retry_after_ms: retry_after_ms(trip),
            is_locked: trip.is_locked(today),
            computation_status: trip.computations.clone(),
            unavailable: trip.unavailable.clone(),
            stage_count: trip.stages.len(),
            total_distance: total_distance(trip),
            total_elevation: trip.route.as_ref().and_then(|r| r.ascent_m),
            elevation: trip
                .route
                .as_ref()
                .and_then(|r| r.elevation.as_ref())
                .map(ElevationSummary::of),
            plan: trip.source.plan.as_deref().map(PlanSummary::of),
            share: trip.share.as_ref().map(|link| ShareSummary {
                code: link.code.clone(),
                url: format!("/s/{}", link.code),
                created_at: link.created_at,
            }),
            stages: stages_of(trip),
            created_at: view.created_at,
            updated_at: view.updated_at,
            notice: trip.notice.as_deref().map(strip_controls),
            also_changed: Vec::new(),
        }
    }
}

impl TripListItem {
    /// Builds a list line of a view.
    pub fn of(view: &TripView, today: NaiveDate) -> Self {
        let trip = &view.trip;
        Self {
            id: trip.id.to_string(),
            title: trip.settings.title.as_deref().map(strip_controls),
            start_date: trip.settings.start_date,
            end_date: trip.settings.end_date,
            status: status(trip),
            is_locked: trip.is_locked(today),
            stage_count: trip.stages.len(),
            total_distance: total_distance(trip),
            created_at: view.created_at,
            updated_at: view.updated_at,
        }
    }
}

/// What an anonymous visitor of a share link reads: the trip without its owner's private
/// details (no id, no source link, no settings).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicTrip {
    pub title: Option<String>,
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
    pub partial: bool,
    pub stage_count: usize,
    pub total_distance: f64,
    pub total_elevation: Option<f64>,
    pub stages: Vec<StageSummary>,
}

impl PublicTrip {
    /// Builds the public view of a trip.
    pub fn of(view: &TripView) -> Self {
        let trip = &view.trip;
        Self {
            title: trip.settings.title.as_deref().map(strip_controls),
            start_date: trip.settings.start_date,
            end_date: trip.settings.end_date,
            partial: trip.is_partial(),
            stage_count: trip.stages.len(),
            total_distance: total_distance(trip),
            total_elevation: trip.route.as_ref().and_then(|r| r.ascent_m),
            stages: stages_of(trip),
        }
    }

    /// One day of a shared trip.
    pub fn stage(view: &TripView, stage_id: uuid::Uuid) -> Option<StageSummary> {
        let trip = &view.trip;
        trip.stages
            .iter()
            .find(|s| s.id == stage_id)
            .map(|s| StageSummary::of(s, &trip.settings))
    }
}

/// While a trip is partial, when an agent should read it again: the route and its days take
/// a few seconds (a routed plan, a long file), the analysis of days that exist about one (its
/// sources answer from caches or the local index); measured on the e2e suite's trips.
pub fn retry_after_ms(trip: &etappe_domain::trip::Trip) -> Option<u64> {
    trip.is_partial()
        .then_some(if trip.has_days() { 1_000 } else { 2_000 })
}

//! The OpenStreetMap alert rules, one pure function each, with the upstream planner's
//! thresholds (see the constants). Each returns the alerts of one day for its code; names
//! of places are third-party text, so they go into `parameters` as data, never into the
//! message. An alert that points at something to do (a shop, a water point, a station, a
//! charger) carries it as `parameters.actionPoint` = `{kind, name, lat, lon}`.

use serde_json::{Value, json};

use super::model::Feature;
use crate::geo::haversine_m;

mod nearby;
mod supplies;
mod surface;
mod traffic;

pub use nearby::*;
pub use supplies::*;
pub use surface::*;
pub use traffic::*;

/// Two ridden ways this close along the day are one stretch, metres (a junction's few
/// metres matched to the crossing street do not cut a main road in two).
pub(crate) const STRETCH_JOIN_M: f64 = 30.0;
/// Rough sections add up to at least this on a day, metres.
pub const ROUGH_SURFACE_M: f64 = 500.0;
/// A stretch of busy road counts from this length, metres.
pub const TRAFFIC_WAY_M: f64 = 500.0;
/// A secondary road above this limit is fast, km/h.
pub const SECONDARY_FAST_KMH: f64 = 50.0;
/// The bike-shop rule runs only on trips with more stages than this.
pub const BIKE_SHOP_MIN_STAGES: usize = 5;
/// A repair resource this close to the day's midpoint is enough, metres.
pub const REPAIR_RADIUS_M: f64 = 2_000.0;
/// Points this close to the day's line are "on the way" (water, food, shops), metres.
pub const CORRIDOR_M: f64 = 2_000.0;
/// A day this long without food on the way gets a nudge, km.
pub const RESUPPLY_MIN_DAY_KM: f64 = 40.0;
/// No water over more than this, km.
pub const WATER_GAP_KM: f64 = 30.0;
/// Cultural suggestions this close to the line, metres.
pub const CULTURAL_RADIUS_M: f64 = 500.0;
/// Suggestions per day.
pub const CULTURAL_PER_DAY: usize = 3;
/// Suggestions per trip.
pub const CULTURAL_PER_TRIP: usize = 100;
/// A station this close to the start or the end is a way home, metres.
pub const STATION_RADIUS_M: f64 = 10_000.0;
/// A pharmacy, hospital or clinic this close to the midpoint, metres.
pub const HEALTH_RADIUS_M: f64 = 15_000.0;
/// Ferry lines are searched this close to the day's line, metres (whether the day rides one
/// is the match's to say).
pub const FERRY_RADIUS_M: f64 = 100.0;
/// A day rides a ferry when it rides this much of a ferry line, metres.
pub const FERRY_RIDDEN_M: f64 = 50.0;
/// A ford this close to the day's line is crossed, metres.
pub const FORD_RADIUS_M: f64 = 25.0;
/// Accommodation candidates this close to the day's end, metres.
pub const ACCOMMODATION_RADIUS_M: f64 = 5_000.0;
/// Candidates judged for seasonal closure (the nearest).
pub const ACCOMMODATION_CANDIDATES: usize = 5;

fn action_point(feature: &Feature, kind: &str) -> Value {
    json!({ "kind": kind, "name": feature.name, "lat": feature.lat, "lon": feature.lon })
}

fn nearest<'f>(
    features: impl Iterator<Item = &'f Feature>,
    to: (f64, f64),
) -> Option<(&'f Feature, f64)> {
    features
        .map(|f| (f, haversine_m(to, (f.lat, f.lon))))
        .filter(|(_, d)| d.is_finite())
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

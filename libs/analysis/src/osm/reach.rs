//! How far off the route a place is still "along the way", by kind. A rider leaves the
//! route for water or a bakery only briefly, for a bike shop or a station farther; beyond
//! its reach a place is not listed along the day and no rule counts it as on the way.
//!
//! The defaults follow what riders accept and what route planners show: Komoot's and
//! RideWithGPS's points along a route sit a few hundred metres off it; a detour of a
//! kilometre for repairs and two for a train home are common advice in touring guides.
//! Places to sleep have their own reach, the nights' (`MAX_OFF_ROUTE_M` in the domain).

/// Two passes of a route by one place closer than this along the route are one (the
/// nearer stands for both), metres: a hairpin that comes back by a fountain is one visit,
/// the way back of an out-and-back another.
pub const PASS_APART_M: f64 = 1_000.0;

/// The reach of each kind of place, metres off the route.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reach {
    /// Drinking water.
    pub water_m: f64,
    /// Food: shops, bakeries, restaurants, cafés, fuel stations.
    pub food_m: f64,
    /// Bike shops; a public repair stand is water's reach (it is a stop, not a service).
    pub bike_shop_m: f64,
    /// Railway stations.
    pub station_m: f64,
}

/// Water within 300 m.
pub const WATER_REACH_M: f64 = 300.0;
/// Food within 500 m.
pub const FOOD_REACH_M: f64 = 500.0;
/// A bike shop within 1 km.
pub const BIKE_SHOP_REACH_M: f64 = 1_000.0;
/// A station within 2 km.
pub const STATION_REACH_M: f64 = 2_000.0;

impl Default for Reach {
    fn default() -> Self {
        Self {
            water_m: WATER_REACH_M,
            food_m: FOOD_REACH_M,
            bike_shop_m: BIKE_SHOP_REACH_M,
            station_m: STATION_REACH_M,
        }
    }
}

impl Reach {
    /// Every reach scaled by `factor` (a rider who detours more, or less), within
    /// [0.25, 4] of the defaults; a factor that is not a positive number keeps them.
    pub fn scaled(factor: f64) -> Self {
        let f = if factor.is_finite() && factor > 0.0 {
            factor.clamp(0.25, 4.0)
        } else {
            1.0
        };
        let d = Self::default();
        Self {
            water_m: d.water_m * f,
            food_m: d.food_m * f,
            bike_shop_m: d.bike_shop_m * f,
            station_m: d.station_m * f,
        }
    }

    /// The widest reach: what a source must search along the line.
    pub fn widest_m(&self) -> f64 {
        self.water_m
            .max(self.food_m)
            .max(self.bike_shop_m)
            .max(self.station_m)
    }
}

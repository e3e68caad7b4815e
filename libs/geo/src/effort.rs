//! Effort: how much a climb weighs against distance, the one rule that sizes days and times
//! them. A day's effort is its distance plus its climbing converted to flat kilometres:
//!
//! ```text
//! effort km = km + D+ / m        riding hours = effort km / average speed
//! ```
//!
//! with D+ the day's climbing in metres and m the rider's `elevationPenalty` (metres of
//! climbing that cost as much as one flat kilometre; 50 by default). The daily maximum
//! (`maxDistancePerDay`) bounds a day's effort, so a hilly day is shorter in kilometres and
//! longer in hours than a flat one at the same setting, and a flat day is exactly as before.
//!
//! Where the form and the default come from: it is Naismith's rule (walking: an hour per
//! 5 km plus an hour per 600 m, i.e. 120 m ≈ 1 km; Scarf's equivalence generalises it to
//! "distance plus climbing times a factor") carried over to cycling, as the "1 h per 15 km
//! plus 1 h per 500 m" rules of touring guides do (33 m ≈ 1 km at 15 km/h). A power model
//! gives the same order: lifting 100 kg (rider, bike, luggage) at a touring rider's 120 W
//! climbs 440 m an hour (29 m ≈ 1 km at 15 km/h), and the descent gives part of it back.
//! The default 50 m sits between the climb alone and the climb net of the descent; riders
//! who climb slower set 30, strong or e-bike riders 80 or more.

/// `elevationPenalty` when a caller has none (the product's default).
pub const DEFAULT_CLIMB_M_PER_FLAT_KM: f64 = 50.0;

/// A day's effort in flat kilometres: `distance_km + ascent_m / climb_m_per_flat_km`.
/// Unknown or non-finite climbing, and a non-positive or non-finite conversion, add
/// nothing (a route without heights is reckoned by its distance, never made up).
pub fn effort_km(distance_km: f64, ascent_m: Option<f64>, climb_m_per_flat_km: f64) -> f64 {
    let distance = if distance_km.is_finite() {
        distance_km.max(0.0)
    } else {
        0.0
    };
    let climb = match ascent_m {
        Some(a)
            if a.is_finite() && climb_m_per_flat_km.is_finite() && climb_m_per_flat_km > 0.0 =>
        {
            a.max(0.0) / climb_m_per_flat_km
        }
        _ => 0.0,
    };
    distance + climb
}

/// Hours in the saddle: the day's effort at the average speed (a non-positive or non-finite
/// speed gives 0 hours rather than infinity; callers clamp speeds to their range first).
pub fn riding_hours(
    distance_km: f64,
    ascent_m: Option<f64>,
    climb_m_per_flat_km: f64,
    average_speed_kmh: f64,
) -> f64 {
    if !(average_speed_kmh.is_finite() && average_speed_kmh > 0.0) {
        return 0.0;
    }
    effort_km(distance_km, ascent_m, climb_m_per_flat_km) / average_speed_kmh
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_day_is_its_distance_and_a_hilly_one_weighs_its_climb() {
        assert_eq!(effort_km(60.0, Some(0.0), 50.0), 60.0);
        assert_eq!(effort_km(60.0, None, 50.0), 60.0);
        // 1,000 m of climbing at 50 m per flat km: 20 km more, 1 h 20 more at 15 km/h.
        assert_eq!(effort_km(60.0, Some(1_000.0), 50.0), 80.0);
        let flat = riding_hours(60.0, Some(0.0), 50.0, 15.0);
        let hilly = riding_hours(60.0, Some(1_000.0), 50.0, 15.0);
        assert!((flat - 4.0).abs() < 1e-9 && (hilly - 80.0 / 15.0).abs() < 1e-9);
    }

    #[test]
    fn nonsense_adds_nothing_and_never_panics() {
        assert_eq!(effort_km(f64::NAN, Some(500.0), 50.0), 10.0);
        assert_eq!(effort_km(10.0, Some(f64::INFINITY), 50.0), 10.0);
        assert_eq!(effort_km(10.0, Some(500.0), 0.0), 10.0);
        assert_eq!(effort_km(-5.0, Some(-100.0), 50.0), 0.0);
        assert_eq!(riding_hours(10.0, None, 50.0, 0.0), 0.0);
    }
}

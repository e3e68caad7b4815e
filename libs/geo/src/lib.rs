//! Great-circle distance on a spherical Earth, the one formula every Etappe crate measures
//! with, so a day's length, a gap between stages, an accommodation's distance and an
//! exported course agree to the last metre.
//!
//! A sphere of the IUGG mean radius is within 0.5 % of the ellipsoid over any bearing, far
//! below what a cycling distance, a 100 m continuity threshold or a map display can notice.
//! The crate has no dependencies so that the lowest crates (the event model, the pure
//! workers) can use it without taking on anything else.

#![forbid(unsafe_code)]

pub mod effort;
pub mod polyline;

pub use polyline::{Pass, Polyline};

/// Mean Earth radius (IUGG), metres.
pub const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// Haversine distance in metres between two WGS84 positions given in degrees.
///
/// Not-a-number in any input gives NaN (callers that accept untrusted numbers check
/// `is_finite`); identical points give exactly 0.
pub fn haversine_m(lat_a: f64, lon_a: f64, lat_b: f64, lon_b: f64) -> f64 {
    let (phi_a, phi_b) = (lat_a.to_radians(), lat_b.to_radians());
    haversine_with_cos_m(phi_a, phi_a.cos(), phi_b, phi_b.cos(), lon_b - lon_a)
}

/// Below this angle (radians, about 6.4 km) on both axes a segment is measured with the
/// haversine's series (`sin²(x/2) ≈ x²/4·(1 − x²/12)`, `asin y ≈ y·(1 + y²/6)`), whose
/// first neglected terms are about Δ⁴/360 ≈ 3·10⁻¹⁵ relative there: the same figure to the
/// last micrometre, and a track's thousands of short segments are measured without three
/// transcendental calls each.
const SMALL_ANGLE_RAD: f64 = 1e-3;

/// [`haversine_m`] with the latitudes in radians and their cosines supplied, so a walk
/// along a track computes each cosine once instead of twice. `dlon_deg` is the longitude
/// difference in degrees.
pub fn haversine_with_cos_m(lat_a: f64, cos_a: f64, lat_b: f64, cos_b: f64, dlon_deg: f64) -> f64 {
    let dlat = lat_b - lat_a;
    let dlon = dlon_deg.to_radians();
    if dlat.abs() < SMALL_ANGLE_RAD && dlon.abs() < SMALL_ANGLE_RAD {
        let (a, b) = (dlat * dlat, dlon * dlon);
        let h = 0.25 * (a * (1.0 - a / 12.0) + cos_a * cos_b * b * (1.0 - b / 12.0));
        return 2.0 * EARTH_RADIUS_M * h.sqrt() * (1.0 + h / 6.0);
    }
    exact_haversine_m(lat_a, cos_a, lat_b, cos_b, dlon)
}

/// The cosines of the latitudes along a track, each from the one before by the angle-addition
/// formula (`cos(φ+δ) = cos φ·cos δ − sin φ·sin δ`, with `δ`'s own cosine and sine by their
/// series below [`SMALL_ANGLE_RAD`]): a walk along thousands of close points pays a few
/// multiplications per point instead of a cosine. The exact cosine is taken again after a
/// long step and every [`CosineWalk::REANCHOR`] steps, so rounding cannot build up (the
/// walk stays within 1e-14 of `cos`, tested).
#[derive(Clone, Copy, Debug)]
pub struct CosineWalk {
    lat: f64,
    sin: f64,
    cos: f64,
    steps: u32,
}

impl CosineWalk {
    /// Steps between two exact cosines.
    pub const REANCHOR: u32 = 64;

    /// A walk starting at `lat` (radians).
    pub fn new(lat: f64) -> Self {
        let (sin, cos) = lat.sin_cos();
        Self {
            lat,
            sin,
            cos,
            steps: 0,
        }
    }

    /// The cosine of `lat` (radians), the walk's next latitude.
    pub fn cos(&mut self, lat: f64) -> f64 {
        let d = lat - self.lat;
        if d.abs() < SMALL_ANGLE_RAD && self.steps < Self::REANCHOR {
            let d2 = d * d;
            let cos_d = 1.0 - 0.5 * d2 * (1.0 - d2 / 12.0);
            let sin_d = d * (1.0 - d2 / 6.0 * (1.0 - d2 / 20.0));
            (self.sin, self.cos) = (
                self.sin * cos_d + self.cos * sin_d,
                self.cos * cos_d - self.sin * sin_d,
            );
            self.steps += 1;
        } else {
            (self.sin, self.cos) = lat.sin_cos();
            self.steps = 0;
        }
        self.lat = lat;
        self.cos
    }
}

/// The haversine formula itself (`dlon` in radians).
fn exact_haversine_m(lat_a: f64, cos_a: f64, lat_b: f64, cos_b: f64, dlon: f64) -> f64 {
    let s_lat = ((lat_b - lat_a) * 0.5).sin();
    let s_lon = (dlon * 0.5).sin();
    let h = s_lat * s_lat + cos_a * cos_b * s_lon * s_lon;
    // Rounding can push h a hair outside [0, 1] at antipodes (or below 0 for a latitude
    // beyond the poles); asin would then give NaN. `clamp` keeps a NaN input NaN, where
    // `min(1.0)` would have turned it into half the circumference.
    2.0 * EARTH_RADIUS_M * h.clamp(0.0, 1.0).sqrt().asin()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_distances() {
        // One degree of latitude on this sphere: R·π/180.
        let one_degree = EARTH_RADIUS_M * std::f64::consts::PI / 180.0;
        assert!((haversine_m(47.0, 8.0, 48.0, 8.0) - one_degree).abs() < 1e-6);
        // Paris–London, about 343.5 km on the sphere.
        let d = haversine_m(48.8530, 2.3499, 51.5073, -0.12755);
        assert!((d - 343_500.0).abs() < 1_500.0, "{d}");
        // Antipodes: half the circumference, not NaN.
        let half = std::f64::consts::PI * EARTH_RADIUS_M;
        assert!((haversine_m(0.0, 0.0, 0.0, 180.0) - half).abs() < 1e-6);
        assert!((haversine_m(90.0, 0.0, -90.0, 0.0) - half).abs() < 1e-6);
    }

    #[test]
    fn identical_points_are_zero_and_symmetry_holds() {
        assert_eq!(haversine_m(10.0, 20.0, 10.0, 20.0), 0.0);
        let (a, b) = (
            haversine_m(45.0, 6.0, 45.5, 6.7),
            haversine_m(45.5, 6.7, 45.0, 6.0),
        );
        assert!((a - b).abs() < 1e-9);
        // Across the antimeridian the short way round is measured.
        assert!(haversine_m(0.0, 179.9, 0.0, -179.9) < 23_000.0);
    }

    #[test]
    fn short_segments_measure_as_the_exact_formula_does() {
        // A reproducible spread of segments up to the small-angle limit at every latitude a
        // ride can have, each compared with the exact haversine.
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..100_000 {
            let lat = (next() - 0.5) * 160.0;
            let lon = (next() - 0.5) * 360.0;
            let dlat = (next() - 0.5) * 0.114;
            let dlon = (next() - 0.5) * 0.114;
            let (a, b) = (lat.to_radians(), (lat + dlat).to_radians());
            let fast = haversine_with_cos_m(a, a.cos(), b, b.cos(), dlon);
            let exact = exact_haversine_m(a, a.cos(), b, b.cos(), dlon.to_radians());
            assert!(
                (fast - exact).abs() <= 1e-12 * exact + 1e-9,
                "{lat},{lon} +{dlat},{dlon}: {fast} vs {exact}"
            );
        }
    }

    #[test]
    fn a_cosine_walk_stays_with_the_cosine() {
        // Tracks of close points (a few metres to a few km apart, north and south, across
        // the equator and near the poles) and long jumps between them.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for start in [-89.0_f64, -45.0, -0.01, 0.0, 30.0, 47.1, 70.0, 89.9] {
            let mut lat = start.to_radians();
            let mut walk = CosineWalk::new(lat);
            for i in 0..20_000 {
                let step = if i % 5_000 == 4_999 {
                    (next() - 0.5) * 0.2
                } else {
                    (next() - 0.5) * 1.8e-3
                };
                let pole = std::f64::consts::FRAC_PI_2 - 1e-4;
                lat = (lat + step).clamp(-pole, pole);
                let walked = walk.cos(lat);
                assert!(
                    (walked - lat.cos()).abs() <= 1e-14,
                    "from {start}° step {i}: {walked} vs {}",
                    lat.cos()
                );
            }
        }
        let mut walk = CosineWalk::new(0.5);
        assert!(walk.cos(f64::NAN).is_nan());
        assert_eq!(walk.cos(0.25), 0.25_f64.cos());
    }

    #[test]
    fn not_a_number_stays_not_a_number() {
        assert!(haversine_m(f64::NAN, 0.0, 0.0, 0.0).is_nan());
        assert!(haversine_m(0.0, 0.0, 0.0, f64::NAN).is_nan());
    }

    #[test]
    fn supplied_cosines_give_the_same_distance() {
        let (a, b) = (45.1_f64.to_radians(), 45.3_f64.to_radians());
        let with_cos = haversine_with_cos_m(a, a.cos(), b, b.cos(), 6.4 - 6.0);
        assert_eq!(with_cos, haversine_m(45.1, 6.0, 45.3, 6.4));
    }
}

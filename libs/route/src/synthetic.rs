//! Deterministic synthetic routes with a known length and elevation
//! profile, so tests can assert exact day boundaries and climbing totals,
//! and the benchmark can build large inputs without shipping data files.
//!
//! A route starts at (45.0° N, 6.0° E) and heads roughly east: the bearing
//! swings ±15° around due east with a 5 km period, so the track is not a
//! straight line (simplification has something to do) but every step is
//! exactly `spacing_m` long on the sphere of [`EARTH_RADIUS_M`].

use std::f64::consts::TAU;
use std::fmt::Write;

use crate::TrackPoint;
use crate::geometry::EARTH_RADIUS_M;

/// Start of every synthetic route (latitude, longitude).
pub const START: (f64, f64) = (45.0, 6.0);
/// Elevation of a flat route and the foot of every profile, metres.
pub const BASE_ELEVATION_M: f64 = 200.0;
const WIGGLE_DEG: f64 = 15.0;
const WIGGLE_PERIOD_M: f64 = 5_000.0;
/// Refuse to allocate more than this many points (≈ 480 MB); the generator
/// is for tests and benchmarks, not for exhausting memory by a typo.
const MAX_POINTS: usize = 20_000_000;

/// Elevation as a function of the distance travelled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Profile {
    /// Constant [`BASE_ELEVATION_M`].
    Flat,
    /// A steady climb of `gain_m` from start to finish.
    Ramp { gain_m: f64 },
    /// Repeated climbs: each `period_km` climbs `height_m` (a cosine hill)
    /// and descends it again. Over k whole periods: gain = loss = k·height.
    Climbs { height_m: f64, period_km: f64 },
    /// Flat with uniform noise in ±`amplitude_m`, reproducible from `seed`.
    Noisy { amplitude_m: f64, seed: u64 },
}

/// Generates a route of `total_km` with points every `spacing_m` metres (the
/// last step is shorter when `spacing_m` does not divide the length), so the
/// result has `ceil(total_km·1000 / spacing_m) + 1` points. Non-positive or
/// non-finite arguments give just the start point.
pub fn synthetic_route(total_km: f64, spacing_m: f64, profile: Profile) -> Vec<TrackPoint> {
    let total_m = total_km * 1000.0;
    let mut rng = match profile {
        Profile::Noisy { seed, .. } => XorShift::new(seed),
        _ => XorShift::new(0),
    };
    let mut elevation = |d: f64| match profile {
        Profile::Flat => BASE_ELEVATION_M,
        Profile::Ramp { gain_m } => BASE_ELEVATION_M + gain_m * d / total_m,
        Profile::Climbs {
            height_m,
            period_km,
        } => BASE_ELEVATION_M + height_m * 0.5 * (1.0 - (TAU * d / (period_km * 1000.0)).cos()),
        Profile::Noisy { amplitude_m, .. } => {
            BASE_ELEVATION_M + amplitude_m * (2.0 * rng.unit() - 1.0)
        }
    };
    let mut points = vec![TrackPoint {
        lat: START.0,
        lon: START.1,
        ele: Some(elevation(0.0)),
    }];
    let valid = total_m.is_finite() && spacing_m.is_finite() && total_m > 0.0 && spacing_m > 0.0;
    if !valid {
        return points;
    }
    let steps = (total_m / spacing_m).ceil();
    if steps >= MAX_POINTS as f64 {
        return points;
    }
    let steps = steps as usize;
    points.reserve(steps);
    let (mut lat, mut lon) = (START.0.to_radians(), START.1.to_radians());
    let mut travelled = 0.0;
    for i in 1..=steps {
        let target = (i as f64 * spacing_m).min(total_m);
        let step = target - travelled;
        let bearing = (90.0 + WIGGLE_DEG * (TAU * travelled / WIGGLE_PERIOD_M).sin()).to_radians();
        (lat, lon) = destination(lat, lon, bearing, step / EARTH_RADIUS_M);
        travelled = target;
        points.push(TrackPoint {
            lat: lat.to_degrees(),
            lon: lon.to_degrees(),
            ele: Some(elevation(travelled)),
        });
    }
    points
}

/// Point reached from (lat, lon) along `bearing` for `angle` radians of arc.
fn destination(lat: f64, lon: f64, bearing: f64, angle: f64) -> (f64, f64) {
    let (sin_lat, cos_lat) = lat.sin_cos();
    let (sin_a, cos_a) = angle.sin_cos();
    let lat2 = (sin_lat * cos_a + cos_lat * sin_a * bearing.cos()).asin();
    let lon2 = lon + (bearing.sin() * sin_a * cos_lat).atan2(cos_a - sin_lat * lat2.sin());
    (lat2, lon2)
}

/// Writes `points` as one GPX 1.1 track named `name` (lat/lon to 1e-7°,
/// about 1 cm; elevation to 1 cm).
pub fn to_gpx(points: &[TrackPoint], name: &str) -> String {
    let mut out = String::with_capacity(256 + points.len() * 72);
    let mut escaped = String::with_capacity(name.len());
    crate::xml::push_escaped(&mut escaped, name);
    let name = escaped;
    out.push_str(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <gpx version=\"1.1\" creator=\"etappe route synthetic\" \
         xmlns=\"http://www.topografix.com/GPX/1/1\">\n",
    );
    // Writing into a String cannot fail; the fmt::Result is ignored.
    let _ = writeln!(out, " <metadata><name>{name}</name></metadata>");
    let _ = writeln!(out, " <trk><name>{name}</name><trkseg>");
    for p in points {
        let _ = write!(out, "  <trkpt lat=\"{:.7}\" lon=\"{:.7}\">", p.lat, p.lon);
        if let Some(e) = p.ele {
            let _ = write!(out, "<ele>{e:.2}</ele>");
        }
        out.push_str("</trkpt>\n");
    }
    out.push_str(" </trkseg></trk>\n</gpx>\n");
    out
}

/// xorshift64*: tiny, fast and reproducible; quality is ample for noise.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        // Zero is a fixed point of xorshift; mix the seed so 0 works too.
        Self(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        // 53 high bits → uniform in [0, 1).
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{cumulative_distances, haversine_m};
    use crate::parse_gpx;

    #[test]
    fn length_spacing_and_direction_are_exact() {
        let pts = synthetic_route(12.345, 100.0, Profile::Flat);
        assert_eq!(pts.len(), 125);
        for w in pts.windows(2).take(pts.len() - 2) {
            assert!((haversine_m(&w[0], &w[1]) - 100.0).abs() < 1e-6);
        }
        let total = cumulative_distances(&pts)
            .last()
            .copied()
            .unwrap_or_default();
        assert!((total - 12_345.0).abs() < 1e-6, "{total}");
        let end = pts.last().expect("points");
        assert!(end.lon > START.1 + 0.1, "heads east");
        assert!((end.lat - START.0).abs() < 0.05, "roughly east");
    }

    #[test]
    fn profiles_follow_their_formula() {
        let ramp = synthetic_route(10.0, 1000.0, Profile::Ramp { gain_m: 500.0 });
        assert_eq!(ramp.last().and_then(|p| p.ele), Some(700.0));
        let hills = synthetic_route(
            20.0,
            1000.0,
            Profile::Climbs {
                height_m: 100.0,
                period_km: 10.0,
            },
        );
        let top = hills.get(5).and_then(|p| p.ele).expect("ele");
        assert!((top - 300.0).abs() < 1e-9);
        let a = synthetic_route(
            1.0,
            10.0,
            Profile::Noisy {
                amplitude_m: 3.0,
                seed: 1,
            },
        );
        let b = synthetic_route(
            1.0,
            10.0,
            Profile::Noisy {
                amplitude_m: 3.0,
                seed: 1,
            },
        );
        assert_eq!(a, b, "deterministic");
        assert!(
            a.iter()
                .all(|p| p.ele.is_some_and(|e| (e - 200.0).abs() <= 3.0))
        );
    }

    #[test]
    fn degenerate_arguments_give_the_start_point() {
        assert_eq!(synthetic_route(0.0, 10.0, Profile::Flat).len(), 1);
        assert_eq!(synthetic_route(10.0, 0.0, Profile::Flat).len(), 1);
        assert_eq!(synthetic_route(f64::NAN, 10.0, Profile::Flat).len(), 1);
        assert_eq!(synthetic_route(1e12, 1.0, Profile::Flat).len(), 1);
    }

    #[test]
    fn gpx_output_round_trips() {
        let pts = synthetic_route(5.0, 50.0, Profile::Ramp { gain_m: 100.0 });
        let gpx = to_gpx(&pts, "Étape <1> & \"co\"\u{1}");
        let parsed = parse_gpx(gpx.as_bytes()).expect("valid gpx");
        assert_eq!(parsed.name.as_deref(), Some("Étape <1> & \"co\""));
        let back = parsed.tracks.first().expect("one track");
        assert_eq!(back.len(), pts.len());
        for (a, b) in pts.iter().zip(back) {
            assert!((a.lat - b.lat).abs() < 1e-7 && (a.lon - b.lon).abs() < 1e-7);
            let (ea, eb) = (a.ele.unwrap_or_default(), b.ele.unwrap_or_default());
            assert!((ea - eb).abs() <= 0.005 + 1e-9);
        }
    }
}

//! Small geodesy helpers shared by the exporters: coordinate sanitising, great-circle
//! distances (from `etappe-geo`) and the FIT semicircle conversion.

use crate::ExportPoint;

/// Great-circle distance in metres between two positions given in degrees (Etappe's one
/// formula, so a course's distance matches the day's length in the app).
pub(crate) use etappe_geo::haversine_m;

/// A position that both formats can hold, or `None` if it cannot be written at all.
///
/// Latitude is clamped rather than rejected because a value like 90.000000001 is
/// rounding noise from an upstream projection, not a wrong point. Longitude is wrapped
/// because GPX's schema requires [-180, 180) and 180° itself would overflow an `i32`
/// semicircle.
pub(crate) fn sanitize(lat: f64, lon: f64) -> Option<(f64, f64)> {
    if !lat.is_finite() || !lon.is_finite() {
        return None;
    }
    let lat = lat.clamp(-90.0, 90.0);
    let mut lon = (lon + 180.0).rem_euclid(360.0) - 180.0;
    // rem_euclid can return exactly 360.0 - ulp rounding to 180.0 for tiny negative inputs;
    // fold that back so the half-open interval holds.
    if lon >= 180.0 {
        lon -= 360.0;
    }
    // Adding 0.0 turns -0.0 into 0.0 so output text never shows "-0.0000000".
    Some((lat + 0.0, lon + 0.0))
}

/// A sanitised copy of a route point, dropping an elevation that is not finite.
pub(crate) fn sanitize_point(p: &ExportPoint) -> Option<ExportPoint> {
    let (lat, lon) = sanitize(p.lat, p.lon)?;
    let ele = p.ele.filter(|e| e.is_finite()).map(|e| e + 0.0);
    Some(ExportPoint { lat, lon, ele })
}

/// Degrees to FIT semicircles (2^31 semicircles = 180°).
///
/// The result is clamped below `i32::MAX` because 0x7FFFFFFF is FIT's "invalid" marker
/// for `sint32`; a point at exactly +180° would otherwise read back as "no position".
pub(crate) fn to_semicircles(deg: f64) -> i32 {
    let sc = (deg * (2_147_483_648.0 / 180.0)).round();
    let clamped = sc.clamp(f64::from(i32::MIN), f64::from(i32::MAX - 1));
    // The clamp above makes the cast exact.
    clamped as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_wraps_and_clamps() {
        assert_eq!(sanitize(10.0, 180.0), Some((10.0, -180.0)));
        assert_eq!(sanitize(10.0, 190.0), Some((10.0, -170.0)));
        assert_eq!(sanitize(10.0, -180.0), Some((10.0, -180.0)));
        assert_eq!(sanitize(95.0, 0.0), Some((90.0, 0.0)));
        assert_eq!(sanitize(f64::NAN, 0.0), None);
        assert_eq!(sanitize(0.0, f64::INFINITY), None);
        let (lat, lon) = sanitize(-0.0, -0.0).unwrap_or((1.0, 1.0));
        assert!(lat.is_sign_positive() && lon.is_sign_positive());
    }

    #[test]
    fn semicircles_round_trip_and_limits() {
        assert_eq!(to_semicircles(0.0), 0);
        assert_eq!(to_semicircles(90.0), 1 << 30);
        assert_eq!(to_semicircles(-180.0), i32::MIN);
        assert_eq!(to_semicircles(180.0), i32::MAX - 1);
        let back = f64::from(to_semicircles(48.123_456_7)) * 180.0 / 2_147_483_648.0;
        assert!((back - 48.123_456_7).abs() < 1e-7);
    }
}

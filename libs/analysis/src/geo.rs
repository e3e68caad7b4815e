//! Great-circle distance.
//!
//! Only short distances between stage ends are measured here, so a spherical
//! Earth (haversine) is plenty: its error (< 0.5 %) is far below the 100 m /
//! 500 m thresholds it feeds.

pub use etappe_geo::EARTH_RADIUS_M;

/// Haversine distance in metres between two (lat, lon) pairs in degrees
/// (Etappe's one formula, `etappe_geo::haversine_m`).
/// Returns NaN if any input is NaN; callers check `is_finite`.
pub fn haversine_m(a: (f64, f64), b: (f64, f64)) -> f64 {
    etappe_geo::haversine_m(a.0, a.1, b.0, b.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_distances() {
        // One degree of latitude ≈ 111.2 km on this sphere.
        let d = haversine_m((45.0, 5.0), (46.0, 5.0));
        assert!((d - 111_195.0).abs() < 10.0, "{d}");
        // Paris (Notre-Dame) to London (Charing Cross) ≈ 343.5 km.
        let d = haversine_m((48.8530, 2.3499), (51.5080, -0.1247));
        assert!((d - 343_500.0).abs() < 1_500.0, "{d}");
        assert_eq!(haversine_m((10.0, 10.0), (10.0, 10.0)), 0.0);
        // Antipodes do not produce NaN.
        let d = haversine_m((0.0, 0.0), (0.0, 180.0));
        assert!(d.is_finite());
    }
}

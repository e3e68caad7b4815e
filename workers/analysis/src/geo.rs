//! Great-circle distance.
//!
//! Only short distances between stage ends are measured here, so a spherical
//! Earth (haversine) is plenty: its error (< 0.5 %) is far below the 100 m /
//! 500 m thresholds it feeds.

/// Mean Earth radius in metres (IUGG), the usual choice for haversine.
pub const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// Haversine distance in metres between two (lat, lon) pairs in degrees.
/// Returns NaN if any input is NaN; callers check `is_finite`.
pub fn haversine_m(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (lat1, lon1) = (a.0.to_radians(), a.1.to_radians());
    let (lat2, lon2) = (b.0.to_radians(), b.1.to_radians());
    let dlat = lat2 - lat1;
    let dlon = lon2 - lon1;
    let h = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
    // Clamp because rounding can push `h` a hair above 1 for antipodes,
    // which would make `sqrt(1 - h)` NaN.
    let h = h.clamp(0.0, 1.0);
    2.0 * EARTH_RADIUS_M * h.sqrt().atan2((1.0 - h).sqrt())
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

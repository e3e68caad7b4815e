//! Great-circle distances: the only geometry the adapters need, kept in one
//! place so accommodation distances and router estimates agree.

const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// Haversine distance in metres between two WGS84 positions.
pub(crate) fn haversine_m(lat_a: f64, lon_a: f64, lat_b: f64, lon_b: f64) -> f64 {
    let (phi_a, phi_b) = (lat_a.to_radians(), lat_b.to_radians());
    let d_phi = (lat_b - lat_a).to_radians();
    let d_lambda = (lon_b - lon_a).to_radians();
    let h =
        (d_phi / 2.0).sin().powi(2) + phi_a.cos() * phi_b.cos() * (d_lambda / 2.0).sin().powi(2);
    // Rounding can push h a hair above 1 for antipodal points; asin would give NaN.
    2.0 * EARTH_RADIUS_M * h.clamp(0.0, 1.0).sqrt().asin()
}

pub(crate) fn is_valid_position(lat: f64, lon: f64) -> bool {
    lat.is_finite()
        && lon.is_finite()
        && (-90.0..=90.0).contains(&lat)
        && (-180.0..=180.0).contains(&lon)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_degree_of_latitude_is_about_111_km() {
        let d = haversine_m(47.0, 8.0, 48.0, 8.0);
        assert!((d - 111_195.0).abs() < 50.0, "{d}");
        assert_eq!(haversine_m(47.0, 8.0, 47.0, 8.0), 0.0);
    }

    #[test]
    fn rejects_impossible_positions() {
        assert!(is_valid_position(47.99, 7.85));
        assert!(!is_valid_position(91.0, 7.85));
        assert!(!is_valid_position(f64::NAN, 7.85));
        assert!(!is_valid_position(47.0, 180.5));
    }
}

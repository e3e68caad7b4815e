//! Great-circle distances: the only geometry the adapters need, kept in one
//! place so accommodation distances and router estimates agree.

/// Haversine distance in metres between two WGS84 positions (Etappe's one formula).
pub(crate) use etappe_geo::haversine_m;

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
    fn rejects_impossible_positions() {
        assert!(is_valid_position(47.99, 7.85));
        assert!(!is_valid_position(91.0, 7.85));
        assert!(!is_valid_position(f64::NAN, 7.85));
        assert!(!is_valid_position(47.0, 180.5));
    }
}

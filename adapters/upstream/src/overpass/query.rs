//! Overpass QL and cache keys for an accommodation search. Both use the
//! same rounded position so a cached answer is exactly the answer to its key.

use super::AccommodationType;

/// Overpass's own limit for the query; public instances kill longer ones.
const SERVER_TIMEOUT_S: u32 = 25;

/// Coordinates rounded to 4 decimals (~11 m): close enough for "near the
/// end of the day", coarse enough that replanning hits the cache.
pub(crate) fn rounded(coordinate: f64) -> f64 {
    // Adding 0.0 turns -0.0 into 0.0 so both spell the same cache key.
    (coordinate * 10_000.0).round() / 10_000.0 + 0.0
}

/// Deduplicated tourism values in a stable order for keys and queries.
pub(crate) fn tourism_values(types: &[AccommodationType]) -> Vec<&'static str> {
    let mut values: Vec<&'static str> = types.iter().map(|kind| kind.as_str()).collect();
    values.sort_unstable();
    values.dedup();
    values
}

pub(crate) fn build_query(lat: f64, lon: f64, radius_m: u32, tourism: &[&str]) -> String {
    let alternatives = tourism.join("|");
    format!(
        "[out:json][timeout:{SERVER_TIMEOUT_S}];\
         nwr[\"tourism\"~\"^({alternatives})$\"](around:{radius_m},{lat:.4},{lon:.4});\
         out center tags;"
    )
}

pub(crate) fn cache_key(lat: f64, lon: f64, radius_m: u32, tourism: &[&str]) -> String {
    format!(
        "overpass:accommodations:v1:{lat:.4}:{lon:.4}:{radius_m}:{}",
        tourism.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_an_around_query_for_the_chosen_types() {
        let tourism = tourism_values(&[
            AccommodationType::Hotel,
            AccommodationType::CampSite,
            AccommodationType::Hotel,
        ]);
        assert_eq!(
            build_query(rounded(47.99901), rounded(7.842049), 2000, &tourism),
            r#"[out:json][timeout:25];nwr["tourism"~"^(camp_site|hotel)$"](around:2000,47.9990,7.8420);out center tags;"#
        );
    }

    #[test]
    fn cache_keys_ignore_type_order_and_tiny_moves() {
        let a = tourism_values(&[AccommodationType::Hostel, AccommodationType::Hotel]);
        let b = tourism_values(&[AccommodationType::Hotel, AccommodationType::Hostel]);
        assert_eq!(
            cache_key(rounded(47.123_41), rounded(7.5), 1500, &a),
            cache_key(rounded(47.123_39), rounded(7.500_01), 1500, &b)
        );
        assert_ne!(
            cache_key(rounded(47.1234), rounded(7.5), 1500, &a),
            cache_key(rounded(47.1234), rounded(7.5), 1600, &a)
        );
        assert_eq!(format!("{:.4}", rounded(-0.000_01)), "0.0000");
    }
}

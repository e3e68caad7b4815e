//! What the importer keeps of an OSM object: whether it is a point the rules read (through
//! the same [`FeatureKind::classify`] Overpass results go through), a road way, a ferry
//! line, and which of its tags are worth storing. Everything else in an extract (buildings,
//! land use, addresses, most nodes) is skipped, which is what keeps the index small.

use std::collections::BTreeMap;

use etappe_analysis::osm::{FEATURE_KEYS, FERRY_KEYS, FeatureKind, WaySection};

/// Tags kept on a point besides the analysis's own ([`FEATURE_KEYS`]): the ones an
/// accommodation's description and price estimate read.
const ACCOMMODATION_KEYS: &[&str] = &[
    "url",
    "phone",
    "charge",
    "fee",
    "stars",
    "backcountry",
    "tents",
    "caravans",
];
/// Key prefixes kept on a point (addresses and contacts of accommodations).
const POINT_PREFIXES: &[&str] = &["addr:", "contact:"];
/// A stored tag value longer than this is cut (OSM allows 255 characters; a longer one in a
/// file is not OSM data).
const MAX_VALUE_CHARS: usize = 255;

/// One object's tags, looked up by key (a handful per object, so a list beats a map).
#[derive(Debug, Default)]
pub(crate) struct Tags<'a>(Vec<(&'a str, &'a str)>);

impl<'a> Tags<'a> {
    pub(crate) fn collect(iter: impl Iterator<Item = (&'a str, &'a str)>) -> Self {
        Self(iter.collect())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every `(key, value)`.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&'a str, &'a str)> + '_ {
        self.0.iter().copied()
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a str> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// The point kind, if the analysis reads this object as a point.
    pub(crate) fn point_kind(&self) -> Option<FeatureKind> {
        FeatureKind::classify(|k| self.get(k))
    }

    /// Whether this way is a road way the surface and traffic rules read.
    pub(crate) fn is_road(&self) -> bool {
        self.get("highway").is_some_and(WaySection::is_road)
    }

    /// Whether this way is a ferry line.
    pub(crate) fn is_ferry(&self) -> bool {
        self.get("route") == Some("ferry")
    }

    /// The kept tags of a point, as JSON text.
    pub(crate) fn point_json(&self) -> String {
        self.json(|k| {
            FEATURE_KEYS.contains(&k)
                || ACCOMMODATION_KEYS.contains(&k)
                || POINT_PREFIXES.iter().any(|p| k.starts_with(p))
        })
    }

    /// The kept tags of a road way, as JSON text.
    pub(crate) fn road_json(&self) -> String {
        self.json(|k| WaySection::TAG_KEYS.contains(&k))
    }

    /// The kept tags of a ferry line, as JSON text.
    pub(crate) fn ferry_json(&self) -> String {
        self.json(|k| FERRY_KEYS.contains(&k))
    }

    fn json(&self, keep: impl Fn(&str) -> bool) -> String {
        let kept: BTreeMap<&str, String> = self
            .0
            .iter()
            .filter(|(k, _)| keep(k))
            .map(|(k, v)| (*k, v.chars().take(MAX_VALUE_CHARS).collect()))
            .collect();
        serde_json::to_string(&kept).unwrap_or_else(|_| "{}".to_owned())
    }
}

/// The family a point kind is stored under (`osm_point.kind`), so searches around a place
/// read only their class's rows.
pub(crate) fn family(kind: FeatureKind) -> &'static str {
    match kind {
        FeatureKind::DrinkingWater => "water",
        FeatureKind::Food(_) => "food",
        FeatureKind::BikeShop { .. } => "bike_shop",
        FeatureKind::RepairStation => "repair_station",
        FeatureKind::RailwayStation => "railway_station",
        FeatureKind::Health(_) => "health",
        FeatureKind::Cultural(_) => "cultural",
        FeatureKind::Accommodation(_) => "accommodation",
        FeatureKind::Ford => "ford",
        FeatureKind::Charger => "charger",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_the_rules_read_and_nothing_else() {
        let hotel = Tags::collect(
            [
                ("tourism", "hotel"),
                ("name", "Hôtel"),
                ("addr:city", "Lyon"),
                ("building", "yes"),
                ("roof:shape", "flat"),
            ]
            .into_iter(),
        );
        assert_eq!(
            family(hotel.point_kind().expect("a hotel")),
            "accommodation"
        );
        assert_eq!(
            hotel.point_json(),
            r#"{"addr:city":"Lyon","name":"Hôtel","tourism":"hotel"}"#
        );
        let road =
            Tags::collect([("highway", "primary"), ("name", "N7"), ("lanes", "2")].into_iter());
        assert!(road.is_road() && !road.is_ferry());
        assert_eq!(road.road_json(), r#"{"highway":"primary"}"#);
        assert!(!Tags::collect([("highway", "proposed")].into_iter()).is_road());
        let bench = Tags::collect([("amenity", "bench")].into_iter());
        assert_eq!(bench.point_kind(), None);
        assert!(Tags::collect([("route", "ferry")].into_iter()).is_ferry());
    }
}

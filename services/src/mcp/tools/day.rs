//! A day as an agent reads it (`get_stage`): bounded whatever the day. A city-centre day can
//! pass hundreds of bakeries and taps, and every entry an agent does not need is paid for in
//! its context; so the found list answers with its counts per category and, per category, the
//! few entries a rider would pick: the closest to the route on each stretch of the day. The
//! agent asks for one category (or OpenStreetMap kind) and more entries by `kind` and
//! `limit`; REST keeps the whole list. Accommodations are the nearest few to the day's end
//! (`choose_accommodation` checks against the whole list, so nothing is lost by showing
//! fewer).

use std::collections::BTreeMap;

use etappe_domain::trip::stage::FoundAlong;
use serde_json::{Value, json};

use etappe_app::views::StageSummary;

/// Entries per category when the agent does not ask for more: the closest on each third of
/// the day.
pub const DEFAULT_PER_CATEGORY: u32 = 3;
/// At most this many per category in one answer (a whole city day is REST's).
pub const MAX_PER_CATEGORY: u32 = 25;
/// Accommodations shown by default, the nearest to the day's end first.
pub(super) const DEFAULT_ACCOMMODATIONS: usize = 6;

/// What the agent asked of the found list.
#[derive(Clone, Debug, Default)]
pub(super) struct Ask<'a> {
    /// A category (`water`, `resupply`, `bike_shop`, `railway_station`) or an OpenStreetMap
    /// kind (`bakery`, `drinking_water`…); all categories when absent.
    pub(super) kind: Option<&'a str>,
    /// Entries per category.
    pub(super) limit: u32,
}

/// The day as `get_stage` answers it.
pub(super) fn bounded_day(stage: &StageSummary, version: u64, ask: &Ask<'_>) -> Value {
    let mut value = json!(stage);
    value["version"] = json!(version);
    if let Some(found) = &stage.found {
        value["found"] = bounded_found(found, stage.distance, ask);
    }
    if stage.accommodations.len() > DEFAULT_ACCOMMODATIONS {
        let mut nearest = stage.accommodations.clone();
        nearest.sort_by(|a, b| {
            let d = |x: &etappe_domain::trip::stage::Accommodation| {
                x.distance_to_end_m.unwrap_or(f64::MAX)
            };
            d(a).total_cmp(&d(b))
        });
        nearest.truncate(DEFAULT_ACCOMMODATIONS);
        value["accommodations"] = json!(nearest);
        value["accommodationsTotal"] = json!(stage.accommodations.len());
    }
    value
}

/// Counts per category and the chosen entries, in km order.
fn bounded_found(found: &[FoundAlong], day_km: f64, ask: &Ask<'_>) -> Value {
    let mut by_category: BTreeMap<&str, Vec<&FoundAlong>> = BTreeMap::new();
    for f in found {
        by_category.entry(f.category.as_str()).or_default().push(f);
    }
    let counts: BTreeMap<&str, usize> = by_category.iter().map(|(c, v)| (*c, v.len())).collect();
    let mut entries: Vec<&FoundAlong> = Vec::new();
    for list in by_category.values() {
        let wanted: Vec<&FoundAlong> = match ask.kind {
            None => list.clone(),
            Some(k) => list
                .iter()
                .copied()
                .filter(|f| f.category == k || f.kind == k)
                .collect(),
        };
        entries.extend(closest_per_stretch(&wanted, day_km, ask.limit as usize));
    }
    entries.sort_by(|a, b| a.km.total_cmp(&b.km));
    let shown = entries.len();
    let mut answer = json!({"counts": counts, "entries": entries});
    if shown < found.len() {
        answer["more"] = json!(format!(
            "{shown} of {} shown: the closest to the route on each stretch. get_stage with kind (a category or an OpenStreetMap kind) and limit (up to {MAX_PER_CATEGORY}) for others; REST's stage has them all.",
            found.len()
        ));
    }
    answer
}

/// At most `n` entries: the day cut into `n` equal stretches, the one closest to the route in
/// each; stretches without an entry leave their place to the next closest elsewhere.
fn closest_per_stretch<'a>(list: &[&'a FoundAlong], day_km: f64, n: usize) -> Vec<&'a FoundAlong> {
    if list.len() <= n {
        return list.to_vec();
    }
    let stretch_km = (day_km / n as f64).max(f64::EPSILON);
    let stretch = |f: &FoundAlong| ((f.km / stretch_km).floor().max(0.0) as usize).min(n - 1);
    let mut picked: Vec<usize> = Vec::with_capacity(n);
    for s in 0..n {
        let closest = (0..list.len())
            .filter(|&i| stretch(list[i]) == s)
            .min_by(|&a, &b| list[a].off_route_m.total_cmp(&list[b].off_route_m));
        picked.extend(closest);
    }
    let mut rest: Vec<usize> = (0..list.len()).filter(|i| !picked.contains(i)).collect();
    rest.sort_by(|&a, &b| list[a].off_route_m.total_cmp(&list[b].off_route_m));
    picked.extend(rest.into_iter().take(n.saturating_sub(picked.len())));
    picked.into_iter().map(|i| list[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(category: &str, kind: &str, km: f64, off: f64) -> FoundAlong {
        FoundAlong {
            category: category.to_owned(),
            kind: kind.to_owned(),
            name: None,
            km,
            off_route_m: off,
            lat: 47.0,
            lon: 9.5,
        }
    }

    #[test]
    fn each_stretch_gives_its_closest_entry() {
        // Water at km 1 (80 m off) and km 2 (10 m off) on the first third of a 30 km day,
        // km 15 (200 m) on the second, nothing on the last: the closest of the first, the one
        // of the second, then the next closest elsewhere.
        let list = [
            found("water", "drinking_water", 1.0, 80.0),
            found("water", "drinking_water", 2.0, 10.0),
            found("water", "drinking_water", 15.0, 200.0),
            found("water", "drinking_water", 3.0, 150.0),
        ];
        let refs: Vec<&FoundAlong> = list.iter().collect();
        let picked: Vec<f64> = closest_per_stretch(&refs, 30.0, 3)
            .iter()
            .map(|f| f.km)
            .collect();
        assert_eq!(picked, vec![2.0, 15.0, 1.0]);
    }

    #[test]
    fn a_city_day_answers_counts_and_a_few_entries_per_category() {
        let mut list = Vec::new();
        for i in 0..400 {
            let km = f64::from(i) / 100.0;
            list.push(found("resupply", "bakery", km, f64::from(i % 97)));
        }
        for i in 0..30 {
            list.push(found("water", "drinking_water", f64::from(i) / 10.0, 20.0));
        }
        let ask = Ask {
            kind: None,
            limit: DEFAULT_PER_CATEGORY,
        };
        let answer = bounded_found(&list, 4.0, &ask);
        assert_eq!(answer["counts"]["resupply"], 400);
        assert_eq!(answer["counts"]["water"], 30);
        assert_eq!(answer["entries"].as_array().map(Vec::len), Some(6));
        assert!(
            answer["more"]
                .as_str()
                .is_some_and(|m| m.contains("6 of 430"))
        );
        // Asking for one kind gives only it, up to the limit.
        let water = bounded_found(
            &list,
            4.0,
            &Ask {
                kind: Some("drinking_water"),
                limit: 10,
            },
        );
        let entries = water["entries"].as_array().expect("entries");
        assert_eq!(entries.len(), 10);
        assert!(entries.iter().all(|e| e["category"] == "water"));
        // In km order, whatever the stretch they came from.
        let kms: Vec<f64> = entries.iter().filter_map(|e| e["km"].as_f64()).collect();
        assert!(kms.windows(2).all(|w| w[0] <= w[1]), "{kms:?}");
    }

    #[test]
    fn a_short_list_is_whole_and_says_nothing_more() {
        let list = [found("water", "drinking_water", 1.0, 5.0)];
        let answer = bounded_found(
            &list,
            10.0,
            &Ask {
                kind: None,
                limit: 3,
            },
        );
        assert_eq!(answer["entries"].as_array().map(Vec::len), Some(1));
        assert!(answer.get("more").is_none());
    }
}

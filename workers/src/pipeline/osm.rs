//! The OpenStreetMap part of an analysis: one search along the whole route through the
//! configured source (a local index or Overpass, see [`crate::upstreams::Upstreams::osm_source`]),
//! the pure rules of `etappe_analysis::osm` over each day's corridor, and what the stage
//! detail lists as found along the day.
//!
//! The category `points_of_interest` is `done` when the source covered every day; `failed`
//! with the reason otherwise: no source, the source failed (the rest of the analysis is
//! written at once, as with the weather; `analyze_trip` asks again), or days outside the
//! imported extract — named, while the covered days keep their results. A day not covered
//! gets no OpenStreetMap alert and no "found" list: absent means "never ran", never "none".

use etappe_analysis::osm::{
    Found, FoundCategory, OsmSettings, OsmStage, Reach, SearchPlan, analyse_osm, corridors,
    found_along,
    rules::{nearest_charger_action, road_mix},
};
use etappe_analysis::{EBIKE_RANGE_EXCEEDED, StageInput};
use etappe_domain::text::strip_controls;
use etappe_domain::trip::Trip;
use etappe_domain::trip::stage::{FoundAlong, RoadMix, StageAlerts};
use etappe_upstream::OsmFeatures;

use super::domain_alert;

/// Reads OpenStreetMap along `trip`'s days (`inputs[i]` is day `i`, `days[i]` its result
/// so far, with the geometry rules' alerts) from `source`: adds each covered day's
/// OpenStreetMap alerts and found list, and the nearest charger to its
/// `ebike_range_exceeded`. Returns why the category failed, when it did.
pub(crate) async fn trip_osm(
    trip: &Trip,
    inputs: &[StageInput<'_>],
    days: &mut [StageAlerts],
    source: &dyn OsmFeatures,
) -> Option<String> {
    let stages: Vec<OsmStage<'_>> = inputs.iter().map(OsmStage::from).collect();
    let plan = SearchPlan::for_stages(&stages);
    let started = std::time::Instant::now();
    let found = match source.along(&plan).await {
        Ok(found) => found,
        Err(error) => return Some(format!("{} failed: {error}", source.source())),
    };
    tracing::debug!(
        trip = %trip.id,
        source = source.source(),
        km = plan.length_km().round(),
        points = found.points.len(),
        ways = found.ways.len(),
        requests = found.requests,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "OpenStreetMap read along the route"
    );
    let corridors = corridors(&stages, &found);
    let settings = OsmSettings {
        departure_hour: trip.settings.departure_hour.min(23),
        average_speed_kmh: trip.settings.average_speed,
        reach: Reach::default(),
    };
    let alerts = analyse_osm(&stages, &corridors, &settings);
    for (i, (((stage, corridor), osm_alerts), day)) in stages
        .iter()
        .zip(&corridors)
        .zip(alerts)
        .zip(days.iter_mut())
        .enumerate()
    {
        if found.uncovered_days.contains(&i) {
            continue;
        }
        for alert in day
            .alerts
            .iter_mut()
            .filter(|a| a.code == EBIKE_RANGE_EXCEEDED)
        {
            let range_km = alert
                .parameters
                .get("rangeKm")
                .and_then(serde_json::Value::as_f64)
                .unwrap_or(0.0);
            if let (Some(action), serde_json::Value::Object(p)) = (
                nearest_charger_action(stage, corridor, range_km),
                &mut alert.parameters,
            ) {
                p.insert("actionPoint".to_owned(), action);
            }
        }
        day.alerts.extend(osm_alerts.into_iter().map(domain_alert));
        let mix = road_mix(corridor);
        day.road = Some(RoadMix {
            rough_m: (mix.unpaved_m + mix.cobbled_m).round() + 0.0,
            unpaved_m: Some(mix.unpaved_m.round() + 0.0),
            busy_m: mix.busy_m.round() + 0.0,
        });
        day.found = Some(
            found_along(stage, corridor, &settings.reach)
                .iter()
                .map(to_found_along)
                .collect(),
        );
    }
    uncovered_reason(&found.uncovered_days, &stages, source.source())
}

/// "days 4 and 5 are outside …" when some days were not covered.
fn uncovered_reason(uncovered: &[usize], stages: &[OsmStage<'_>], source: &str) -> Option<String> {
    if uncovered.is_empty() {
        return None;
    }
    let mut days: Vec<u32> = uncovered
        .iter()
        .filter_map(|i| stages.get(*i).map(|s| s.day_number))
        .collect();
    days.sort_unstable();
    days.dedup();
    let list = days
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    Some(if days.len() == stages.len() {
        format!(
            "the route is outside the {source}: import an extract that covers it (`etappe osm import <region.osm.pbf>`)"
        )
    } else {
        format!(
            "day(s) {list} are outside the {source} and were not analysed; the other days were (import an extract that covers them)"
        )
    })
}

fn to_found_along(f: &Found) -> FoundAlong {
    FoundAlong {
        category: match f.category {
            FoundCategory::Resupply => "resupply",
            FoundCategory::Water => "water",
            FoundCategory::BikeShop => "bike_shop",
            FoundCategory::RailwayStation => "railway_station",
        }
        .to_owned(),
        kind: f.kind.to_owned(),
        name: f.name.as_deref().map(strip_controls),
        km: f.km,
        off_route_m: f.off_route_m,
        lat: f.lat,
        lon: f.lon,
    }
}

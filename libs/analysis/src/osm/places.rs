//! One entry per place. OpenStreetMap often maps one place several times: a fuel station's
//! pumps as nodes carrying its name, a shop as its building (given to us as a point at its
//! centroid) and again as a node inside it, a row of taps as unnamed nodes. The rules and
//! the found-along list count and list places, so [`distinct_places`] merges such
//! duplicates before either reads a day's points.
//!
//! Two points are one place when they are of the same family, within [`SAME_PLACE_M`] of
//! each other and their names agree (see [`distinct_places`]). Merging runs shortest pair
//! first and never joins two groups that carry different names, so a chain of near points
//! is one place while an unnamed point between two differently named shops cannot glue
//! them together: it joins the nearer one.

use super::geom::{METRES_PER_DEGREE, line_of};
use super::model::{Corridor, Feature, FeatureKind};
use crate::geo::haversine_m;
use crate::model::StagePoint;

/// Two points of one place lie at most this far apart, metres: the pumps of a forecourt, a
/// supermarket's centroid and its entrance node. Two shops next door are closer than this,
/// which is why their names must agree too.
pub const SAME_PLACE_M: f64 = 50.0;

/// What a point is, coarsely: points of different families are never one place. Inside a
/// family, different kinds are one place only under one name (a bakery also mapped as a
/// café, a `Shell` fuel station and its `Shell` shop).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Family {
    Water,
    Food,
    BikeShop,
    /// A public repair stand is not the shop it may stand in front of.
    RepairStation,
    Station,
    /// Kept apart so a heritage line's station never stands in for (or hides) a real one at
    /// the same place: the rules skip it.
    HeritageStation,
    Health,
    Cultural,
    Accommodation,
    Ford,
    Charger,
}

fn family(feature: &Feature) -> Family {
    match feature.kind {
        FeatureKind::DrinkingWater => Family::Water,
        FeatureKind::Food(_) => Family::Food,
        FeatureKind::BikeShop { .. } => Family::BikeShop,
        FeatureKind::RepairStation => Family::RepairStation,
        FeatureKind::RailwayStation if feature.usage.as_deref() == Some("tourism") => {
            Family::HeritageStation
        }
        FeatureKind::RailwayStation => Family::Station,
        FeatureKind::Health(_) => Family::Health,
        FeatureKind::Cultural(_) => Family::Cultural,
        FeatureKind::Accommodation(_) => Family::Accommodation,
        FeatureKind::Ford => Family::Ford,
        FeatureKind::Charger => Family::Charger,
    }
}

/// The name as compared: case folded, runs of whitespace as one space; blank is no name.
fn normalised(name: Option<&str>) -> Option<String> {
    let joined = name?.split_whitespace().collect::<Vec<_>>().join(" ");
    (!joined.is_empty()).then(|| joined.to_lowercase())
}

/// Whether a kind serves more rules than its neighbours in the family: a restaurant over a
/// pub (resupply), a repairing shop over a sale-only one. A merged place must not lose that.
fn serves_more(kind: FeatureKind) -> bool {
    kind.is_resupply() || kind.is_repair()
}

fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// `points` with each place once, in the order of each place's first point.
///
/// Two points are candidates for one place when they are of the same family (water, food,
/// bike shops, repair stands, stations, health, culture, beds, fords, chargers), at most
/// [`SAME_PLACE_M`] apart, and either both carry the same name (after folding case and
/// whitespace) or, for points of the exact same kind, at least one is unnamed. Candidates
/// are joined nearest first; a join that would give a place two different names is
/// skipped. Points with non-finite coordinates stay as they are.
///
/// The representative is, in order: a named point over an unnamed one; a kind that serves
/// more rules (a restaurant over a pub of the same name, a repairing shop over a sale-only
/// one); the nearest to `line` (what the rider has to reach; ties when the line is empty,
/// as on a rest day); the first in `points`, so the same input always gives the same
/// output (the model carries no OSM id to keep). Tags it lacks (hours, season, usage,
/// website, Wikidata) are taken from the others in that order: they describe one place.
///
/// Cost: a sort by family and latitude, then each point is compared with the points of its
/// family within [`SAME_PLACE_M`] of latitude — a few on a real corridor of thousands.
pub fn distinct_places(points: &[Feature], line: &[StagePoint]) -> Vec<Feature> {
    let n = points.len();
    let names: Vec<Option<String>> = points
        .iter()
        .map(|f| normalised(f.name.as_deref()))
        .collect();
    let families: Vec<Family> = points.iter().map(family).collect();

    let mut order: Vec<usize> = (0..n)
        .filter(|&i| points[i].lat.is_finite() && points[i].lon.is_finite())
        .collect();
    order.sort_by(|&a, &b| {
        families[a]
            .cmp(&families[b])
            .then(points[a].lat.total_cmp(&points[b].lat))
    });
    // The great-circle distance is at least the latitude difference along a meridian, so
    // once a point is farther north than this, no later one in the sort can be near.
    let band_deg = SAME_PLACE_M / METRES_PER_DEGREE;
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        for &j in &order[k + 1..] {
            if families[j] != families[i] || points[j].lat - points[i].lat > band_deg {
                break;
            }
            let names_agree = match (&names[i], &names[j]) {
                (Some(a), Some(b)) => a == b,
                _ => points[i].kind == points[j].kind,
            };
            if !names_agree {
                continue;
            }
            let d = haversine_m(
                (points[i].lat, points[i].lon),
                (points[j].lat, points[j].lon),
            );
            if d <= SAME_PLACE_M {
                pairs.push((d, i.min(j), i.max(j)));
            }
        }
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));

    // Union–find whose root is always the group's first point (the smaller root wins), with
    // the group's one name, if any.
    let mut parent: Vec<usize> = (0..n).collect();
    let mut group_name: Vec<Option<&str>> = names.iter().map(Option::as_deref).collect();
    for (_, a, b) in pairs {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        if ra == rb {
            continue;
        }
        if let (Some(x), Some(y)) = (group_name[ra], group_name[rb])
            && x != y
        {
            continue;
        }
        let (keep, join) = (ra.min(rb), ra.max(rb));
        parent[join] = keep;
        group_name[keep] = group_name[keep].or(group_name[join]);
    }
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        let r = root(&mut parent, i);
        members[r].push(i);
    }

    let index = line_of(line);
    let off_route = |i: usize| {
        let d = index.distance_m((points[i].lat, points[i].lon));
        if d.is_finite() { d } else { f64::INFINITY }
    };
    members
        .into_iter()
        .filter(|group| !group.is_empty())
        .map(|group| {
            if let [only] = group[..] {
                return points[only].clone();
            }
            let mut ranked: Vec<(usize, f64)> = group.iter().map(|&i| (i, off_route(i))).collect();
            // Best first.
            ranked.sort_by(|&(a, da), &(b, db)| {
                names[b]
                    .is_some()
                    .cmp(&names[a].is_some())
                    .then(serves_more(points[b].kind).cmp(&serves_more(points[a].kind)))
                    .then(da.total_cmp(&db))
                    .then(a.cmp(&b))
            });
            let mut place = points[ranked[0].0].clone();
            for &(i, _) in &ranked[1..] {
                let other = &points[i];
                fill(&mut place.opening_hours, &other.opening_hours);
                fill(&mut place.seasonal, &other.seasonal);
                fill(&mut place.usage, &other.usage);
                fill(&mut place.website, &other.website);
                fill(&mut place.wikidata, &other.wikidata);
            }
            place
        })
        .collect()
}

fn fill(own: &mut Option<String>, other: &Option<String>) {
    if own.is_none() {
        own.clone_from(other);
    }
}

/// The corridor with its points merged by [`distinct_places`] along `line` (ways and
/// ferries as they are): what every rule of [`crate::osm::analyse_osm`] reads.
pub(crate) fn distinct_corridor(corridor: &Corridor, line: &[StagePoint]) -> Corridor {
    Corridor {
        points: distinct_places(&corridor.points, line),
        ways: corridor.ways.clone(),
        ferries: corridor.ferries.clone(),
    }
}

//! Ground truth for the per-day road analysis, from an engine nobody here wrote. Etappe plans
//! days on real roads (Valhalla 3.9.1 routing the committed Liechtenstein extract, ODbL),
//! reads what each day rides from its own offline OpenStreetMap index (`etappe osm import`)
//! and publishes each day's `unpavedShare`, `busyShare` and alerts. This test asks Valhalla's
//! map matching (`/trace_attributes`, `shape_match: map_snap`) what the same day's points ride
//! on — Valhalla's own matcher and its own reading of the same tags — and checks that the two
//! agree within 0.10 on both shares, on town days (Vaduz, Schaan), a mountain day (Vaduz →
//! Steg → Malbun), the `loop_plan` of `real_routes` (Balzers → Vaduz → Ruggell) and an
//! out-and-back (Balzers → Schaan → Balzers) over two days; and that no day claims a ferry
//! the matched edges do not have (the extract has none to ride). Both sides are printed per
//! day.
//!
//! The truth, from the matched edges (lengths as Valhalla measures them, shares of the
//! matched length):
//! - unpaved: `edge.surface` compacted, dirt, gravel, path or impassable (Valhalla's grades
//!   below `paved_rough`). `paved_rough` — cobbles, `tracktype=grade1` — stays out, as on
//!   Etappe's side: its `unpavedShare` is `RoadMix::unpaved_m`, which leaves out what it
//!   calls cobbled, and it reads `grade1` as paved;
//! - busy: `edge.road_class` motorway, trunk, primary or secondary, `edge.use` road (not a
//!   ramp: Etappe does not count `*_link` ways either) and no `edge.cycle_lane`. Every metre
//!   counts: Etappe's `busyShare` is `RoadMix::busy_m`, every metre of such roads, not only
//!   the stretches of 500 m or more its traffic alerts name (`rules::TRAFFIC_WAY_M`), so
//!   the truth does not apply that rule either (the long stretches are printed beside the
//!   traffic alerts, for the reader);
//! - ferry: any edge of `edge.use` ferry.
//!
//! When `osmium` is installed, each day also shows Etappe's documented tag rules
//! (`libs/analysis/src/osm/rules.rs`: `surface_of`, `has_cycle_infrastructure`) applied to
//! the very ways Valhalla matched (their tags read from the extract with `osmium getid`), and
//! lists the ways the two tag readings class differently, with their OSM ids: a gap between
//! that figure and Etappe's is the matching, a gap between it and the truth is the
//! definitions.
//!
//! The found list is checked too: every listed place lies within its kind's reach of the
//! day (`libs/analysis/src/osm/reach.rs`: water 300 m, food 500 m, bike shop 1 km, station
//! 2 km) and as far off as it says at the km it names; and, with `osmium`, every
//! `amenity=drinking_water` and `railway=station` node of the extract well within reach
//! (90 %) is listed.
//!
//! Skips like the other routing tests when Valhalla is not installed.

use std::collections::BTreeMap;
use std::path::Path;

use etappe_analysis::osm::WaySection;
use etappe_analysis::osm::rules::{Surface, is_busy_road, surface_of};
use etappe_route::geometry::haversine_m;
use etappe_route::gpx::TrackPoint;
use etappe_tests::valhalla::{self, Valhalla};
use etappe_tests::{Backend, TestApp};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::real_routes::{
    app_with, day_points, distance_to_line, loop_plan, place, settled, stage_ids, valhalla,
};

/// How far Etappe's share may lie from the truth, either way.
const TOLERANCE: f64 = 0.10;
/// Valhalla's surfaces that are not paved (`baldr::Surface` below `paved_rough`).
const UNPAVED_SURFACES: &[&str] = &["compacted", "dirt", "gravel", "path", "impassable"];
/// Valhalla's road classes of main and secondary roads.
const BUSY_CLASSES: &[&str] = &["motorway", "trunk", "primary", "secondary"];
/// The day's points are thinned to one every this many metres before matching.
const SPACING_M: f64 = 10.0;
/// Valhalla refuses longer shapes (`service_limits.trace.max_shape` is 16,000).
const MAX_SHAPE: usize = 8_000;
/// A busy stretch the traffic alerts name, metres (`rules::TRAFFIC_WAY_M`).
const TRAFFIC_WAY_M: f64 = 500.0;

/// A trip to check: a plan and the day length that cuts it into one or two days.
struct Case {
    name: &'static str,
    plan: Value,
    max_km_per_day: f64,
}

fn cases() -> Vec<Case> {
    let balzers = (47.0666, 9.5035);
    let schaan = (47.1651, 9.5097);
    vec![
        Case {
            name: "Vaduz centre",
            plan: json!({"from": place((47.1330, 9.5185)), "via": [place((47.1415, 9.5225))],
                "to": place((47.1470, 9.5170))}),
            max_km_per_day: 100.0,
        },
        Case {
            name: "Schaan centre",
            plan: json!({"from": place((47.1600, 9.5060)), "via": [place((47.1651, 9.5100))],
                "to": place((47.1690, 9.5150))}),
            max_km_per_day: 100.0,
        },
        Case {
            name: "Vaduz → Steg → Malbun",
            plan: json!({"from": place((47.141, 9.521)), "via": [place((47.106, 9.574))],
                "to": place((47.101, 9.610))}),
            max_km_per_day: 100.0,
        },
        Case {
            name: "loop (real_routes)",
            plan: loop_plan(),
            max_km_per_day: 100.0,
        },
        Case {
            name: "out-and-back Balzers ↔ Schaan",
            plan: json!({"from": place(balzers), "via": [place(schaan)], "to": place(balzers)}),
            // About 25 km there and back: two days.
            max_km_per_day: 15.0,
        },
    ]
}

/// One edge Valhalla matched.
#[derive(Debug, Clone)]
struct Edge {
    way_id: u64,
    length_m: f64,
    surface: String,
    road_class: String,
    use_: String,
    cycle_lane: String,
    bicycle_network: u64,
}

impl Edge {
    fn from_json(e: &Value) -> Self {
        let text = |k: &str| e[k].as_str().unwrap_or("").to_owned();
        Self {
            way_id: e["way_id"].as_u64().unwrap_or(0),
            length_m: e["length"].as_f64().unwrap_or(0.0) * 1000.0,
            surface: text("surface"),
            road_class: text("road_class"),
            use_: text("use"),
            cycle_lane: text("cycle_lane"),
            bicycle_network: e["bicycle_network"].as_u64().unwrap_or(0),
        }
    }

    fn unpaved(&self) -> bool {
        UNPAVED_SURFACES.contains(&self.surface.as_str())
    }

    fn busy(&self) -> bool {
        BUSY_CLASSES.contains(&self.road_class.as_str())
            && self.use_ == "road"
            && matches!(self.cycle_lane.as_str(), "" | "none")
    }

    fn ferry(&self) -> bool {
        self.use_.contains("ferry")
    }
}

/// What Valhalla's match of a day says it rides.
#[derive(Debug, Default)]
struct Truth {
    edges: Vec<Edge>,
    /// Shapes matched (more than one when a piece had to be matched apart).
    pieces: usize,
}

impl Truth {
    fn total_m(&self) -> f64 {
        self.edges.iter().map(|e| e.length_m).sum()
    }
    fn share(&self, counts: impl Fn(&Edge) -> bool) -> f64 {
        let total = self.total_m();
        if total <= 0.0 {
            return 0.0;
        }
        self.edges
            .iter()
            .filter(|e| counts(e))
            .map(|e| e.length_m)
            .sum::<f64>()
            / total
            // An empty sum is -0.0: printed as 0.
            + 0.0
    }
    fn unpaved_share(&self) -> f64 {
        self.share(Edge::unpaved)
    }
    fn busy_share(&self) -> f64 {
        self.share(Edge::busy)
    }
    fn ferry(&self) -> bool {
        self.edges.iter().any(Edge::ferry)
    }
    /// Consecutive busy edges joined, the stretches of [`TRAFFIC_WAY_M`] or more, metres.
    fn long_busy_stretches(&self) -> Vec<f64> {
        let mut stretches = Vec::new();
        let mut run = 0.0;
        for edge in &self.edges {
            if edge.busy() {
                run += edge.length_m;
            } else {
                if run >= TRAFFIC_WAY_M {
                    stretches.push(run);
                }
                run = 0.0;
            }
        }
        if run >= TRAFFIC_WAY_M {
            stretches.push(run);
        }
        stretches
    }
}

/// `points` with one kept every [`SPACING_M`] (the first and the last always).
fn thinned(points: &[TrackPoint], spacing_m: f64) -> Vec<TrackPoint> {
    let mut out: Vec<TrackPoint> = Vec::new();
    for p in points {
        if out
            .last()
            .is_none_or(|last| haversine_m(last, p) >= spacing_m)
        {
            out.push(*p);
        }
    }
    if let (Some(kept), Some(end)) = (out.last(), points.last())
        && kept != end
    {
        out.push(*end);
    }
    out
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
}

/// Valhalla's match of `shape`, or its error.
async fn trace_attributes(engine: &Valhalla, shape: &[TrackPoint]) -> Result<Vec<Edge>, String> {
    let body = json!({
        "shape": shape.iter().map(|p| json!({"lat": p.lat, "lon": p.lon})).collect::<Vec<_>>(),
        "costing": "bicycle",
        "shape_match": "map_snap",
        "filters": {
            "attributes": ["edge.length", "edge.surface", "edge.road_class", "edge.use",
                "edge.way_id", "edge.cycle_lane", "edge.bicycle_network"],
            "action": "include",
        },
    });
    let answer = http()
        .post(format!("{}/trace_attributes", engine.url))
        .json(&body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = answer.status();
    let parsed: Value = answer.json().await.map_err(|e| e.to_string())?;
    if status != StatusCode::OK {
        return Err(format!("{status}: {parsed}"));
    }
    Ok(parsed["edges"]
        .as_array()
        .ok_or_else(|| format!("no edges: {parsed}"))?
        .iter()
        .map(Edge::from_json)
        .collect())
}

/// Valhalla's match of a day's points. A shape the matcher refuses (a turn on the spot at the
/// end of an out-and-back can be one) is matched in two halves, down to four levels.
async fn truth_of(engine: &Valhalla, points: &[TrackPoint]) -> Truth {
    let mut spacing = SPACING_M;
    let mut shape = thinned(points, spacing);
    while shape.len() > MAX_SHAPE {
        spacing *= 2.0;
        shape = thinned(points, spacing);
    }
    let mut truth = Truth::default();
    let mut pending: Vec<(Vec<TrackPoint>, u32)> = vec![(shape, 0)];
    while let Some((piece, depth)) = pending.pop() {
        match trace_attributes(engine, &piece).await {
            Ok(edges) => {
                truth.edges.extend(edges);
                truth.pieces += 1;
            }
            Err(error) if depth < 4 && piece.len() >= 8 => {
                eprintln!(
                    "    valhalla refused {} points ({error}); matching them in two halves",
                    piece.len()
                );
                let middle = piece.len() / 2;
                // Popped last first: the second half goes on the stack first.
                pending.push((piece[middle..].to_vec(), depth + 1));
                pending.push((piece[..=middle].to_vec(), depth + 1));
            }
            Err(error) => panic!(
                "valhalla cannot match a day piece of {} points: {error}\n{}",
                piece.len(),
                engine.log_tail()
            ),
        }
    }
    truth
}

// ---------- Etappe's own tag rules on Valhalla's ways, for the diagnosis only ----------

/// How Etappe reads a way's raw tags (its own code, not a copy): whether it is unpaved and
/// whether it is busy road. Used only to tell, when a share is off, whether the two engines
/// rode different ways or read the same way differently.
fn etappe_reads(tags: &BTreeMap<String, String>) -> (bool, bool) {
    let Some(way) = WaySection::from_tags(0.0, (0.0, 0.0), |k| tags.get(k).map(String::as_str))
    else {
        return (false, false);
    };
    (surface_of(&way) == Surface::Unpaved, is_busy_road(&way))
}

/// Decodes OPL's `%hex%` escapes.
fn opl_unescape(raw: &str) -> String {
    let mut out = String::new();
    let mut parts = raw.split('%');
    out.push_str(parts.next().unwrap_or(""));
    let mut escaped = true;
    for part in parts {
        if escaped {
            if let Some(c) = u32::from_str_radix(part, 16).ok().and_then(char::from_u32) {
                out.push(c);
            }
        } else {
            out.push_str(part);
        }
        escaped = !escaped;
    }
    out
}

/// The tags of one OPL line's `T` field.
pub(super) fn opl_tags(line: &str) -> BTreeMap<String, String> {
    line.split(' ')
        .find_map(|f| f.strip_prefix('T'))
        .unwrap_or("")
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (opl_unescape(k), opl_unescape(v)))
        .collect()
}

/// A node's (lat, lon) in an OPL line (its `y` and `x` fields).
pub(super) fn opl_point(line: &str) -> Option<(f64, f64)> {
    let field = |c: char| {
        line.split(' ')
            .find_map(|f| f.strip_prefix(c))
            .and_then(|v| v.parse::<f64>().ok())
    };
    Some((field('y')?, field('x')?))
}

/// Whether `osmium` runs here.
pub(super) fn osmium_installed() -> bool {
    std::process::Command::new("osmium")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The tags of `ways` in `extract`, read with `osmium getid`.
fn way_tags(extract: &Path, ways: &[u64]) -> BTreeMap<u64, BTreeMap<String, String>> {
    let mut command = std::process::Command::new("osmium");
    command
        .args(["getid", "--no-progress", "-f", "opl", "-o", "-"])
        .arg(extract);
    command.args(ways.iter().map(|w| format!("w{w}")));
    let output = command.output().expect("run osmium getid");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let id = line.split(' ').next()?.strip_prefix('w')?.parse().ok()?;
            Some((id, opl_tags(line)))
        })
        .collect()
}

/// Etappe's rules on Valhalla's ways: (unpaved share, busy share), and the ways the two
/// readings class differently, printed.
fn diagnose(extract: &Path, truth: &Truth) -> (f64, f64) {
    let mut ids: Vec<u64> = truth.edges.iter().map(|e| e.way_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let tags = way_tags(extract, &ids);
    let total = truth.total_m().max(1e-9);
    let (mut unpaved, mut busy) = (0.0, 0.0);
    // way id → (metres, valhalla says, etappe says) for the unpaved and busy readings
    let mut differ: BTreeMap<(u64, &str), (f64, String, bool)> = BTreeMap::new();
    for edge in &truth.edges {
        let Some(t) = tags.get(&edge.way_id) else {
            continue;
        };
        let (u, b) = etappe_reads(t);
        if u {
            unpaved += edge.length_m;
        }
        if b {
            busy += edge.length_m;
        }
        if u != edge.unpaved() {
            let seen = differ.entry((edge.way_id, "unpaved")).or_insert((
                0.0,
                format!("surface {}", edge.surface),
                u,
            ));
            seen.0 += edge.length_m;
        }
        if b != edge.busy() {
            let seen = differ.entry((edge.way_id, "busy")).or_insert((
                0.0,
                format!(
                    "{} {} cycle_lane {:?}",
                    edge.road_class, edge.use_, edge.cycle_lane
                ),
                b,
            ));
            seen.0 += edge.length_m;
        }
    }
    let mut rows: Vec<_> = differ.into_iter().collect();
    rows.sort_by(|a, b| b.1.0.total_cmp(&a.1.0));
    for ((way, what), (metres, valhalla_says, etappe_says)) in rows.iter().take(12) {
        let osm: Vec<String> = tags
            .get(way)
            .map(|t| {
                t.iter()
                    .filter(|(k, _)| {
                        k.as_str() == "highway"
                            || k.starts_with("surface")
                            || k.starts_with("tracktype")
                            || k.starts_with("cycleway")
                            || k.starts_with("bicycle")
                            || k.starts_with("footway")
                            || k.starts_with("sac_scale")
                    })
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect()
            })
            .unwrap_or_default();
        eprintln!(
            "      way {way}: {metres:.0} m {what} by Etappe's rules {etappe_says}, by Valhalla \
             {} ({valhalla_says}); tags {}",
            !etappe_says,
            osm.join(" ")
        );
    }
    (unpaved / total, busy / total)
}

// ---------- the found list ----------

/// The reach of a listed place, metres (`reach.rs`'s defaults; a repair stand is water's).
fn reach_of(found: &Value) -> f64 {
    match (found["category"].as_str(), found["kind"].as_str()) {
        (Some("water"), _) | (Some("bike_shop"), Some("repair_station")) => 300.0,
        (Some("resupply"), _) => 500.0,
        (Some("bike_shop"), _) => 1_000.0,
        (Some("railway_station"), _) => 2_000.0,
        other => panic!("a category the reach table does not know: {other:?}"),
    }
}

/// The drinking-water and railway-station nodes of the extract (the station of a heritage
/// line aside), as (category, reach, point, id).
fn water_and_stations(extract: &Path) -> Vec<(&'static str, f64, TrackPoint, String)> {
    let output = std::process::Command::new("osmium")
        .args(["tags-filter", "--no-progress", "-f", "opl", "-o", "-"])
        .arg(extract)
        .args(["n/amenity=drinking_water", "n/railway=station"])
        .output()
        .expect("run osmium tags-filter");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let tags = opl_tags(line);
            let (lat, lon) = opl_point(line)?;
            let at = TrackPoint {
                lat,
                lon,
                ele: None,
            };
            let id = line.split(' ').next()?.to_owned();
            if tags.get("amenity").map(String::as_str) == Some("drinking_water") {
                Some(("water", 300.0, at, id))
            } else if tags.get("usage").map(String::as_str) != Some("tourism") {
                Some(("railway_station", 2_000.0, at, id))
            } else {
                None
            }
        })
        .collect()
}

/// Every listed place within its reach of the day (and where the day says it is); every
/// water and station node well within reach listed. Answers the number of places listed
/// and of the extract's nodes found listed.
fn check_found(
    day: &Value,
    points: &[TrackPoint],
    extract_nodes: Option<&[(&'static str, f64, TrackPoint, String)]>,
) -> (usize, usize) {
    let found = day["found"].as_array().expect("found read from the index");
    let along: Vec<f64> = std::iter::once(0.0)
        .chain(points.windows(2).scan(0.0, |m, w| {
            *m += haversine_m(&w[0], &w[1]);
            Some(*m)
        }))
        .collect();
    for place in found {
        let at = TrackPoint {
            lat: place["lat"].as_f64().expect("lat"),
            lon: place["lon"].as_f64().expect("lon"),
            ele: None,
        };
        let off = distance_to_line(&at, points);
        let reach = reach_of(place);
        assert!(
            off <= reach + 5.0,
            "listed {off:.0} m off the day, beyond its reach of {reach} m: {place}"
        );
        let said = place["offRouteM"].as_f64().expect("offRouteM");
        // A place passed twice is listed at each pass, with that pass's distance: compare
        // with the stretch of the day around the listed km (one decimal: ±50 m, and slack).
        let km = place["km"].as_f64().expect("km");
        let (from_m, to_m) = (km * 1000.0 - 100.0, km * 1000.0 + 100.0);
        let off_there = (0..points.len().saturating_sub(1))
            .filter(|&i| along[i] <= to_m && along[i + 1] >= from_m)
            .map(|i| distance_to_line(&at, &points[i..=i + 1]))
            .fold(f64::INFINITY, f64::min);
        assert!(
            said <= reach + 1.0 && said >= off - 1.0 && (said - off_there).abs() <= 15.0,
            "says {said} m off the route at km {km}, lies {off_there:.0} m off there \
             ({off:.0} m off the nearest pass; reach {reach} m): {place}"
        );
    }
    let mut checked = 0;
    for (category, reach, node, id) in extract_nodes.unwrap_or_default() {
        // Well within reach, so that the two measures of the line cannot disagree.
        if distance_to_line(node, points) > 0.9 * reach {
            continue;
        }
        let listed = found.iter().any(|f| {
            f["category"] == *category
                && haversine_m(
                    node,
                    &TrackPoint {
                        lat: f["lat"].as_f64().unwrap_or(0.0),
                        lon: f["lon"].as_f64().unwrap_or(0.0),
                        ele: None,
                    },
                ) <= 60.0
        });
        assert!(
            listed,
            "the extract's {category} node {id} lies {:.0} m off the day, within {reach} m, \
             but is not listed: {}",
            distance_to_line(node, points),
            day["found"]
        );
        checked += 1;
    }
    (found.len(), checked)
}

// ---------- the scenario ----------

/// One day's figures, both sides.
struct DayFigures {
    label: String,
    etappe_unpaved: f64,
    etappe_busy: f64,
    truth_unpaved: f64,
    truth_busy: f64,
}

/// What `get_stage` may cost an agent by default (o200k tokens of its structured content).
const GET_STAGE_BUDGET: usize = 2_000;

/// `get_stage` over MCP as an agent calls it: tokens (o200k) of the whole JSON-RPC result and
/// of its structured content.
async fn get_stage_tokens(app: &TestApp, token: &str, trip: &str, stage: &str) -> (usize, usize) {
    let result = app
        .mcp_raw(
            token,
            "tools/call",
            json!({"name": "get_stage", "arguments": {"tripId": trip, "stageId": stage}}),
        )
        .await;
    assert_eq!(result["isError"], json!(false), "{result}");
    let bpe = tiktoken_rs::o200k_base().expect("o200k");
    let tokens = |v: &Value| bpe.encode_ordinary(&v.to_string()).len();
    (tokens(&result), tokens(&result["structuredContent"]))
}

async fn create(app: &TestApp, token: &str, case: &Case) -> Value {
    let created = app
        .create_trip(
            token,
            &json!({"plan": case.plan, "title": case.name, "maxDistancePerDay": case.max_km_per_day}),
        )
        .await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.body);
    let id = created.body["id"].as_str().expect("id").to_owned();
    settled(app, token, &id).await
}

async fn the_road_analysis_agrees_with_valhallas_map_matching(app: TestApp, engine: &Valhalla) {
    let extract = valhalla::liechtenstein();
    super::import_liechtenstein(&app).await;
    let osmium = osmium_installed();
    assert!(
        osmium || std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
        "ETAPPE_REQUIRE_SERVICES=1 but osmium (Debian's osmium-tool) is not installed"
    );
    if !osmium {
        eprintln!("osmium is not installed: no tag diagnosis, no found-list completeness");
    }
    let nodes = osmium.then(|| water_and_stations(&extract));
    let token = app.user().await;
    let mut figures: Vec<DayFigures> = Vec::new();
    let mut densest = 0;
    let (mut listed, mut checked) = (0, 0);
    for case in cases() {
        let detail = create(&app, &token, &case).await;
        assert_eq!(detail["status"], "ready", "{}: {detail}", case.name);
        assert_eq!(detail["partial"], false);
        assert_eq!(
            detail["computationStatus"]["points_of_interest"], "done",
            "{}: {}",
            case.name, detail["computationStatus"]
        );
        let id = detail["id"].as_str().expect("id");
        let stages = detail["stages"].as_array().expect("stages");
        eprintln!(
            "{}: {} km in {} day(s)",
            case.name,
            detail["totalDistance"],
            stages.len()
        );
        for (n, (stage, day)) in stage_ids(&detail).iter().zip(stages).enumerate() {
            let points = day_points(&app, &token, id, stage).await;
            let truth = truth_of(engine, &points).await;
            let etappe_unpaved = day["unpavedShare"]
                .as_f64()
                .unwrap_or_else(|| panic!("{} day {}: no unpavedShare: {day}", case.name, n + 1));
            let etappe_busy = day["busyShare"]
                .as_f64()
                .unwrap_or_else(|| panic!("{} day {}: no busyShare: {day}", case.name, n + 1));
            let codes: Vec<&str> = day["alerts"]
                .as_array()
                .expect("alerts")
                .iter()
                .filter_map(|a| a["code"].as_str())
                .collect();
            let road_alerts: Vec<String> = day["alerts"]
                .as_array()
                .expect("alerts")
                .iter()
                .filter(|a| {
                    a["code"]
                        .as_str()
                        .is_some_and(|c| c.starts_with("traffic") || c == "surface_rough")
                })
                .map(|a| format!("{} {}", a["code"], a["parameters"]["lengthM"]))
                .collect();
            let label = format!("{} day {}", case.name, n + 1);
            eprintln!(
                "  {label}: {:.2} km by Etappe, {:.2} km matched by Valhalla ({} edges, {} \
                 piece(s), {} points)",
                day["distance"].as_f64().unwrap_or(f64::NAN),
                truth.total_m() / 1000.0,
                truth.edges.len(),
                truth.pieces,
                points.len()
            );
            eprintln!(
                "    unpaved: Etappe {etappe_unpaved:.2}, Valhalla {:.3} | busy: Etappe \
                 {etappe_busy:.2}, Valhalla {:.3} | ferry edges: {} | cycle network share {:.2}",
                truth.unpaved_share(),
                truth.busy_share(),
                truth.ferry(),
                truth.share(|e| e.bicycle_network != 0),
            );
            eprintln!(
                "    busy stretches ≥ {TRAFFIC_WAY_M} m by Valhalla: {:?} m; Etappe's road alerts: {:?}",
                truth
                    .long_busy_stretches()
                    .iter()
                    .map(|m| m.round())
                    .collect::<Vec<_>>(),
                road_alerts
            );
            if osmium {
                let (u, b) = diagnose(&extract, &truth);
                eprintln!(
                    "    Etappe's tag rules on Valhalla's matched ways: unpaved {u:.2}, busy {b:.2}"
                );
            }
            let (whole, structured) = get_stage_tokens(&app, &token, id, stage).await;
            // The whole day as REST serves it is what get_stage answered before it was bounded.
            let unbounded = tiktoken_rs::o200k_base()
                .expect("o200k")
                .encode_ordinary(&day.to_string())
                .len();
            eprintln!(
                "    get_stage: {structured} tokens of structured content ({whole} for the whole \
                 result; the unbounded day is {unbounded}), {} places found along",
                day["found"].as_array().map_or(0, Vec::len)
            );
            densest = densest.max(structured);
            let (places, nodes_listed) = check_found(day, &points, nodes.as_deref());
            listed += places;
            checked += nodes_listed;

            for (what, share) in [("unpavedShare", etappe_unpaved), ("busyShare", etappe_busy)] {
                assert!(
                    (0.0..=1.0).contains(&share),
                    "{label}: {what} {share} outside [0, 1]"
                );
            }
            if !truth.ferry() {
                assert!(
                    !codes.iter().any(|c| c.contains("ferry")),
                    "{label}: a ferry alert where Valhalla matched no ferry: {codes:?}"
                );
            }
            assert!(
                truth.total_m() > 0.5 * 1000.0 * day["distance"].as_f64().unwrap_or(0.0),
                "{label}: Valhalla matched only {:.0} m of the day",
                truth.total_m()
            );
            figures.push(DayFigures {
                label,
                etappe_unpaved,
                etappe_busy,
                truth_unpaved: truth.unpaved_share(),
                truth_busy: truth.busy_share(),
            });
        }
    }
    eprintln!(
        "found list: {listed} places listed, each within its reach; {checked} drinking-water \
         and station nodes of the extract well within reach, each listed"
    );
    // An agent reads any day, village or city centre, within about 2,000 tokens.
    assert!(
        densest <= GET_STAGE_BUDGET,
        "get_stage answered {densest} tokens, over {GET_STAGE_BUDGET}"
    );
    let off: Vec<String> = figures
        .iter()
        .flat_map(|f| {
            [
                ("unpaved", f.etappe_unpaved, f.truth_unpaved),
                ("busy", f.etappe_busy, f.truth_busy),
            ]
            .into_iter()
            .filter(|(_, etappe, truth)| (etappe - truth).abs() > TOLERANCE)
            .map(|(what, etappe, truth)| {
                format!(
                    "{}: {what} share {etappe:.2} by Etappe, {truth:.2} by Valhalla",
                    f.label
                )
            })
        })
        .collect();
    assert!(
        off.is_empty(),
        "shares more than {TOLERANCE} from Valhalla's map matching:\n{}",
        off.join("\n")
    );
}

async fn road_analysis(backend: Backend) {
    let Some(engine) = valhalla().await else {
        return;
    };
    let Some(app) = app_with(backend, &engine, |_| {}).await else {
        return;
    };
    the_road_analysis_agrees_with_valhallas_map_matching(app, &engine).await;
}

mod sqlite {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn road_analysis_agrees_with_valhallas_map_matching() {
        super::road_analysis(etappe_tests::Backend::Sqlite).await;
    }
}

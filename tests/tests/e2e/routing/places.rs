//! The names a rider types, resolved where the trip is, on the shared Liechtenstein extract.
//! Ground truth comes from osmium, not from Etappe: `osmium tags-filter … n/place=…` lists
//! the extract's named villages and towns with their coordinates, and each must resolve, in
//! a plan inside Liechtenstein, to its own node once the extract is imported (`etappe osm
//! import`). The same names through the embedded gazetteer alone give the figure before. A
//! name that exists only far away is refused with its candidates; an exact local name beats a
//! fuzzy far one; the search answers villages, stations and huts with their kind.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use etappe_app::AppError;
use etappe_app::places::resolve_plan;
use etappe_domain::trip::plan::{PlaceInput, PlanInput, RideProfile, RoutePlan};
use etappe_tests::valhalla;
use etappe_tests::{Backend, TestApp};
use etappe_workers::upstreams::Upstreams;
use reqwest::StatusCode;
use serde_json::json;

use super::truth::{opl_point, opl_tags, osmium_installed};

const VADUZ: (f64, f64) = (47.1410, 9.5209);

/// A named place of the extract as osmium lists it.
struct OsmPlace {
    id: String,
    name: String,
    kind: String,
    lat: f64,
    lon: f64,
}

/// The extract's named place nodes of `kinds` (`village`, `town`…), read with osmium.
fn osm_places(kinds: &str) -> Vec<OsmPlace> {
    let output = std::process::Command::new("osmium")
        .args(["tags-filter", "--no-progress", "-f", "opl", "-o", "-"])
        .arg(valhalla::liechtenstein())
        .arg(format!("n/place={kinds}"))
        .output()
        .expect("run osmium tags-filter");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let tags = opl_tags(line);
            let (lat, lon) = opl_point(line)?;
            Some(OsmPlace {
                id: line.split(' ').next()?.to_owned(),
                name: tags.get("name")?.clone(),
                kind: tags.get("place")?.clone(),
                lat,
                lon,
            })
        })
        .collect()
}

/// A plan from `name` to Vaduz.
fn from_name_to_vaduz(name: &str) -> PlanInput {
    PlanInput {
        from: PlaceInput::Named(name.to_owned()),
        via: Vec::new(),
        to: PlaceInput::At {
            lat: VADUZ.0,
            lon: VADUZ.1,
            name: None,
        },
        profile: RideProfile::Touring,
    }
}

/// How the names of `places` resolve through `upstreams`: (right, refused, wrong), right
/// meaning within `within_m` of its node (a name several places carry: of any of them).
async fn resolve_all(
    upstreams: &Upstreams,
    places: &[OsmPlace],
    within_m: f64,
) -> (usize, Vec<String>, Vec<String>) {
    let mut by_name: BTreeMap<&str, Vec<&OsmPlace>> = BTreeMap::new();
    for p in places {
        by_name.entry(p.name.as_str()).or_default().push(p);
    }
    let (mut right, mut refused, mut wrong) = (0, Vec::new(), Vec::new());
    for (name, nodes) in &by_name {
        match resolve_plan(upstreams, &from_name_to_vaduz(name)).await {
            Ok(RoutePlan { from, .. }) => {
                let own = nodes
                    .iter()
                    .any(|n| etappe_geo::haversine_m(from.lat, from.lon, n.lat, n.lon) < within_m);
                if own {
                    right += nodes.len();
                } else {
                    wrong.push(format!(
                        "{name} ({}) → {:?} at {:.4},{:.4}",
                        nodes[0].id, from.name, from.lat, from.lon
                    ));
                }
            }
            Err(AppError::Input(_)) => refused.push((*name).to_owned()),
            Err(other) => panic!("{name}: {other:?}"),
        }
    }
    (right, refused, wrong)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_village_and_town_of_the_extract_resolves_to_its_own_node() {
    if !osmium_installed() {
        assert!(
            std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
            "ETAPPE_REQUIRE_SERVICES=1 but osmium (Debian's osmium-tool) is not installed"
        );
        eprintln!("osmium is not installed: skipping the place names' ground truth");
        return;
    }
    let app = TestApp::spawn_with(Backend::Sqlite, |c| {
        c.budgets = etappe_services::config::BudgetSettings::unlimited();
    })
    .await
    .expect("app");
    let villages = osm_places("village,town,city");
    assert!(villages.len() >= 10, "only {} villages", villages.len());
    let mut gazetteer_only = app.state.work().upstreams.clone();
    gazetteer_only.local_index = None;
    let (before_right, before_refused, before_wrong) =
        resolve_all(&gazetteer_only, &villages, 2_000.0).await;

    super::import_liechtenstein(&app).await;
    let upstreams = &app.state.work().upstreams;
    let (right, refused, wrong) = resolve_all(upstreams, &villages, 1.0).await;
    println!(
        "FIGURE named villages and towns of the extract resolved to their own node: {right} of {} with the extract imported (refused {refused:?}, wrong {wrong:?}); the embedded gazetteer alone, within 2 km of the node: {before_right} (refused {before_refused:?}, elsewhere {before_wrong:?})",
        villages.len(),
    );
    assert!(wrong.is_empty(), "resolved elsewhere: {wrong:?}");
    assert_eq!(right, villages.len(), "refused: {refused:?}");

    // Hamlets, localities and the rest resolve to a place of their name (several share one).
    let smaller = osm_places("hamlet,isolated_dwelling,locality,suburb,quarter,neighbourhood");
    let (small_right, small_refused, small_wrong) = resolve_all(upstreams, &smaller, 1.0).await;
    println!(
        "FIGURE smaller named places (hamlets, localities, quarters): {small_right} of {} resolved to their own node, refused {small_refused:?}, elsewhere {small_wrong:?}",
        smaller.len(),
    );
    assert!(small_wrong.is_empty(), "{small_wrong:?}");

    // "Malbun" and "Steg" are Liechtenstein's, never Maluñgun or Steglitz.
    for (name, near) in [("Malbun", (47.10, 9.61)), ("Steg", (47.11, 9.57))] {
        let plan = resolve_plan(upstreams, &from_name_to_vaduz(name))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let d = etappe_geo::haversine_m(plan.from.lat, plan.from.lon, near.0, near.1);
        assert!(d < 2_000.0, "{name} resolved {d:.0} m off: {:?}", plan.from);
    }
    // A name that exists only far away is refused with its candidates, not taken.
    let refused = resolve_plan(upstreams, &from_name_to_vaduz("Steglitz"))
        .await
        .expect_err("far");
    let AppError::Input(input) = refused else {
        panic!("{refused:?}")
    };
    let message = &input.field_errors()[0].message;
    assert!(message.contains("Steglitz"), "{message}");
    assert!(message.contains("km from the other places"), "{message}");

    // The search: villages, stations, huts with their kind; timed over every village name.
    let token = app.user().await;
    let mut times = Vec::new();
    for p in villages.iter().chain(&smaller) {
        let path = format!(
            "/geocode/search?q={}&near={},{}",
            urlencoding(&p.name),
            VADUZ.0,
            VADUZ.1
        );
        let started = Instant::now();
        let found = app
            .call(
                reqwest::Method::GET,
                "/geocode/search",
                &path,
                Some(&token),
                &[],
                None,
            )
            .await;
        times.push(started.elapsed());
        assert_eq!(found.status, StatusCode::OK, "{}", found.body);
        if p.kind == "village" {
            let first = &found.body["items"][0];
            assert_eq!(first["name"], json!(p.name), "{}", found.body);
            assert_eq!(first["foundIn"], json!("extract"), "{}", found.body);
        }
    }
    times.sort();
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
    println!(
        "FIGURE place search over HTTP with the extract imported ({} queries): p50 {:?}, p99 {:?}",
        times.len(),
        at(0.5),
        at(0.99)
    );
    assert!(at(0.99) < Duration::from_millis(500));
    let stations = app
        .call(
            reqwest::Method::GET,
            "/geocode/search",
            "/geocode/search?q=Schaan&limit=10",
            Some(&token),
            &[],
            None,
        )
        .await;
    let kinds: Vec<&str> = stations.body["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["type"].as_str())
        .collect();
    assert!(kinds.contains(&"village"), "{}", stations.body);
    assert!(kinds.contains(&"station"), "{}", stations.body);
}

/// `text` for a query string.
fn urlencoding(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

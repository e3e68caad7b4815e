//! The generated OpenAPI document against the real server.
//!
//! - A journey (create, read, list, change the settings, split a day, choose nothing, share,
//!   read the shared trip, its history, its lines, duplicate, delete) whose every answer is
//!   validated with `jsonschema` against the document's schema for that operation and status
//!   (`TestApp::call` checks each one).
//! - Schemathesis (PyPI `schemathesis`, pinned in `tests/python/requirements.txt`) generates
//!   requests from the document, valid and invalid, and checks that the server never fails
//!   (5xx), answers only documented statuses, media types and bodies, refuses what the
//!   schemas refuse and accepts what they accept. Without it the test skips, saying how to
//!   install it (and fails under `ETAPPE_REQUIRE_SERVICES=1`, as in CI).

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use etappe_tests::{Backend, TestApp, fixtures};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const DEFAULT_PYTHON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/.venv/bin/python");
/// Where the checks are tuned (which refusals are the trip's state, not the request's shape).
const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/schemathesis.toml");
const HOOKS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/schemathesis_hooks.py");
const INSTALL: &str = "python3 -m venv tests/python/.venv && tests/python/.venv/bin/pip install -r tests/python/requirements.txt";
/// Examples per operation and phase: enough to find a loose schema, short enough for CI.
const MAX_EXAMPLES: &str = "20";
/// The run is killed past this.
const TIMEOUT: Duration = Duration::from_secs(240);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journey_answers_only_what_the_document_describes() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let call = |method: Method,
                template: &'static str,
                path: String,
                headers: Vec<(&'static str, String)>,
                body: Option<Value>| {
        let app = &app;
        let token = token.clone();
        async move {
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
            app.call(
                method,
                template,
                &path,
                Some(&token),
                &headers,
                body.as_ref(),
            )
            .await
        }
    };
    let created = app
        .create_trip(&token, &json!({"sourceUrl": fixtures.url("/route.gpx"), "title": "Alps", "maxDistancePerDay": 60}))
        .await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.body);
    let id = created.body["id"].as_str().expect("id").to_owned();
    let detail = app
        .wait_until(&token, &id, |d| d["partial"] == json!(false))
        .await;
    let trip = format!("/trips/{id}");
    let day = detail["stages"][0]["stageId"]
        .as_str()
        .expect("a day")
        .to_owned();
    let version = detail["version"].as_u64().expect("version");

    let list = call(
        Method::GET,
        "/trips",
        "/trips?itemsPerPage=5".into(),
        vec![],
        None,
    )
    .await;
    assert_eq!(list.status, StatusCode::OK);
    let summary = call(Method::GET, "/trips/{id}", trip.clone(), vec![], None).await;
    assert_eq!(summary.status, StatusCode::OK);
    let changed = call(
        Method::PATCH,
        "/trips/{id}",
        trip.clone(),
        vec![("if-match", format!("\"{version}\""))],
        Some(json!({"title": "Alps, again", "ebikeMode": true})),
    )
    .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    let version = changed.body["version"].as_u64().expect("version");
    let weak = call(
        Method::PATCH,
        "/trips/{id}",
        trip.clone(),
        vec![("if-match", format!("W/\"{version}\""))],
        Some(json!({"title": "Weak"})),
    )
    .await;
    assert_eq!(
        weak.status,
        StatusCode::BAD_REQUEST,
        "a weak tag is refused"
    );
    let stale = call(
        Method::PATCH,
        "/trips/{id}",
        trip.clone(),
        vec![("if-match", "\"1\"".into())],
        Some(json!({"title": "Stale"})),
    )
    .await;
    assert_eq!(stale.status, StatusCode::PRECONDITION_FAILED);
    let detail = app
        .wait_until(&token, &id, |d| d["partial"] == json!(false))
        .await;
    let day = detail["stages"][0]["stageId"]
        .as_str()
        .unwrap_or(&day)
        .to_owned();
    let both = call(
        Method::POST,
        "/trips/{id}/stages",
        format!("{trip}/stages"),
        vec![("if-match", format!("\"{version}\""))],
        Some(json!({"stageId": day, "distance": 10, "endPoint": {"lat": 45.0, "lon": 6.0}})),
    )
    .await;
    assert_eq!(
        both.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "not both: {}",
        both.body
    );
    let split = call(
        Method::POST,
        "/trips/{id}/stages",
        format!("{trip}/stages"),
        vec![("if-match", "*".into())],
        Some(json!({"stageId": day, "distance": 10, "label": "Short"})),
    )
    .await;
    assert_eq!(split.status, StatusCode::OK, "{}", split.body);
    let one = call(
        Method::GET,
        "/trips/{id}/stages/{stageId}/detail",
        format!("{trip}/stages/{day}/detail"),
        vec![],
        None,
    )
    .await;
    assert_eq!(one.status, StatusCode::OK);
    let cleared = call(
        Method::PATCH,
        "/trips/{id}/stages/{stageId}/accommodation",
        format!("{trip}/stages/{day}/accommodation"),
        vec![("if-match", "*".into())],
        Some(json!({})),
    )
    .await;
    assert_eq!(cleared.status, StatusCode::OK, "{}", cleared.body);
    let lines = call(
        Method::GET,
        "/trips/{id}/route",
        format!("{trip}/route"),
        vec![],
        None,
    )
    .await;
    assert_eq!(lines.status, StatusCode::OK);
    let history = call(
        Method::GET,
        "/trips/{id}/history",
        format!("{trip}/history"),
        vec![],
        None,
    )
    .await;
    assert_eq!(history.status, StatusCode::OK);
    let shared = call(
        Method::POST,
        "/trips/{id}/share",
        format!("{trip}/share"),
        vec![],
        None,
    )
    .await;
    assert_eq!(shared.status, StatusCode::CREATED);
    let code = shared.body["shortCode"].as_str().expect("code").to_owned();
    let public = app
        .call(
            Method::GET,
            "/s/{code}",
            &format!("/s/{code}"),
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(public.status, StatusCode::OK);
    let public_day = app
        .call(
            Method::GET,
            "/s/{code}/stages/{stageId}",
            &format!("/s/{code}/stages/{day}"),
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(public_day.status, StatusCode::OK);
    let copy = call(
        Method::POST,
        "/trips/{id}/duplicate",
        format!("{trip}/duplicate"),
        vec![("idempotency-key", uuid::Uuid::now_v7().to_string())],
        None,
    )
    .await;
    assert_eq!(copy.status, StatusCode::CREATED, "{}", copy.body);
    let places = call(
        Method::GET,
        "/geocode/search",
        "/geocode/search?q=Grenoble".into(),
        vec![],
        None,
    )
    .await;
    assert_eq!(places.status, StatusCode::OK);
    let gone = call(Method::DELETE, "/trips/{id}", trip.clone(), vec![], None).await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT);
    app.assert_stayed_inside();
}

#[test]
fn the_request_schemas_state_the_domain_limits() {
    use etappe_domain::trip::settings::{ELEVATION_PENALTY, FATIGUE_FACTOR};
    let doc = etappe_tests::openapi::document();
    let create = &doc["components"]["schemas"]["CreateTrip"]["properties"];
    assert_eq!(
        create["fatigueFactor"]["minimum"],
        json!(FATIGUE_FACTOR.min)
    );
    assert_eq!(
        create["elevationPenalty"]["exclusiveMinimum"],
        json!(ELEVATION_PENALTY.min)
    );
    let validate = |schema: &str, value: Value| {
        etappe_tests::openapi::validate(
            &json!({"$ref": format!("#/components/schemas/{schema}")}),
            &value,
        )
    };
    assert!(
        validate(
            "CreateTrip",
            json!({"sourceUrl": "https://example.org/a.gpx"})
        )
        .is_empty()
    );
    assert!(
        !validate("CreateTrip", json!({"sourceUrl": ""})).is_empty(),
        "sourceUrl non-empty"
    );
    assert!(
        !validate(
            "CreateTrip",
            json!({"sourceUrl": "https://x.org/a.gpx", "maxDistancePerDay": 301})
        )
        .is_empty()
    );
    assert!(
        !validate(
            "AddStage",
            json!({"stageId": uuid::Uuid::nil(), "distance": 5, "endPoint": {"lat": 1, "lon": 2}})
        )
        .is_empty(),
        "not both"
    );
    assert!(
        !validate("AddWaypoint", json!({"waypointLat": 91, "waypointLon": 0})).is_empty(),
        "latitude range"
    );
    // A place's name: what the domain accepts (a string, or null as `detail.plan` shows an
    // unnamed place) the document accepts, and what it refuses the document refuses.
    for (name, accepted) in [
        (json!("Vaduz"), true),
        (Value::Null, true),
        (json!(5), false),
        (json!(""), false),
    ] {
        let place = json!({"lat": 47.14, "lon": 9.52, "name": name});
        let by_domain = etappe_domain::trip::plan::parse_place("plan.from", &place).is_ok();
        let by_document = validate(
            "CreateTrip",
            json!({"plan": {"from": place, "to": "Schaan"}}),
        )
        .is_empty();
        assert_eq!((by_domain, by_document), (accepted, accepted), "{place}");
    }
    assert!(validate("ChooseAccommodation", json!({})).is_empty());
    assert!(
        !validate("ChooseAccommodation", json!({"lat": 45.0})).is_empty(),
        "lat and lon together"
    );
    let if_match = doc
        .pointer("/paths/~1trips~1{id}/patch/parameters")
        .expect("parameters")
        .as_array()
        .expect("list")
        .iter()
        .find(|p| p["name"] == json!("If-Match"))
        .expect("If-Match")["schema"]
        .clone();
    for good in ["\"3\"", "\"3\", \"4\"", "*"] {
        assert!(
            etappe_tests::openapi::validate(&if_match, &json!(good)).is_empty(),
            "{good}"
        );
    }
    for bad in ["W/\"3\"", "3", "\"x\"", ""] {
        assert!(
            !etappe_tests::openapi::validate(&if_match, &json!(bad)).is_empty(),
            "{bad}"
        );
    }
}

/// The interpreter with schemathesis (`ETAPPE_PYTHON`, else the workspace's venv), or why
/// there is none usable.
fn find_schemathesis() -> Result<PathBuf, String> {
    let python = std::env::var_os("ETAPPE_PYTHON")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_PYTHON), PathBuf::from);
    match Command::new(&python)
        .args(["-c", "import schemathesis"])
        .stdin(Stdio::null())
        .output()
    {
        Ok(out) if out.status.success() => Ok(python),
        Ok(_) => Err(format!("{} cannot import schemathesis", python.display())),
        Err(e) => Err(format!("cannot run {}: {e}", python.display())),
    }
}

/// What schemathesis did (`status` is `None` when it was killed at the deadline).
struct Run {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
}

/// The document as committed (`tests/snapshots/openapi.json`): a reshaping of the code that
/// changes what clients read shows up in review as a diff of this file. The trip-date patterns
/// follow the calendar, so their years are written `YYYY` here. Regenerate it with
/// `ETAPPE_UPDATE_SNAPSHOTS=1 cargo test -p etappe-tests --test e2e -- rest::openapi::the_document_matches`.
#[test]
fn the_document_matches_its_committed_snapshot() {
    let mut document = etappe_tests::openapi::document().clone();
    undated(&mut document);
    let live = serde_json::to_string_pretty(&document).expect("json") + "\n";
    etappe_tests::snapshot::assert_matches("openapi.json", &live);
}

/// `document` with each trip-date pattern's list of years (`^(2026|2027|…)-…`) as `YYYY`.
fn undated(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                match inner {
                    Value::String(pattern) if key == "pattern" => {
                        let years = pattern
                            .strip_prefix("^(")
                            .and_then(|rest| rest.split_once(")-"));
                        if let Some((years, tail)) = years {
                            let only_years = years
                                .split('|')
                                .all(|y| y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit()));
                            if only_years {
                                *pattern = format!("^(YYYY)-{tail}");
                            }
                        }
                    }
                    _ => undated(inner),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(undated),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_the_schemas_exactly_as_strict_as_the_server() {
    let python = match find_schemathesis() {
        Ok(python) => python,
        Err(problem) => {
            assert!(
                std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "ETAPPE_REQUIRE_SERVICES=1 but {problem}. Install it: {INSTALL} (or set ETAPPE_PYTHON)"
            );
            eprintln!(
                "skipped: {problem}. Install it from the workspace root: {INSTALL} (or set ETAPPE_PYTHON)"
            );
            return;
        }
    };
    // Budgets as wide as the run needs: a 429 is documented, but it would hide the rest.
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.budgets.changes_per_minute = 100_000;
        config.budgets.reads_per_minute = 100_000;
        config.budgets.creations_per_minute = 100_000;
        config.budgets.share_reads_per_address = 100_000;
        config.budgets.share_reads_per_code = 100_000;
    })
    .await
    .expect("app");
    // Generated source links name made-up hosts; the resolver refuses them (and records it).
    app.allow_outside_attempts();
    let token = app.user().await;
    let base = app.base.clone();
    let started = Instant::now();
    let run = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(&python)
            .args(["-m", "schemathesis.cli", "--config-file", CONFIG])
            .args(["run", &format!("{base}/openapi.json")])
            .args(["--url", &base])
            .args(["--header", &format!("Authorization: Bearer {token}")])
            .args(["--max-examples", MAX_EXAMPLES])
            .args(["--phases", "examples,coverage,fuzzing"])
            .args([
                "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,negative_data_rejection,positive_data_acceptance",
            ])
            .args(["--exclude-path", "/trips/{id}/events"])
            // One worker: hypothesis describes strategies through `ast`, which is not safe
            // across threads on every Python.
            .args(["--seed", "1", "--no-color", "--workers", "1"])
            .env("SCHEMATHESIS_HOOKS", HOOKS)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start schemathesis");
        // Both streams are drained as it runs: a full pipe would stall it.
        let drain = |stream: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut text = String::new();
                if let Some(mut stream) = stream {
                    let _ = stream.read_to_string(&mut text);
                }
                text
            })
        };
        let stdout = drain(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
        let stderr = drain(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            if let Ok(Some(status)) = child.try_wait() {
                break Some(status);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        Run {
            status,
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        }
    })
    .await
    .expect("schemathesis ran");
    eprintln!("schemathesis took {:?}", started.elapsed());
    let Some(status) = run.status else {
        panic!(
            "schemathesis did not finish within {TIMEOUT:?}:\n{}\n{}",
            run.stdout, run.stderr
        );
    };
    assert!(
        status.success(),
        "schemathesis found the document and the server apart:\n{}\n{}",
        run.stdout,
        run.stderr
    );
}

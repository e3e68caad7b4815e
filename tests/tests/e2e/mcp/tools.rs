//! The agent surface through real MCP clients over HTTP: rmcp's client (initialize era and
//! 2026-07-28) walks the whole journey; every tool refuses unknown arguments by name and
//! answers a foreign trip exactly like a random one; the tool list matches the catalogue
//! (hints included) and its committed snapshot; budgets are measured with the o200k
//! tokenizer; scopes are checked on every call; read-only tools write nothing; a downed
//! geocoder is named; confirmations go through a form where the client can ask its person;
//! Host and Origin checks stop DNS rebinding.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use etappe_services::mcp::catalogue::CATALOGUE;
use etappe_tests::{Backend, TestApp, UNFETCHED_GPX, fixtures};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, FormElicitationCapability, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Map, Value, json};

type Client = RunningService<RoleClient, ()>;

fn transport(app: &TestApp, token: &str) -> StreamableHttpClientTransport<reqwest::Client> {
    StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", app.base))
            .auth_header(token),
    )
}

async fn legacy_client(app: &TestApp, token: &str) -> Client {
    ().serve(transport(app, token)).await.expect("initialize")
}

async fn modern_client(app: &TestApp, token: &str) -> Client {
    ().serve_with_lifecycle(
        transport(app, token),
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .expect("discover")
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Each tool's published outputSchema, compiled, with the one shape of every refusal.
fn validators() -> &'static (
    HashMap<String, jsonschema::Validator>,
    jsonschema::Validator,
) {
    static VALIDATORS: OnceLock<(
        HashMap<String, jsonschema::Validator>,
        jsonschema::Validator,
    )> = OnceLock::new();
    VALIDATORS.get_or_init(|| {
        let compile = |schema: &Value| {
            jsonschema::options()
                .should_validate_formats(true)
                .build(schema)
                .expect("a valid JSON Schema")
        };
        let tools = etappe_services::mcp::tool_definitions()
            .into_iter()
            .map(|tool| {
                let schema = Value::Object(
                    tool.output_schema
                        .as_deref()
                        .cloned()
                        .expect("every tool publishes an outputSchema"),
                );
                (tool.name.to_string(), compile(&schema))
            })
            .collect();
        (
            tools,
            compile(&etappe_services::mcp::schema::error_schema()),
        )
    })
}

/// Fails unless `result` conforms: an answer to its tool's outputSchema, a refusal to the
/// error shape. Every call of these tests goes through it.
fn assert_conforms(name: &str, result: &CallToolResult) {
    let (tools, error) = validators();
    let Some(content) = &result.structured_content else {
        panic!("{name}: no structuredContent: {result:?}");
    };
    let validator = if result.is_error == Some(true) {
        error
    } else {
        tools.get(name).expect("a listed tool")
    };
    let problems: Vec<String> = validator
        .iter_errors(content)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        problems.is_empty(),
        "{name} answered outside its schema: {problems:?}\n{content}"
    );
}

async fn call<H: rmcp::ClientHandler>(
    client: &RunningService<RoleClient, H>,
    name: &str,
    arguments: Value,
) -> CallToolResult {
    let result = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args(arguments)))
        .await
        .expect("a tool result");
    assert_conforms(name, &result);
    result
}

fn ok(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(false), "{result:?}");
    result.structured_content.clone().expect("structured")
}

fn refused(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    // Every refusal, from a guard or a service, has the same structured shape.
    result
        .structured_content
        .as_ref()
        .expect("structured refusal")["error"]
        .as_str()
        .expect("an error message")
        .to_owned()
}

async fn poll_until_days(client: &Client, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut calls = 0;
    loop {
        calls += 1;
        let trip = ok(&call(client, "get_trip", json!({"id": id})).await);
        if trip["partial"] == json!(false)
            && trip["categoryStatus"]["terrain_security"] == json!("done")
        {
            eprintln!("get_trip polls until the days were analysed: {calls}");
            return trip;
        }
        assert!(Instant::now() < deadline, "no days in 30 s: {trip}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A trip made by an agent from the fixture route, once its days are analysed: its id and
/// its `get_trip` digest.
async fn trip_with_days(client: &Client, fixtures: &fixtures::Fixtures) -> (String, Value) {
    let created = ok(&call(
        client,
        "create_trip",
        json!({"sourceUrl": fixtures.url("/route.gpx")}),
    )
    .await);
    let id = created["id"].as_str().expect("id").to_owned();
    let trip = poll_until_days(client, &id).await;
    (id, trip)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_plans_edits_shares_and_deletes_a_trip() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let fixtures = fixtures::start().await;
    for modern in [false, true] {
        // One user per era: the rate limits count per user and client.
        let token = app.user().await;
        let client = if modern {
            modern_client(&app, &token).await
        } else {
            legacy_client(&app, &token).await
        };
        let mut calls = 0;
        let tools = client.list_all_tools().await.expect("tools");
        calls += 1;
        assert_eq!(tools.len(), 14, "thirteen tools and etappe_help");

        let created = ok(&call(
            &client,
            "create_trip",
            json!({"sourceUrl": fixtures.url("/route.gpx"), "settings": {"maxDistancePerDay": 70, "title": format!("Agent {modern}")}}),
        )
        .await);
        calls += 1;
        assert_eq!(created["partial"], json!(true));
        assert!(
            created["nextAction"]
                .as_str()
                .is_some_and(|s| s.contains("get_trip"))
        );
        let id = created["id"].as_str().expect("id").to_owned();
        // The same call again (an agent's retry) answers the same trip.
        let again = ok(&call(
            &client,
            "create_trip",
            json!({"settings": {"title": format!("Agent {modern}"), "maxDistancePerDay": 70}, "sourceUrl": fixtures.url("/route.gpx")}),
        )
        .await);
        assert_eq!(again["id"], json!(id));

        let trip = poll_until_days(&client, &id).await;
        calls += 1;
        let version = trip["version"].as_u64().expect("version");
        let day1 = trip["stages"][0]["stageId"]
            .as_str()
            .expect("day")
            .to_owned();
        let stage = ok(&call(&client, "get_stage", json!({"tripId": id, "stageId": day1})).await);
        calls += 1;
        assert!(stage.get("points").is_none(), "no geometry for agents");

        let edited = ok(&call(
            &client,
            "edit_stages",
            json!({"tripId": id, "action": "update", "version": version, "stageId": day1, "distance": 25}),
        )
        .await);
        calls += 1;
        assert_eq!(edited["version"], json!(version + 1));
        let stale = refused(
            &call(
                &client,
                "edit_stages",
                json!({"tripId": id, "action": "update", "version": version, "stageId": day1, "label": "x"}),
            )
            .await,
        );
        assert!(
            stale.contains(&format!(
                "you edited version {version}, the current one is {}",
                version + 1
            )),
            "{stale}"
        );
        let star = refused(
            &call(
                &client,
                "edit_stages",
                json!({"tripId": id, "action": "delete", "version": "*", "stageId": day1}),
            )
            .await,
        );
        assert!(star.contains("not accepted"), "{star}");
        let misspelt = refused(
            &call(
                &client,
                "edit_stages",
                json!({"tripId": id, "action": "update", "version": version + 1, "stageId": day1, "distnace": 5}),
            )
            .await,
        );
        assert!(
            misspelt.contains("distnace") && misspelt.contains("distance"),
            "a misspelt field is refused by name with what is accepted: {misspelt}"
        );

        // A setting that keeps the days changes at once: a speed changes timings, not where
        // the days end, so the days and their ids stay and only the analysis is asked again.
        let v = edited["version"].as_u64().expect("v");
        let changed = ok(&call(
            &client,
            "update_trip_settings",
            json!({"id": id, "version": v, "settings": {"averageSpeed": 18}}),
        )
        .await);
        assert!(
            changed.get("confirmationToken").is_none(),
            "nothing is lost, so nothing to confirm: {changed}"
        );
        calls += 1;
        assert!(
            changed["result"]
                .as_str()
                .is_some_and(|r| r.contains("the days stay")),
            "{changed}"
        );
        assert_eq!(
            changed["version"],
            json!(v + 1),
            "the analysis is asked again"
        );
        let after = ok(&call(&client, "get_trip", json!({"id": id})).await);
        assert_eq!(after["stages"][0]["stageId"], json!(day1), "{after}");
        // A setting create_trip does not take is refused by name, with the tool that does.
        let elsewhere = refused(
            &call(
                &client,
                "create_trip",
                json!({"sourceUrl": "https://e.org/a.gpx", "settings": {"fatigueFactor": 0.8}}),
            )
            .await,
        );
        assert!(
            elsewhere.contains("fatigueFactor") && elsewhere.contains("update_trip_settings"),
            "{elsewhere}"
        );

        // A setting that re-cuts the days goes through the confirmation flow: nothing is
        // written by the first call, and the token is bound to the arguments.
        let v = v + 1;
        let first = call(
            &client,
            "update_trip_settings",
            json!({"id": id, "version": v, "settings": {"elevationPenalty": 60}}),
        )
        .await;
        let token_value = first.structured_content.clone().expect("challenge")["confirmationToken"]
            .as_str()
            .expect("token")
            .to_owned();
        let other = refused(
            &call(&client, "update_trip_settings", json!({"id": id, "version": v, "settings": {"elevationPenalty": 61}, "confirmationToken": token_value})).await,
        );
        assert!(other.contains("not valid for this call"), "{other}");
        let first = call(
            &client,
            "update_trip_settings",
            json!({"id": id, "version": v, "settings": {"elevationPenalty": 60}}),
        )
        .await;
        calls += 1;
        let token_value = first.structured_content.clone().expect("challenge")["confirmationToken"]
            .as_str()
            .expect("token")
            .to_owned();
        let changed = ok(&call(
            &client,
            "update_trip_settings",
            json!({"id": id, "version": v, "settings": {"elevationPenalty": 60}, "confirmationToken": token_value}),
        )
        .await);
        calls += 1;
        assert!(
            changed["result"]
                .as_str()
                .is_some_and(|r| r.contains("recomputed")),
            "{changed}"
        );
        assert_eq!(changed["version"], json!(v + 1), "{changed}");
        let recut = poll_until_days(&client, &id).await;
        assert_eq!(
            recut["settings"]["elevationPenalty"].as_f64(),
            Some(60.0),
            "{recut}"
        );

        let shared = ok(&call(&client, "share_trip", json!({"tripId": id})).await);
        calls += 1;
        let code = shared["shortCode"].as_str().expect("code").to_owned();
        // The link works as given: built on the address the agent reached.
        let url = shared["url"].as_str().expect("url").to_owned();
        assert_eq!(url, format!("{}/s/{code}", app.base));
        let public = app
            .client
            .get(format!("{url}.gpx"))
            .send()
            .await
            .expect("gpx");
        assert_eq!(public.status(), 200);

        for tool in ["unshare_trip", "delete_trip"] {
            let key = if tool == "unshare_trip" {
                "tripId"
            } else {
                "id"
            };
            let first = call(&client, tool, json!({key: id})).await;
            calls += 1;
            let challenge = first.structured_content.clone().expect("challenge");
            assert_eq!(challenge["confirmationRequired"], json!(true));
            if tool == "delete_trip" {
                assert_eq!(challenge["impact"]["hasActiveShareLink"], json!(false));
            }
            let t = challenge["confirmationToken"].as_str().expect("token");
            ok(&call(&client, tool, json!({key: id, "confirmationToken": t})).await);
            calls += 1;
        }
        let gone = app
            .client
            .get(format!("{}/s/{code}", app.base))
            .send()
            .await
            .expect("s");
        assert_eq!(gone.status(), 404);
        let missing = refused(&call(&client, "get_trip", json!({"id": id})).await);
        assert!(missing.contains("not found"), "{missing}");
        eprintln!(
            "journey ({}): {calls} calls",
            if modern { "2026-07-28" } else { "initialize" }
        );
    }
}

/// A call with every required argument filled with a plausible value.
fn sample_arguments(tool: &str, trip: &str, stage: &str) -> Value {
    let spec = CATALOGUE.iter().find(|s| s.name == tool).expect("spec");
    let mut out = Map::new();
    for a in spec.args.iter().filter(|a| a.required) {
        let v = match a.name {
            "id" | "tripId" => json!(trip),
            "stageId" => json!(stage),
            "version" => json!(2),
            "action" => json!("delete"),
            "waypointLat" => json!(45.1),
            "waypointLon" => json!(6.1),
            "q" => json!("Lyon"),
            "sourceUrl" => json!(UNFETCHED_GPX),
            _ => json!("x"),
        };
        out.insert(a.name.to_owned(), v);
    }
    Value::Object(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_refuses_unknown_arguments_and_hides_foreign_trips() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let fixtures = fixtures::start().await;
    let owner = app.user().await;
    let stranger = app.user().await;
    let created = app
        .create_trip(&owner, &json!({"sourceUrl": fixtures.url("/route.gpx")}))
        .await;
    let foreign = created.body["id"].as_str().expect("id").to_owned();
    let random = "0190a0a0-0000-7000-8000-00000000abcd";
    let stage = "0190a0a0-0000-7000-8000-000000000001";
    let client = legacy_client(&app, &stranger).await;
    for spec in CATALOGUE {
        let mut bad = sample_arguments(spec.name, random, stage);
        bad["colour\u{0007}"] = json!("blue");
        let message = refused(&call(&client, spec.name, bad).await);
        assert!(
            message.contains("Unknown argument \"colour\"") && message.contains("etappe_help"),
            "{}: {message}",
            spec.name
        );
        if spec
            .args
            .iter()
            .any(|a| a.name == "id" || a.name == "tripId")
            && spec.name != "create_trip"
        {
            let a = call(
                &client,
                spec.name,
                sample_arguments(spec.name, &foreign, stage),
            )
            .await;
            let b = call(
                &client,
                spec.name,
                sample_arguments(spec.name, random, stage),
            )
            .await;
            let text = |r: &CallToolResult, id: &str| refused(r).replace(id, "ID");
            assert_eq!(text(&a, &foreign), text(&b, random), "{}", spec.name);
        }
    }
    // The owner's trip is untouched by all of that.
    let detail = app.detail(&owner, &foreign).await;
    assert_eq!(detail.status, 200);
    let unknown = client
        .call_tool(CallToolRequestParams::new("no_such_tool"))
        .await;
    assert!(unknown.is_err(), "an unknown tool is a JSON-RPC error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_list_is_the_catalogue_with_honest_hints() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let token = app.user().await;
    let client = legacy_client(&app, &token).await;
    let tools = client.list_all_tools().await.expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let catalogue: Vec<&str> = CATALOGUE.iter().map(|s| s.name).collect();
    assert_eq!(names, catalogue);
    for (tool, spec) in tools.iter().zip(CATALOGUE) {
        let a = tool.annotations.as_ref().expect("annotations");
        assert_eq!(
            (
                a.read_only_hint,
                a.destructive_hint,
                a.idempotent_hint,
                a.open_world_hint
            ),
            (
                Some(spec.hints.read_only),
                Some(spec.hints.destructive),
                Some(spec.hints.idempotent),
                Some(spec.hints.open_world)
            ),
            "{}",
            spec.name
        );
        assert_eq!(tool.description.as_deref(), Some(spec.description));
        let properties = tool.input_schema["properties"]
            .as_object()
            .expect("properties");
        // Every argument is typed (a nullable one as anyOf its type and null); a bound, a
        // list or a format is a keyword, not prose.
        assert!(
            properties.values().all(|p| p.get("type").is_some()
                || p["anyOf"]
                    .as_array()
                    .is_some_and(|a| a.iter().all(|s| s.get("type").is_some()))),
            "{}",
            spec.name
        );
        assert_eq!(
            tool.output_schema.as_deref().cloned().map(Value::Object),
            Some((spec.output)()),
            "{}",
            spec.name
        );
        // Read-only tools are exactly those that mutate nothing and need only trips:read.
        assert_eq!(spec.hints.read_only, !spec.hints.mutates(), "{}", spec.name);
    }
    let help = ok(&call(&client, "etappe_help", json!({})).await);
    assert_eq!(
        help["tools"].as_array().map(Vec::len),
        Some(CATALOGUE.len())
    );
    let topic = ok(&call(&client, "etappe_help", json!({"topic": "edit_stages"})).await);
    assert!(
        topic["semantics"]
            .as_str()
            .is_some_and(|s| s.contains("rest_day"))
    );
    let resource = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "etappe://tools",
        ))
        .await
        .expect("resource");
    assert_eq!(resource.contents.len(), 1);
    let instructions = client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    assert!(CATALOGUE.iter().all(|s| instructions.contains(s.name)));
}

/// The raw `tools/list` result, as a client receives it.
async fn raw_tools_list(app: &TestApp, token: &str) -> Value {
    app.mcp_raw(token, "tools/list", Value::Null).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budgets_hold_with_a_real_tokenizer() {
    // The weather and Overpass configured, so the days carry their weather token, and every
    // alert group is read (the Overpass stand-in puts a main road, gravel, a museum and a
    // ford into every 150 km and one water tap).
    let upstreams = etappe_tests::standins::start().await;
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.work.upstreams.weather_url = Some(upstreams.url("open-meteo"));
        config.work.upstreams.overpass_url = Some(upstreams.url("overpass"));
    })
    .await
    .expect("app");
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let bpe = tiktoken_rs::o200k_base().expect("o200k");
    let tokens = |v: &Value| bpe.encode_ordinary(&v.to_string()).len();
    let list = raw_tools_list(&app, &token).await;
    let total = tokens(&list);
    eprintln!("tools/list: {total} tokens");
    // Every tool is printed before any limit is checked, so a failure shows the whole list.
    let sizes: Vec<(String, usize)> = list["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| {
            (
                tool["name"].as_str().unwrap_or_default().to_owned(),
                tokens(tool),
            )
        })
        .collect();
    for (name, n) in &sizes {
        eprintln!("  {name:<22} {n}");
    }
    // The seeds' thirteen tools and etappe_help, each within 260 tokens and the list within
    // 2,400 (about 2,210 measured: update_trip_settings names its twelve settings and
    // etappe_help types them, the edit's fields flat, no `title`, no `additionalProperties`
    // or output `required` lists).
    assert_eq!(sizes.len(), 14, "thirteen tools and etappe_help: {sizes:?}");
    for (name, n) in &sizes {
        assert!(*n <= 260, "{name}: {n} tokens, over 260");
    }
    assert!(total <= 2_400, "tools/list is {total} tokens");
    let client = legacy_client(&app, &token).await;
    let help = ok(&call(&client, "etappe_help", json!({})).await);
    eprintln!("help index: {} tokens", tokens(&help));

    // A 30-day trip (a dated, alpine 1,000 km route with alerts on every day, starting in
    // three days: the first 13 days with a forecast, the rest beyond the horizon): the
    // digest has a fixed budget of 300 tokens plus 105 a day (a day's line is ~95: its km,
    // climb, ends, alert codes and weather, and where its water, food, bike shop and night
    // are), with no truncation.
    let start = chrono::Utc::now().date_naive() + chrono::Days::new(3);
    for (days, per_day) in [(10u32, 100.0f64), (30, 33.4)] {
        let end = start + chrono::Days::new(u64::from(days) - 1);
        let created = ok(&call(
            &client,
            "create_trip",
            json!({"sourceUrl": fixtures.url("/steep.gpx"), "settings": {"maxDistancePerDay": per_day.max(34.0), "startDate": start.to_string(), "endDate": end.to_string()}}),
        )
        .await);
        let id = created["id"].as_str().expect("id").to_owned();
        let trip = poll_until_days(&client, &id).await;
        let stages = trip["stages"].as_array().expect("stages");
        assert_eq!(stages.len(), days as usize, "{trip}");
        let with_alerts = stages
            .iter()
            .filter(|s| s["alerts"].as_u64() > Some(0))
            .count();
        eprintln!("{days} days, {with_alerts} with alerts");
        assert_eq!(
            trip["categoryStatus"]["points_of_interest"],
            json!("done"),
            "{trip}"
        );
        assert_eq!(with_alerts, days as usize, "every day has alerts: {trip}");
        let forecast = stages
            .iter()
            .filter(|s| s["weather"].as_str().is_some_and(|w| w.contains("°C")))
            .count();
        assert_eq!(
            forecast,
            days.min(13) as usize,
            "a weather token a day: {trip}"
        );
        let n = tokens(&trip);
        eprintln!("get_trip, {days} days ({forecast} with a forecast): {n} tokens");
        assert!(n <= 300 + 105 * days as usize, "{days} days: {n} tokens");
    }
}

/// A client whose person answers every confirmation form: yes or no.
#[derive(Clone)]
struct Person {
    says_yes: bool,
    asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Person {
    fn new(says_yes: bool) -> Self {
        Self {
            says_yes,
            asked: std::sync::Arc::default(),
        }
    }

    fn questions(&self) -> Vec<String> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

impl rmcp::ClientHandler for Person {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request
            && let Ok(mut asked) = self.asked.lock()
        {
            asked.push(message.clone());
        }
        Ok(if self.says_yes {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true}))
        } else {
            ElicitResult::new(ElicitationAction::Decline)
        })
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        info
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_can_ask_its_person_confirms_through_a_form() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let token = app.user().await;
    let created = app
        .create_trip(
            &token,
            &json!({"sourceUrl": UNFETCHED_GPX, "title": "Jura"}),
        )
        .await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    // A public link is something to lose: deleting asks (a trip with nothing to lose goes
    // at once).
    share(&app, &token, &id).await;
    let modern = |person: Person| {
        let transport = transport(&app, &token);
        async move {
            person
                .serve_with_lifecycle(
                    transport,
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
                .expect("discover")
        }
    };

    // The person says no: nothing changes, and the agent is told so.
    let hesitant = Person::new(false);
    let client = modern(hesitant.clone()).await;
    let declined = refused(&call(&client, "delete_trip", json!({"id": id})).await);
    assert!(declined.contains("declined"), "{declined}");
    let asked = hesitant.questions();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].contains("\"Jura\"") && asked[0].ends_with("Go ahead?"),
        "{asked:?}"
    );
    assert_eq!(app.detail(&token, &id).await.status, 200, "still there");

    // The person says yes: one call from the agent, and the trip is gone.
    let willing = Person::new(true);
    let client = modern(willing.clone()).await;
    let deleted = ok(&call(&client, "delete_trip", json!({"id": id})).await);
    assert!(deleted.get("confirmationToken").is_none(), "{deleted}");
    assert_eq!(willing.questions().len(), 1);
    assert_eq!(app.detail(&token, &id).await.status, 404);

    // A client of the initialize era cannot be asked mid-call by a stateless server: it gets
    // the token flow, even when it declares elicitation.
    let other = app
        .create_trip(&token, &json!({"sourceUrl": "http://127.0.0.1:9/b.gpx"}))
        .await;
    let other_id = other.body["id"].as_str().expect("id").to_owned();
    share(&app, &token, &other_id).await;
    let legacy_person = Person::new(true);
    let legacy = legacy_person
        .clone()
        .serve(transport(&app, &token))
        .await
        .expect("initialize");
    let challenge = ok(&call(&legacy, "delete_trip", json!({"id": other_id})).await);
    assert_eq!(
        challenge["confirmationRequired"],
        json!(true),
        "{challenge}"
    );
    assert!(legacy_person.questions().is_empty());
    assert_eq!(app.detail(&token, &other_id).await.status, 200);
}

/// Opens the trip's public link (REST).
async fn share(app: &TestApp, token: &str, id: &str) {
    let shared = app
        .call(
            reqwest::Method::POST,
            "/trips/{id}/share",
            &format!("/trips/{id}/share"),
            Some(token),
            &[],
            None,
        )
        .await;
    assert!(shared.status.is_success(), "{}", shared.body);
}

/// Every event in the store, as `(stream, type)`.
async fn every_event(app: &TestApp) -> Vec<(String, String)> {
    app.state
        .work()
        .store
        .read_all(etappe_events::Cursor::START, 100_000)
        .await
        .expect("read the log")
        .into_iter()
        .map(|e| (e.stream_id, e.event_type))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_tool_reaches_no_mutating_service() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let client = legacy_client(&app, &token).await;
    let (id, trip) = trip_with_days(&client, &fixtures).await;
    let day = trip["stages"][0]["stageId"]
        .as_str()
        .expect("day")
        .to_owned();
    let before = every_event(&app).await;

    // Every tool that declares readOnlyHint, called with valid arguments (and a few bad
    // ones): the log does not grow by a single event.
    let mut called = Vec::new();
    for spec in CATALOGUE.iter().filter(|s| s.hints.read_only) {
        let calls = match spec.name {
            "list_trips" => vec![json!({}), json!({"title": "x", "page": 2})],
            "get_trip" => vec![json!({"id": id}), json!({"id": "nope"})],
            "get_stage" => vec![json!({"tripId": id, "stageId": day})],
            "search_places" => vec![json!({"q": "Lyon", "limit": 3})],
            "etappe_help" => vec![json!({}), json!({"topic": "edit_stages"})],
            other => panic!("{other} is read-only but this test does not call it: add it"),
        };
        for arguments in calls {
            let _ = call(&client, spec.name, arguments).await;
        }
        called.push(spec.name);
    }
    assert_eq!(called.len(), 5, "{called:?}");
    assert_eq!(
        every_event(&app).await,
        before,
        "a read-only tool wrote an event"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downed_geocoder_is_named_and_the_tool_list_stays_the_same() {
    let healthy = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let healthy_token = healthy.user().await;
    let geocoder = etappe_tests::standins::slow_geocoder(Duration::from_secs(5)).await;
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.work.upstreams.nominatim_url = Some(geocoder.clone());
        config.work.upstreams.timeout_secs = 1;
    })
    .await
    .expect("app");
    let token = app.user().await;
    let client = modern_client(&app, &token).await;
    let result = call(&client, "search_places", json!({"q": "Lyon"})).await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let error = result.structured_content.clone().expect("structured error");
    assert_eq!(error["upstream"], json!("geocoder"), "{error}");
    assert_eq!(error["failure"], json!("timeout after 1s"), "{error}");
    assert_eq!(error["retryable"], json!(true), "{error}");
    assert!(
        error["error"]
            .as_str()
            .is_some_and(|m| m.contains("geocoder")),
        "{error}"
    );
    assert_eq!(
        raw_tools_list(&app, &token).await,
        raw_tools_list(&healthy, &healthy_token).await,
        "the tool list never changes with upstream health"
    );
    // Tools that need no geocoder keep working.
    let help = call(&client, "list_trips", json!({})).await;
    assert_eq!(help.is_error, Some(false));
}

/// The committed `tools/list` (toolsnaps style): any change to a name, description, schema or
/// hint shows up in review as a diff of this file. Regenerate it with
/// `ETAPPE_UPDATE_SNAPSHOTS=1 cargo test -p etappe-tests --test e2e mcp::tools::the_tool_list_matches`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_list_matches_its_committed_snapshot() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let token = app.user().await;
    let list = raw_tools_list(&app, &token).await;
    let live = serde_json::to_string_pretty(&list["tools"]).expect("json") + "\n";
    etappe_tests::snapshot::assert_matches("mcp-tools-list.json", &live);
}

/// `tools/list` with these extra headers: the HTTP status.
async fn status_with(app: &TestApp, token: &str, headers: &[(&str, &str)]) -> u16 {
    let mut request = app
        .client
        .post(format!("{}/mcp", app.base))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .expect("mcp")
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_and_origin_checks_stop_rebinding_and_admit_the_deployment() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.public_url = Some("https://trips.example.org".into());
        config.mcp_allowed_hosts = vec!["mcp.internal".into()];
        config.mcp_allowed_origins = vec!["https://agent.example.net".into()];
    })
    .await
    .expect("app");
    let token = app.user().await;
    let port = app.base.rsplit(':').next().expect("port").to_owned();
    let loopback_origin = format!("http://127.0.0.1:{port}");
    for (headers, expected, why) in [
        (vec![], 200, "no Origin: not a browser"),
        (
            vec![("origin", loopback_origin.as_str())],
            200,
            "a loopback page",
        ),
        (
            vec![("host", "trips.example.org")],
            200,
            "the public URL's host",
        ),
        (vec![("host", "mcp.internal")], 200, "a listed host"),
        (
            vec![("origin", "https://trips.example.org")],
            200,
            "the public URL's origin",
        ),
        (
            vec![("origin", "https://agent.example.net")],
            200,
            "a listed origin",
        ),
        (
            vec![("host", "evil.example.com")],
            403,
            "DNS rebinding: a foreign Host",
        ),
        (
            vec![("origin", "http://evil.example.com")],
            403,
            "a foreign page",
        ),
        (
            vec![("origin", "https://trips.example.org.evil.com")],
            403,
            "a look-alike origin",
        ),
    ] {
        assert_eq!(status_with(&app, &token, &headers).await, expected, "{why}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scopes_are_checked_on_every_call_and_tokens_at_the_door() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let owner = app.user().await;
    let created = app
        .create_trip(&owner, &json!({"sourceUrl": UNFETCHED_GPX}))
        .await;
    let id = created.body["id"].as_str().expect("id").to_owned();
    // A read-only token of another user reads its own world and cannot write anything.
    let reader = app
        .user_with(&[etappe_app::identity::Scope::TripsRead])
        .await;
    let client = modern_client(&app, &reader).await;
    assert_eq!(
        call(&client, "list_trips", json!({})).await.is_error,
        Some(false)
    );
    for spec in CATALOGUE.iter().filter(|s| !s.hints.read_only) {
        let refusal =
            refused(&call(&client, spec.name, sample_arguments(spec.name, &id, &id)).await);
        assert!(refusal.contains("trips:write"), "{}: {refusal}", spec.name);
    }
    assert_eq!(
        app.detail(&owner, &id).await.status,
        200,
        "nothing was written"
    );

    // No token, or a wrong one: 401 with a challenge naming the scopes, before any MCP.
    for token in [None, Some("etp_not-a-token")] {
        let mut request = app
            .client
            .post(format!("{}/mcp", app.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let answer = request.send().await.expect("mcp");
        assert_eq!(answer.status(), 401, "{token:?}");
        let challenge = answer.headers()["www-authenticate"]
            .to_str()
            .expect("challenge")
            .to_owned();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
        assert!(challenge.contains("trips:write"), "{challenge}");
    }
}

#[test]
fn settings_and_changes_are_typed_with_the_domains_ranges() {
    let tools = etappe_services::mcp::tool_definitions();
    let input = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).expect("tool");
        Value::Object(tool.input_schema.as_ref().clone())
    };
    // create_trip types its six settings with the domain's ranges in tools/list;
    // update_trip_settings names its twelve there and etappe_help types each one, with the
    // domain's range and default (one tool for one PATCH, within the 260-token budget).
    let create = input("create_trip")["properties"]["settings"]["properties"].clone();
    let listed = input("update_trip_settings")["properties"]["settings"].clone();
    assert_eq!(listed["type"], json!("object"));
    let help = etappe_services::mcp::catalogue::help(Some("update_trip_settings")).expect("help");
    let recut = help["args"]
        .as_array()
        .and_then(|args| args.iter().find(|a| a["name"] == "settings"))
        .map(|a| a["schema"]["properties"].clone())
        .expect("settings in etappe_help");
    for name in recut.as_object().expect("properties").keys() {
        assert!(
            listed["description"]
                .as_str()
                .is_some_and(|d| d.contains(name.as_str())),
            "tools/list names {name}: {listed}"
        );
    }
    assert_eq!(recut["maxDistancePerDay"]["default"].as_f64(), Some(80.0));
    assert_eq!(recut["departureHour"]["default"], json!(8));
    let details = recut.clone();
    for p in [&create, &recut] {
        assert_eq!(
            (
                &p["maxDistancePerDay"]["minimum"],
                &p["maxDistancePerDay"]["maximum"]
            ),
            (&json!(10), &json!(300))
        );
    }
    assert_eq!(create["startDate"]["format"], json!("date"));
    assert_eq!(create["endDate"]["type"], json!("string"));
    assert_eq!(
        recut["endDate"]["anyOf"],
        json!([{"type": "string", "format": "date"}, {"type": "null"}]),
        "null clears a date on update, said as anyOf (single-type dialects read it)"
    );
    assert_eq!(
        (
            &details["averageSpeed"]["minimum"],
            &details["averageSpeed"]["maximum"]
        ),
        (&json!(5), &json!(50))
    );
    // create_trip's title goes without its length keywords (tokens are tight there: the
    // domain refuses an empty or overlong title by name); the settings tool types it.
    assert_eq!(
        (
            &details["title"]["minLength"],
            &details["title"]["maxLength"]
        ),
        (&json!(1), &json!(255))
    );
    assert!(create["title"].get("maxLength").is_none(), "{create}");
    assert_eq!(
        (
            &recut["fatigueFactor"]["minimum"],
            &recut["fatigueFactor"]["maximum"]
        ),
        (&json!(0.5), &json!(1))
    );
    assert_eq!(recut["elevationPenalty"]["exclusiveMinimum"], json!(0));
    assert_eq!(
        (
            &details["departureHour"]["type"],
            &details["departureHour"]["maximum"]
        ),
        (&json!("integer"), &json!(23))
    );
    assert_eq!(details["ebikeMode"]["type"], json!("boolean"));
    assert_eq!(
        details["enabledAccommodationTypes"]["items"]["enum"]
            .as_array()
            .map(Vec::len),
        Some(7)
    );
    let published: std::collections::BTreeSet<String> = recut
        .as_object()
        .expect("properties")
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        published.len(),
        12,
        "every setting is published: {published:?}"
    );
    let edit = input("edit_stages");
    for field in ["distance", "endPoint", "label", "toIndex"] {
        let schema = &edit["properties"][field];
        assert!(
            schema["type"].is_string()
                || schema["anyOf"]
                    .as_array()
                    .is_some_and(|a| a.iter().all(|s| s["type"].is_string())),
            "{field}: {schema}"
        );
    }
    assert_eq!(
        input("edit_stages")["properties"]["action"]["enum"],
        json!(["add", "update", "move", "delete", "merge_next", "rest_day"])
    );
    // A value the schema refuses is one the domain refuses: the validator and the rule agree.
    let create = jsonschema::validator_for(&input("create_trip")).expect("schema");
    assert!(create.is_valid(
        &json!({"sourceUrl": "https://e.org/a.gpx", "settings": {"maxDistancePerDay": 80}})
    ));
    assert!(!create.is_valid(
        &json!({"sourceUrl": "https://e.org/a.gpx", "settings": {"maxDistancePerDay": 500}})
    ));
    assert!(
        !create.is_valid(&json!({"sourceUrl": "https://e.org/a.gpx", "settings": {"days": 0}}))
    );
    // create_trip's title has no length keywords (tokens): an empty one passes the schema
    // and the domain refuses it by name (`parse_title` in domain/src/trip/input.rs, tested
    // there).
    // A plan's places are typed too: names or "lat,lon" (how many via places the domain
    // takes, at most 20, it says when it refuses more: the keyword would cost the budget).
    assert!(
        create.is_valid(
            &json!({"from": "Basel", "via": ["Zürich"], "to": "Wien", "profile": "gravel"})
        )
    );
    assert!(!create.is_valid(&json!({"from": "Basel", "to": "Wien", "profile": "tandem"})));
}

/// A raw POST to `/mcp`: the HTTP status and the JSON body (`Null` when it is not JSON).
async fn post_raw(app: &TestApp, token: &str, body: &str) -> (u16, Value) {
    let mut request = app
        .client
        .post(format!("{}/mcp", app.base))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    // An initialize names its revision in its params; everything else in the header.
    if !body.contains("\"initialize\"") {
        request = request.header("mcp-protocol-version", "2025-11-25");
    }
    let response = request.body(body.to_owned()).send().await.expect("mcp");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_messages_get_json_rpc_errors_and_batches_are_refused() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let token = app.user().await;
    let cases = [
        (
            "{\"jsonrpc\": \"2.0\", \"id\": 1,",
            400,
            -32700,
            Value::Null,
            "not JSON",
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#,
            400,
            -32600,
            Value::Null,
            "a batch",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}"#,
            200,
            -32602,
            json!(3),
            "no tool name",
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":["get_trip"]}}"#,
            200,
            -32602,
            json!(4),
            "a name that is not a string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"five","method":"tools/call","params":{"name":"list_trips","arguments":"{}"}}"#,
            200,
            -32602,
            json!("five"),
            "arguments that are not an object",
        ),
    ];
    for (body, status, code, id, why) in cases {
        let (got_status, answer) = post_raw(&app, &token, body).await;
        assert_eq!(got_status, status, "{why}: {answer}");
        assert_eq!(answer["jsonrpc"], json!("2.0"), "{why}: {answer}");
        assert_eq!(answer["error"]["code"], json!(code), "{why}: {answer}");
        assert_eq!(answer["id"], id, "{why}: {answer}");
    }
    // A body over the 4 MiB read limit is refused in JSON-RPC terms too, saying the limit.
    let huge = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list",
        "params": {"cursor": "x".repeat(5 * 1024 * 1024)}})
    .to_string();
    let (status, answer) = post_raw(&app, &token, &huge).await;
    assert_eq!(status, 413, "{answer}");
    assert_eq!(answer["jsonrpc"], json!("2.0"), "{answer}");
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    assert_eq!(answer["error"]["data"]["maxBytes"], json!(4 * 1024 * 1024));
    // Batches are refused, so the revision that required them is not offered: an initialize
    // asking for 2025-03-26 is answered with a revision that has no batches.
    let (status, answer) = post_raw(
        &app,
        &token,
        &json!({"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"}}})
        .to_string(),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let version = answer["result"]["protocolVersion"]
        .as_str()
        .unwrap_or_default();
    assert!(version >= "2025-06-18", "{answer}");
    // A well-formed call still goes through.
    let (status, answer) = post_raw(
        &app,
        &token,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_trips","arguments":{}}}"#,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
}

/// Issue 22: a browser-based MCP client on an allowed origin can call `/mcp`: its preflight
/// is answered without a credential, every answer names the origin and exposes the headers a
/// client reads; any other origin gets neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browsers_on_allowed_origins_pass_cors_and_others_do_not() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.mcp_allowed_origins = vec!["https://agent.example.net".into()];
    })
    .await
    .expect("app");
    let preflight = |origin: &'static str| {
        app.client
            .request(reqwest::Method::OPTIONS, format!("{}/mcp", app.base))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type, mcp-protocol-version",
            )
            .send()
    };
    let allowed = preflight("https://agent.example.net")
        .await
        .expect("preflight");
    assert_eq!(
        allowed.status().as_u16(),
        204,
        "no credential is asked of a preflight"
    );
    let h = allowed.headers();
    assert_eq!(
        h["access-control-allow-origin"],
        "https://agent.example.net"
    );
    let allow_headers = h["access-control-allow-headers"]
        .to_str()
        .unwrap_or_default();
    for needed in ["authorization", "mcp-protocol-version", "content-type"] {
        assert!(allow_headers.contains(needed), "{allow_headers}");
    }
    assert!(
        h["access-control-allow-methods"]
            .to_str()
            .unwrap_or_default()
            .contains("POST")
    );
    let refused = preflight("https://evil.example.com")
        .await
        .expect("preflight");
    assert_eq!(refused.status().as_u16(), 403);
    assert!(
        !refused
            .headers()
            .contains_key("access-control-allow-origin")
    );
    eprintln!(
        "preflight answers: allowed origin {}, refused origin {}",
        allowed.status().as_u16(),
        refused.status().as_u16()
    );

    // The 401 of discovery is readable by the page: the origin and WWW-Authenticate exposed.
    let unauthorized = app
        .client
        .post(format!("{}/mcp", app.base))
        .header("origin", "https://agent.example.net")
        .header("content-type", "application/json")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .expect("mcp");
    assert_eq!(unauthorized.status().as_u16(), 401);
    let h = unauthorized.headers();
    assert_eq!(
        h["access-control-allow-origin"],
        "https://agent.example.net"
    );
    let exposed = h["access-control-expose-headers"]
        .to_str()
        .unwrap_or_default()
        .to_owned();
    for header in ["www-authenticate", "mcp-session-id", "mcp-protocol-version"] {
        assert!(exposed.contains(header), "{exposed}");
    }
    let token = app.user().await;
    let answered = app
        .client
        .post(format!("{}/mcp", app.base))
        .bearer_auth(&token)
        .header("origin", "https://agent.example.net")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .expect("mcp");
    assert_eq!(answered.status().as_u16(), 200);
    assert_eq!(
        answered.headers()["access-control-allow-origin"],
        "https://agent.example.net"
    );
}

/// Issue 22: a revision the server does not speak is refused with 400, not half-served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsupported_protocol_version_is_a_400() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let token = app.user().await;
    for (version, expected) in [
        ("2025-03-26", 400),
        ("2024-11-05", 400),
        ("not-a-version", 400),
        ("2025-06-18", 200),
        ("2025-11-25", 200),
    ] {
        let answer = app
            .client
            .post(format!("{}/mcp", app.base))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", version)
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
            .send()
            .await
            .expect("mcp");
        assert_eq!(answer.status().as_u16(), expected, "{version}");
        if expected == 400 {
            let body: Value = answer.json().await.expect("json");
            assert!(
                body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("2025-06-18")),
                "names what is served: {body}"
            );
        }
    }
}

/// Issue 22: what agents met on writes — confirmations over canonical arguments that survive a
/// wrong retry, refusals that do not spend the change budget, hints that lead to a tool, a
/// split that must be placed, and a missing resource named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_correcting_themselves_are_not_locked_out_and_hints_name_tools() {
    // Room for the polls and the burst in the call budget: what is under test is the change
    // budget (20 a minute), which refusals must not spend.
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.budgets.mcp_calls_per_minute = 200;
    })
    .await
    .expect("app");
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let client = legacy_client(&app, &token).await;
    let (id, trip) = trip_with_days(&client, &fixtures).await;
    let version = trip["version"].as_u64().expect("version");
    let day1 = trip["stages"][0]["stageId"]
        .as_str()
        .expect("day")
        .to_owned();
    // A day the rider named: re-cutting would lose it, so a re-cut asks.
    let named = ok(&call(
        &client,
        "edit_stages",
        json!({"tripId": id, "action": "update", "version": version, "stageId": day1, "label": "Start"}),
    )
    .await);
    let version = named["version"].as_u64().expect("version");

    // 65.0 and 65 are one argument: the token minted for one redeems the other; a retry
    // with other arguments is refused and leaves the token for its own.
    let first = ok(&call(
        &client,
        "update_trip_settings",
        json!({"id": id, "version": version, "settings": {"maxDistancePerDay": 65.0}}),
    )
    .await);
    let token_65 = first["confirmationToken"]
        .as_str()
        .expect("token")
        .to_owned();
    let other = refused(
        &call(
            &client,
            "update_trip_settings",
            json!({"id": id, "version": version, "settings": {"maxDistancePerDay": 70}, "confirmationToken": token_65}),
        )
        .await,
    );
    assert!(other.contains("not valid for this call"), "{other}");
    let done = ok(&call(
        &client,
        "update_trip_settings",
        json!({"id": id, "version": version, "settings": {"maxDistancePerDay": 65}, "confirmationToken": token_65}),
    )
    .await);
    assert_eq!(done["version"], json!(version + 1), "{done}");
    let trip = poll_until_days(&client, &id).await;
    let version = trip["version"].as_u64().expect("version");
    let day1_now = trip["stages"][0]["stageId"]
        .as_str()
        .expect("day")
        .to_owned();
    assert_ne!(day1_now, day1, "re-cut: new day ids");

    // A split nobody placed is refused, naming both fields.
    let unplaced = refused(
        &call(
            &client,
            "edit_stages",
            json!({"tripId": id, "action": "add", "version": version, "stageId": day1_now, "label": "x"}),
        )
        .await,
    );
    assert!(
        unplaced.contains("distance") && unplaced.contains("endPoint"),
        "{unplaced}"
    );

    // 50 refused writes (a stale version each), then the right one goes through.
    for _ in 0..50 {
        let _ = call(
            &client,
            "edit_stages",
            json!({"tripId": id, "action": "update", "version": version + 100, "stageId": day1_now, "label": "again"}),
        )
        .await;
    }
    eprintln!("budget: 50 refused edit_stages calls, then a valid one");
    let right = call(
        &client,
        "edit_stages",
        json!({"tripId": id, "action": "update", "version": version, "stageId": day1_now, "label": "Day one"}),
    )
    .await;
    assert_eq!(
        right.is_error,
        Some(false),
        "locked out by its own mistakes: {right:?}"
    );

    // Without candidates, the hint names the MCP way; a place of one's own is entered there.
    let version = version + 1;
    let no_candidates = refused(
        &call(
            &client,
            "choose_accommodation",
            json!({"tripId": id, "stageId": day1_now, "version": version, "lat": 45.1, "lon": 5.0}),
        )
        .await,
    );
    assert!(
        no_candidates.contains("choose_accommodation with name")
            && no_candidates.contains("ETAPPE_ONLINE"),
        "{no_candidates}"
    );
    assert!(
        !no_candidates.contains("POST /trips/{id}/accommodations/scan"),
        "{no_candidates}"
    );
    let own = ok(&call(
        &client,
        "choose_accommodation",
        json!({"tripId": id, "stageId": day1_now, "version": version, "name": "Camping am See", "lat": 45.2, "lon": 5.0}),
    )
    .await);
    assert_eq!(own["version"], json!(version + 1), "{own}");
    let day = ok(&call(
        &client,
        "get_stage",
        json!({"tripId": id, "stageId": day1_now}),
    )
    .await);
    assert_eq!(
        day["selectedAccommodation"]["name"], "Camping am See",
        "{day}"
    );

    // A resource that is not there is named in the error's data.
    let missing = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "etappe://nothing",
        ))
        .await
        .expect_err("not found");
    let text = format!("{missing:?}");
    assert!(
        text.contains("etappe://nothing") && text.contains("uri"),
        "{text}"
    );
}

/// Issue 32: an agent undoes its last change within the thirteen tools — get_trip lists the
/// versions, update_trip_settings restoreVersion brings one back — and can undo the undo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_lists_versions_and_restores_the_one_before_its_change() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let client = legacy_client(&app, &token).await;
    let (id, trip) = trip_with_days(&client, &fixtures).await;
    let before = trip["version"].as_u64().expect("version");
    let days = trip["stages"].as_array().expect("days").len();
    assert!(days >= 2, "{trip}");
    let day2 = trip["stages"][1]["stageId"].clone();
    let merged = ok(&call(
        &client,
        "edit_stages",
        json!({"tripId": id, "action": "delete", "version": before, "stageId": day2}),
    )
    .await);
    let after = merged["version"].as_u64().expect("version");

    let listed = ok(&call(&client, "get_trip", json!({"id": id, "history": 3})).await);
    let versions = listed["versions"].as_array().expect("versions");
    assert!(versions.len() <= 3, "{listed}");
    assert_eq!(versions[0]["version"], after, "newest first: {listed}");
    assert!(
        versions[0]["change"]
            .as_str()
            .is_some_and(|c| c.contains("Days edited (delete)")),
        "{listed}"
    );
    assert_eq!(versions[1]["version"], before);
    assert_eq!(versions[1]["days"], days);
    assert!(
        listed["stages"].as_array().is_some(),
        "the digest is still there"
    );

    let restored = ok(&call(
        &client,
        "update_trip_settings",
        json!({"id": id, "version": after, "restoreVersion": before}),
    )
    .await);
    assert_eq!(restored["version"], after + 1, "{restored}");
    assert!(
        restored["nextAction"]
            .as_str()
            .is_some_and(|n| n.contains(&format!("restoreVersion {after}"))),
        "says how to undo the undo: {restored}"
    );
    let back = ok(&call(&client, "get_trip", json!({"id": id})).await);
    assert_eq!(
        back["stages"].as_array().expect("days").len(),
        days,
        "{back}"
    );
    // Alone: a restore with settings beside it is refused, naming why.
    let mixed = refused(
        &call(
            &client,
            "update_trip_settings",
            json!({"id": id, "version": after + 1, "restoreVersion": before, "settings": {"title": "x"}}),
        )
        .await,
    );
    assert!(mixed.contains("restoreVersion goes alone"), "{mixed}");
}

/// Issue 32: an agent gets one day's GPX and FIT: get_stage names them, resources/read
/// answers the very files REST serves for that day; another account's day is not found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_reads_one_days_gpx_and_fit_as_resources() {
    use base64::Engine as _;
    let app = TestApp::spawn(Backend::Sqlite).await.expect("app");
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let client = legacy_client(&app, &token).await;
    let (id, trip) = trip_with_days(&client, &fixtures).await;
    let stage = trip["stages"][1]["stageId"]
        .as_str()
        .expect("day 2")
        .to_owned();
    let day = ok(&call(
        &client,
        "get_stage",
        json!({"tripId": id, "stageId": stage}),
    )
    .await);
    let gpx_uri = day["files"]["gpx"]
        .as_str()
        .expect("a GPX address")
        .to_owned();
    let fit_uri = day["files"]["fit"]
        .as_str()
        .expect("a FIT address")
        .to_owned();

    let templates = app
        .mcp_raw(&token, "resources/templates/list", json!({}))
        .await;
    assert_eq!(
        templates["resourceTemplates"].as_array().map(Vec::len),
        Some(2),
        "{templates}"
    );
    let rest = |ext: &'static str| {
        let (app, token, id, stage) = (&app, &token, &id, &stage);
        async move {
            app.call(
                reqwest::Method::GET,
                &format!("/trips/{{id}}/stages/{{stageId}}/export.{ext}"),
                &format!("/trips/{id}/stages/{stage}/export.{ext}"),
                Some(token),
                &[],
                None,
            )
            .await
            .raw
        }
    };
    let gpx = app
        .mcp_raw(&token, "resources/read", json!({"uri": gpx_uri}))
        .await;
    let text = gpx["contents"][0]["text"].as_str().expect("GPX text");
    assert_eq!(gpx["contents"][0]["mimeType"], "application/gpx+xml");
    assert_eq!(
        text.as_bytes(),
        rest("gpx").await.as_slice(),
        "REST's day 2 file"
    );
    assert_eq!(text.matches("<trk>").count(), 1, "one day, one track");
    let fit = app
        .mcp_raw(&token, "resources/read", json!({"uri": fit_uri}))
        .await;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(fit["contents"][0]["blob"].as_str().expect("FIT blob"))
        .expect("base64");
    assert_eq!(bytes, rest("fit").await, "REST's day 2 FIT");
    assert_eq!(&bytes[8..12], b".FIT");

    // Another account's day: not found, as if it did not exist.
    let stranger = app.user().await;
    let answer = app
        .mcp_answer(&stranger, "resources/read", json!({"uri": gpx_uri}))
        .await;
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("No such trip or day")),
        "{answer}"
    );
}

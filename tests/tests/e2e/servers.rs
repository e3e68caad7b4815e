//! The production shape end to end: the API on PostgreSQL, RabbitMQ and Redis with the
//! workers as separate `etappe-worker` processes, and the faults it must survive with nothing
//! lost, and two API replicas sharing the agent surface's confirmations and budgets through
//! Redis. Runs when DATABASE_URL, AMQP_URL and REDIS_URL are set (CI sets them); the tests of
//! this file run one at a time because some stop a shared server, and those hold the servers
//! alone against every other test of the binary (`etappe_tests::servers_alone`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use etappe_domain::ids::TripId;
use etappe_domain::trip::settings::SettingsPatch;
use etappe_domain::trip::source::SourceUrl;
use etappe_domain::trip::{TripCommand, decide};
use etappe_events::{EventMetadata, ExpectedVersion};
use etappe_tests::{Backend, Servers, TestApp, UNFETCHED_GPX, fixtures};
use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::Mutex;

static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());

async fn app_on(servers: &Servers) -> TestApp {
    TestApp::spawn_with(Backend::Postgres, |c| servers.configure(c))
        .await
        .expect("app on the servers")
}

async fn wait_for_route(app: &TestApp, token: &str, id: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let detail = app.detail(token, id).await;
        let route = &detail.body["computationStatus"]["route"];
        if detail.body["partial"] == json!(false) || route == &json!("failed") {
            return detail.body;
        }
        assert!(
            Instant::now() < deadline,
            "no days within {within:?}: {}",
            detail.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn create(app: &TestApp, token: &str, url: &str) -> String {
    let created = app
        .create_trip(token, &json!({"sourceUrl": url, "maxDistancePerDay": 140}))
        .await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.body);
    assert_eq!(created.body["partial"], json!(true));
    created.body["id"].as_str().expect("id").to_owned()
}

async fn route_results(app: &TestApp, id: &str) -> usize {
    let trip: TripId = id.parse().expect("trip id");
    let events = app
        .state
        .work()
        .store
        .read_stream(&trip.stream_id())
        .await
        .expect("stream");
    events
        .iter()
        .filter(|e| e.event_type == "RouteComputed")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_trip_is_computed_by_a_separate_worker_with_progress_over_sse() {
    let Some(servers) = Servers::from_env() else {
        return;
    };
    let _serial = ONE_AT_A_TIME.lock().await;
    let _servers = etappe_tests::servers_shared().await;
    let app = app_on(&servers).await;
    let fixtures = fixtures::start().await;
    let _worker = servers.spawn_worker();
    let token = app.user().await;
    let id = create(&app, &token, &fixtures.url("/route.gpx")).await;

    let events = app
        .client
        .get(format!("{}/trips/{id}/events", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("sse");
    let mut stream = events.bytes_stream();
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !(seen.contains("\"state\":\"succeeded\"") && seen.contains("\"partial\":false")) {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let chunk = tokio::time::timeout(remaining, stream.next())
            .await
            .expect("SSE went quiet")
            .expect("SSE ended");
        seen.push_str(&String::from_utf8_lossy(&chunk.expect("chunk")));
    }
    assert!(
        seen.contains("event: progress") && seen.contains("\"step\""),
        "progress came through Redis: {seen}"
    );

    let detail = wait_for_route(&app, &token, &id, Duration::from_secs(30)).await;
    assert_eq!(detail["stages"].as_array().map(Vec::len), Some(3));
    assert_eq!(route_results(&app, &id).await, 1);
    let ready = app
        .client
        .get(format!("{}/readyz", app.base))
        .send()
        .await
        .expect("readyz");
    assert_eq!(ready.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_killed_mid_job_leaves_it_to_another_which_completes_it_once() {
    let Some(servers) = Servers::from_env() else {
        return;
    };
    let _serial = ONE_AT_A_TIME.lock().await;
    let _servers = etappe_tests::servers_shared().await;
    let app = app_on(&servers).await;
    let fixtures = fixtures::start().await;
    let mut first = servers.spawn_worker();
    let token = app.user().await;
    // The slow fixture holds the job for 3 s: time to kill the worker holding it.
    let id = create(&app, &token, &fixtures.url("/slow.gpx")).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let detail = app.detail(&token, &id).await;
        if detail.body["computationStatus"]["route"] == json!("running") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the job never started: {}",
            detail.body
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    first.kill();
    let _second = servers.spawn_worker();
    let detail = wait_for_route(&app, &token, &id, Duration::from_secs(60)).await;
    assert_eq!(
        detail["partial"],
        json!(false),
        "the redelivered job completed: {detail}"
    );
    assert_eq!(
        route_results(&app, &id).await,
        1,
        "and its result was written once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_event_appended_but_never_published_is_published_after_a_restart() {
    let Some(servers) = Servers::from_env() else {
        return;
    };
    let _serial = ONE_AT_A_TIME.lock().await;
    let _servers = etappe_tests::servers_shared().await;
    let fixtures = fixtures::start().await;
    // An API that "crashed" between its append and the publish: the event is in the log, no
    // dispatcher ever saw it.
    let first = app_on(&servers).await;
    let token = first.user().await;
    let owner = first
        .state
        .identity()
        .authenticate(&token)
        .await
        .expect("auth")
        .expect("principal")
        .user_id;
    let store = first.state.work().store.clone();
    drop(first);
    let trip_id = TripId::new();
    let events = decide(
        None,
        TripCommand::Create {
            trip_id,
            owner_id: owner,
            source: SourceUrl::parse(&fixtures.url("/route.gpx"), &["127.0.0.1".into()])
                .expect("url"),
            settings: SettingsPatch::default(),
        },
    )
    .expect("create");
    let metadata = EventMetadata::default();
    store
        .append(
            &trip_id.stream_id(),
            ExpectedVersion::NoStream,
            events.iter().map(|e| e.to_new_event(&metadata)).collect(),
        )
        .await
        .expect("append");

    // The restart: a new API (its dispatcher resumes from the checkpoint) and a worker.
    let app = app_on(&servers).await;
    let _worker = servers.spawn_worker();
    let detail = wait_for_route(&app, &token, &trip_id.to_string(), Duration::from_secs(60)).await;
    assert_eq!(detail["partial"], json!(false), "{detail}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_job_whose_retries_run_out_on_rabbitmq_fails_its_trip_then_is_dead_lettered() {
    let Some(servers) = Servers::from_env() else {
        return;
    };
    let _serial = ONE_AT_A_TIME.lock().await;
    let _servers = etappe_tests::servers_shared().await;
    let app = app_on(&servers).await;
    // A source that answers 503 to every try, until it is back.
    let back = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let serves = Arc::clone(&back);
    let down = axum::Router::new().route(
        "/down.gpx",
        axum::routing::get(move || {
            let up = serves.load(std::sync::atomic::Ordering::SeqCst);
            async move {
                if up {
                    (axum::http::StatusCode::OK, fixtures::route_gpx(100.0, 50.0))
                } else {
                    (axum::http::StatusCode::SERVICE_UNAVAILABLE, String::new())
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, down).await });
    let _worker = servers.spawn_worker();
    let token = app.user().await;
    let id = create(&app, &token, &format!("http://{addr}/down.gpx")).await;
    let detail = wait_for_route(&app, &token, &id, Duration::from_secs(60)).await;
    assert_eq!(detail["status"], json!("failed"), "{detail}");
    assert_eq!(detail["partial"], json!(false), "{detail}");
    let reason = detail["unavailable"]["route"].as_str().unwrap_or_default();
    assert!(reason.contains("after 4 attempts"), "{reason}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while app.state.work().queue.dead_lettered().await.expect("dlq") < 1 {
        assert!(
            Instant::now() < deadline,
            "the given-up job is not in the dead-letter queue"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The source is back: the operator replays the dead letters, and the trip gets its days.
    back.store(true, std::sync::atomic::Ordering::SeqCst);
    let moved = app
        .state
        .work()
        .queue
        .replay_dead_letters(10)
        .await
        .expect("replay");
    assert_eq!(moved, 1, "the given-up job went back to the jobs queue");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let detail = app.detail(&token, &id).await.body;
        if detail["status"] == json!("ready") && detail["partial"] == json!(false) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the replayed job never gave the trip its days: {detail}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_poison_message_goes_to_the_dead_letter_queue_without_blocking_others() {
    let Some(servers) = Servers::from_env() else {
        return;
    };
    let _serial = ONE_AT_A_TIME.lock().await;
    let _servers = etappe_tests::servers_shared().await;
    let app = app_on(&servers).await;
    let fixtures = fixtures::start().await;
    // A message no worker can read, straight onto the queue.
    let connection =
        lapin::Connection::connect(&servers.amqp_url, lapin::ConnectionProperties::default())
            .await
            .expect("amqp");
    let channel = connection.create_channel().await.expect("channel");
    channel
        .basic_publish(
            format!("{}.jobs", servers.prefix).as_str().into(),
            "job".into(),
            lapin::options::BasicPublishOptions::default(),
            b"{not a job",
            lapin::BasicProperties::default().with_delivery_mode(2),
        )
        .await
        .expect("publish")
        .await
        .expect("confirm");
    let _worker = servers.spawn_worker();
    let token = app.user().await;
    let id = create(&app, &token, &fixtures.url("/route.gpx")).await;
    let detail = wait_for_route(&app, &token, &id, Duration::from_secs(60)).await;
    assert_eq!(
        detail["partial"],
        json!(false),
        "the good job went through: {detail}"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let dead = app
            .state
            .work()
            .queue
            .dead_lettered()
            .await
            .expect("dlq depth");
        if dead == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the poison message is not in the dead-letter queue ({dead})"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_redis_stopped_work_completes_and_progress_resumes_when_it_returns() {
    let Some(servers) = Servers::from_env() else {
        return;
    };
    let _serial = ONE_AT_A_TIME.lock().await;
    // It stops a server every other server test uses.
    let _servers = etappe_tests::servers_alone().await;
    let app = app_on(&servers).await;
    let fixtures = fixtures::start().await;
    let _worker = servers.spawn_worker();
    let token = app.user().await;

    let stopped = std::process::Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "shutdown", "nosave"])
        .status();
    assert!(stopped.is_ok(), "redis-cli is needed for this test");
    let id = create(&app, &token, &fixtures.url("/route.gpx")).await;
    let detail = wait_for_route(&app, &token, &id, Duration::from_secs(60)).await;
    let restarted = std::process::Command::new("redis-server")
        .args([
            "--daemonize",
            "yes",
            "--bind",
            "127.0.0.1",
            "-::1",
            "--port",
            "6379",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            "/var/lib/redis",
            "--logfile",
            "/var/log/redis/ci.log",
        ])
        .status();
    assert!(
        restarted.map(|s| s.success()).unwrap_or(false),
        "Redis restarted"
    );
    assert_eq!(
        detail["partial"],
        json!(false),
        "the work completed without Redis: {detail}"
    );

    // Progress resumes: a new trip's progress is readable from Redis again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let again = create(&app, &token, &fixtures.url("/route.gpx")).await;
    wait_for_route(&app, &token, &again, Duration::from_secs(60)).await;
    let trip: TripId = again.parse().expect("id");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let progress = app.state.work().progress.current(trip).await;
        if progress
            .as_ref()
            .is_ok_and(|p| p.iter().any(|p| p.step == "done"))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "progress did not resume: {progress:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_rabbitmq_stopped_commands_succeed_and_jobs_flow_after_it_returns() {
    let Some(servers) = Servers::from_env() else {
        return;
    };
    let _serial = ONE_AT_A_TIME.lock().await;
    // It stops a server every other server test uses.
    let _servers = etappe_tests::servers_alone().await;
    let app = app_on(&servers).await;
    let fixtures = fixtures::start().await;
    let _worker = servers.spawn_worker();
    let token = app.user().await;

    let stopped = std::process::Command::new("rabbitmqctl")
        .args(["-q", "stop_app"])
        .status();
    assert!(
        stopped.map(|s| s.success()).unwrap_or(false),
        "rabbitmqctl stop_app"
    );
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(create(&app, &token, &fixtures.url("/route.gpx")).await);
    }
    let started = std::process::Command::new("rabbitmqctl")
        .args(["-q", "start_app"])
        .status();
    assert!(
        started.map(|s| s.success()).unwrap_or(false),
        "rabbitmqctl start_app"
    );
    for id in &ids {
        let detail = wait_for_route(&app, &token, id, Duration::from_secs(120)).await;
        assert_eq!(
            detail["partial"],
            json!(false),
            "a job created while the broker was down flowed after: {detail}"
        );
        assert_eq!(route_results(&app, id).await, 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_asked_to_stop_finishes_its_job_then_exits_cleanly() {
    let Some(servers) = Servers::from_env() else {
        return;
    };
    let _serial = ONE_AT_A_TIME.lock().await;
    let _servers = etappe_tests::servers_shared().await;
    let app = app_on(&servers).await;
    let fixtures = fixtures::start().await;
    let mut worker = servers.spawn_worker();
    let token = app.user().await;
    let id = create(&app, &token, &fixtures.url("/slow.gpx")).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while app.detail(&token, &id).await.body["computationStatus"]["route"] != json!("running") {
        assert!(Instant::now() < deadline, "the job never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let clean = tokio::task::spawn_blocking(move || worker.terminate(Duration::from_secs(30)))
        .await
        .expect("join");
    assert!(
        clean,
        "SIGTERM: the worker exits 0 after finishing what it holds"
    );
    let detail = app.detail(&token, &id).await.body;
    assert_eq!(
        detail["partial"],
        json!(false),
        "the job in flight was finished before exiting: {detail}"
    );
    assert_eq!(route_results(&app, &id).await, 1);
}

/// One `tools/call` to `/mcp` of `app`, as raw JSON-RPC (stateless: no session).
async fn mcp_call(app: &TestApp, token: &str, tool: &str, arguments: Value) -> Value {
    app.mcp_raw(
        token,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_api_replicas_share_the_agent_surface_confirmations_and_budgets() {
    let Some(servers) = Servers::from_env() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let _servers = etappe_tests::servers_shared().await;
    let (a, b) = (app_on(&servers).await, app_on(&servers).await);
    let token = a.user().await;
    let created = a
        .create_trip(&token, &json!({"sourceUrl": UNFETCHED_GPX}))
        .await;
    let id = created.body["id"].as_str().expect("id").to_owned();

    // A confirmation minted by one replica is redeemed on the other, once (an open link is
    // something to lose: deleting asks).
    let shared = a
        .call(
            reqwest::Method::POST,
            "/trips/{id}/share",
            &format!("/trips/{id}/share"),
            Some(&token),
            &[],
            None,
        )
        .await;
    assert!(shared.status.is_success(), "{}", shared.body);
    let challenge = mcp_call(&a, &token, "delete_trip", json!({"id": id})).await;
    let confirmation = challenge["structuredContent"]["confirmationToken"]
        .as_str()
        .expect("a confirmation token")
        .to_owned();
    let confirmed = json!({"id": id, "confirmationToken": confirmation});
    let deleted = mcp_call(&b, &token, "delete_trip", confirmed.clone()).await;
    assert_eq!(deleted["isError"], json!(false), "{deleted}");
    assert_eq!(a.detail(&token, &id).await.status, StatusCode::NOT_FOUND);
    let again = mcp_call(&a, &token, "delete_trip", confirmed).await;
    assert_eq!(
        again["isError"],
        json!(true),
        "single use across replicas: {again}"
    );

    // The budget of changes (20 a minute) is one for the credential, whichever replica and
    // transport it reaches. Refused calls (the spent confirmation above) are not changes; the
    // creations and the deletion were. Alternating replicas, a shared budget refuses within
    // 20 calls (budgets per replica would admit some 36 before either refused), and once
    // spent it is spent on both.
    let other = a
        .create_trip(&token, &json!({"sourceUrl": UNFETCHED_GPX}))
        .await;
    let other = other.body["id"].as_str().expect("id").to_owned();
    let mut refused_at = None;
    for i in 0..20 {
        let replica = if i % 2 == 0 { &a } else { &b };
        let answer = mcp_call(replica, &token, "share_trip", json!({"tripId": other})).await;
        let text = answer.to_string();
        if text.contains("rate_limited") {
            assert!(text.contains("rate_limited: 20 changes a minute"), "{text}");
            refused_at = Some(i);
            break;
        }
        assert_eq!(answer["isError"], json!(false), "change {i}: {text}");
    }
    let refused_at = refused_at.expect("the shared budget refuses within 20 changes");
    assert!(
        refused_at >= 14,
        "only the changes made count: refused at {refused_at}"
    );
    let replica = if refused_at % 2 == 0 { &b } else { &a };
    let refused = mcp_call(replica, &token, "share_trip", json!({"tripId": other})).await;
    assert!(
        refused
            .to_string()
            .contains("rate_limited: 20 changes a minute"),
        "spent on the other replica too: {refused}"
    );
}

/// Issue 33: workers killed again and again (`kill -9`, three times, each while busy) leave no
/// acknowledged trip unfinished: every trip ends with its days once, and every category of
/// its analysis ended — by a redelivery, or by the sweeper (ten seconds here).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workers_killed_again_and_again_leave_no_trip_unfinished() {
    let Some(servers) = Servers::from_env() else {
        return;
    };
    let _serial = ONE_AT_A_TIME.lock().await;
    let _servers = etappe_tests::servers_shared().await;
    let app = TestApp::spawn_with(Backend::Postgres, |c| {
        servers.configure(c);
        c.work.sweep_after_secs = 10;
    })
    .await
    .expect("app on the servers");
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let mut ids = Vec::new();
    for _ in 0..8 {
        ids.push(create(&app, &token, &fixtures.url("/slow.gpx")).await);
    }
    let mut workers = [servers.spawn_worker(), servers.spawn_worker()];
    for round in 0..3 {
        // Each holds a job for 3 s (the slow source): killed in the middle of one.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        workers[round % 2].kill();
        workers[round % 2] = servers.spawn_worker();
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    for id in &ids {
        loop {
            let detail = app.detail(&token, id).await.body;
            let ended = detail["computationStatus"]
                .as_object()
                .is_some_and(|all| all.values().all(|s| s == "done" || s == "failed"));
            if detail["status"] == json!("ready") && detail["partial"] == json!(false) && ended {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "trip {id} left unfinished: {detail}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(route_results(&app, id).await, 1, "its days written once");
    }
}

/// The value of `etappe_dispatcher_leader` on the replica at `base` (`None` when it does not
/// answer, as a paused one does not).
async fn leads(client: &reqwest::Client, base: &str) -> Option<bool> {
    let text = client
        .get(format!("{base}/metrics"))
        .timeout(Duration::from_secs(2))
        .send()
        .await
        .ok()?
        .text()
        .await
        .ok()?;
    text.lines()
        .find(|l| l.starts_with("etappe_dispatcher_leader "))
        .map(|l| l.ends_with(" 1"))
}

/// Issue 33: a hung leader does not stop dispatch. An API process leads; it is paused
/// (SIGSTOP, as a stuck VM or a long GC pause would hold it); a trip created on the other
/// replica is dispatched once the paused leader's lease has run out, and computed once; the
/// leader, resumed, finds its lease taken and stops dispatching.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_paused_leader_hands_dispatch_to_another_replica_within_the_lease() {
    let Some(servers) = Servers::from_env() else {
        return;
    };
    let _serial = ONE_AT_A_TIME.lock().await;
    let _servers = etappe_tests::servers_shared().await;
    let binary = tokio::task::spawn_blocking(etappe_tests::api_binary)
        .await
        .expect("build");
    let dir = std::env::temp_dir().join(format!("etappe-leader-{}", uuid::Uuid::now_v7()));
    std::fs::create_dir_all(&dir).expect("a data dir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let leader = std::process::Command::new(binary)
        .env("DATABASE_URL", &servers.database_url)
        .env("AMQP_URL", &servers.amqp_url)
        .env("REDIS_URL", &servers.redis_url)
        .env("ETAPPE_QUEUE_PREFIX", &servers.prefix)
        .env("ETAPPE_DATA_DIR", &dir)
        .env("ETAPPE_ADDR", format!("127.0.0.1:{port}"))
        .env("ETAPPE_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start etappe");
    // Killed however the test ends (a stopped process takes SIGKILL too).
    let leader = Killed(leader);
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a client");
    let leader_base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(90);
    while leads(&client, &leader_base).await != Some(true) {
        assert!(Instant::now() < deadline, "the first replica never led");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The second replica, in this process, waits for the lease the first holds.
    let app = app_on(&servers).await;
    let _worker = servers.spawn_worker();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(leads(&client, &app.base).await, Some(false), "one leader");

    let pause = |signal: &str| {
        std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(leader.0.id().to_string())
            .status()
            .expect("kill")
    };
    assert!(pause("STOP").success());
    let paused = Instant::now();
    let fixtures = fixtures::start().await;
    let token = app.user().await;
    let id = create(&app, &token, &fixtures.url("/route.gpx")).await;
    let within = etappe_events::work::LEASE_TTL + Duration::from_secs(20);
    let detail = wait_for_route(&app, &token, &id, within).await;
    let handed_over = paused.elapsed();
    assert_eq!(detail["partial"], json!(false), "{detail}");
    assert_eq!(
        leads(&client, &app.base).await,
        Some(true),
        "the other leads"
    );
    assert!(pause("CONT").success());
    // Resumed, the old leader renews, finds the lease taken, and stops leading.
    let deadline = Instant::now() + Duration::from_secs(30);
    while leads(&client, &leader_base).await != Some(false) {
        assert!(
            Instant::now() < deadline,
            "the resumed replica still claims to lead"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(leads(&client, &app.base).await, Some(true), "one leader");
    assert_eq!(route_results(&app, &id).await, 1, "its days written once");
    eprintln!("dispatch handed over {handed_over:?} after the leader was paused");
    drop(leader);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A child process killed when dropped.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

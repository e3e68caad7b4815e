//! A real Valhalla routing engine (3.9.1, `tests/valhalla/install.sh`) for the tests: routing
//! tiles built from an OpenStreetMap extract, once per machine, and a `valhalla_service` on a
//! free loopback port serving them, killed when dropped.
//!
//! Tiles are cached under `<cargo target dir>/valhalla-tiles/<key>`, the key being a hash of
//! the engine's version, the build settings and the extract's bytes, so each tileset is built
//! once and a changed extract or engine gets its own. A build runs in a temporary directory
//! beside the cache and is renamed into place when complete, so concurrent test processes
//! never read a half-built tileset (the loser of a race discards its copy).
//!
//! Each service gets its own configuration in its own temporary directory: a 127.0.0.1 port
//! (Valhalla's default listens on every interface) and its own ipc sockets (the defaults are
//! fixed paths in /tmp that two instances would share). The wheel's binaries find their
//! libraries through their RPATH (`$ORIGIN/../../pyvalhalla.libs`); nothing else is set.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The engine version the installer puts in place.
pub const VERSION: &str = "3.9.1";
/// How to install it, from the workspace root.
pub const INSTALL: &str = "tests/valhalla/install.sh";
/// How long a started service may take to answer `/status`.
const READY_WITHIN: Duration = Duration::from_secs(20);
/// Part of the tile cache key: bump it when the build settings below change, so no test
/// reads tiles built under the old ones.
const TILE_SETTINGS: &str =
    "etappe tiles v1: no admin, no timezone, no elevation, no traffic, no tar extract";
/// Attempts at starting a service: another process may take the port between our probe
/// and the service's bind.
const START_ATTEMPTS: usize = 3;

/// The committed real extract: Liechtenstein on 3 August 2013 (© OpenStreetMap contributors,
/// ODbL 1.0; `tests/fixtures/osm/README.md`).
pub fn liechtenstein() -> PathBuf {
    fixture("liechtenstein-2013-08-03.osm.pbf")
}

/// The committed synthetic extract: a 60 km route north from 45.0 N 5.0 E
/// (`tests/fixtures/osm/make_fixtures.py`).
pub fn synthetic() -> PathBuf {
    fixture("route.osm.pbf")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/osm")
        .join(name)
}

/// The directory holding `valhalla_build_tiles` and `valhalla_service`: `ETAPPE_VALHALLA_BIN`,
/// else where the installer puts them (`${ETAPPE_VALHALLA_HOME:-/var/tmp/etappe-valhalla}`).
/// `None` (skip, saying how to install) when they are not there; a failure under
/// `ETAPPE_REQUIRE_SERVICES=1`, and when `ETAPPE_VALHALLA_BIN` names a directory without them
/// (a setting that is wrong is not a reason to skip).
pub fn valhalla_bin() -> Option<PathBuf> {
    let named = std::env::var_os("ETAPPE_VALHALLA_BIN").filter(|v| !v.is_empty());
    let dir = named.clone().map_or_else(
        || {
            let home = std::env::var_os("ETAPPE_VALHALLA_HOME")
                .filter(|v| !v.is_empty())
                .map_or_else(|| PathBuf::from("/var/tmp/etappe-valhalla"), PathBuf::from);
            home.join(VERSION).join("valhalla/bin")
        },
        PathBuf::from,
    );
    let complete = ["valhalla_service", "valhalla_build_tiles"]
        .iter()
        .all(|b| dir.join(b).is_file());
    if complete {
        return Some(dir);
    }
    assert!(
        named.is_none(),
        "ETAPPE_VALHALLA_BIN={} has no valhalla_service and valhalla_build_tiles",
        dir.display()
    );
    assert!(
        std::env::var("ETAPPE_REQUIRE_SERVICES").as_deref() != Ok("1"),
        "ETAPPE_REQUIRE_SERVICES=1 but Valhalla is not installed at {}: run {INSTALL} \
         (or set ETAPPE_VALHALLA_BIN)",
        dir.display()
    );
    eprintln!(
        "skipped: Valhalla is not installed at {}; install it from the workspace root with \
         {INSTALL} (or set ETAPPE_VALHALLA_BIN to a directory with valhalla_service)",
        dir.display()
    );
    None
}

/// What a test changes in the service's configuration. None of it is baked into tiles, so
/// every combination shares one tileset per extract.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValhallaOptions {
    /// `service_limits.bicycle.max_distance` (metres; Valhalla's default is 500 km): a route
    /// whose locations lie further apart is refused with error 154.
    pub bicycle_max_distance_m: Option<f64>,
}

/// The tileset a service reads, and what building it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct TileBuild {
    /// The tile directory (`…/valhalla-tiles/<key>/tiles`).
    pub dir: PathBuf,
    /// Bytes of all tile files.
    pub bytes: u64,
    /// Wall-clock seconds `valhalla_build_tiles` took, when the tileset was built (a reused
    /// tileset reports its original build).
    pub seconds: f64,
    /// Whether an earlier build was reused instead of building now.
    pub reused: bool,
}

/// A running `valhalla_service`, killed when dropped.
#[derive(Debug)]
pub struct Valhalla {
    /// Base URL, `http://127.0.0.1:<port>`.
    pub url: String,
    pub tiles: TileBuild,
    log: PathBuf,
    child: Child,
    // Removed after the child is killed (fields drop after `Drop::drop`): the configuration,
    // the log and the ipc sockets.
    _dir: tempfile::TempDir,
}

impl Valhalla {
    /// The last lines of the service's log, for a failing test's message.
    pub fn log_tail(&self) -> String {
        tail(&self.log, 30)
    }
}

impl Drop for Valhalla {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Builds (or reuses) the tiles of `extract` and starts a service on them; blocks until it
/// answers `/status` (a few seconds on a first build; call it from `spawn_blocking` in async
/// tests). `None` when Valhalla is not installed (see [`valhalla_bin`]); panics, with the
/// log's tail, when the build or the start fails.
pub fn start(extract: &Path, options: &ValhallaOptions) -> Option<Valhalla> {
    let bin = valhalla_bin()?;
    let template = config_template(&bin);
    let tiles = tiles_for(&bin, &template, extract);
    let mut last_log = String::new();
    for _ in 0..START_ATTEMPTS {
        match spawn_service(&bin, &template, &tiles, options) {
            Ok(valhalla) => return Some(valhalla),
            Err(log) => last_log = log,
        }
    }
    panic!(
        "valhalla_service did not start in {START_ATTEMPTS} attempts; its log ends:\n{last_log}"
    );
}

/// Starts one service on a fresh port; `Err(log tail)` when it exits before answering (the
/// port may have been taken meanwhile: the caller tries again). Panics when it runs but never
/// answers.
fn spawn_service(
    bin: &Path,
    template: &Value,
    tiles: &TileBuild,
    options: &ValhallaOptions,
) -> Result<Valhalla, String> {
    let dir = tempfile::Builder::new()
        .prefix("etappe-valhalla-")
        .tempdir()
        .expect("a temporary directory for the service");
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port();
    let socket = |name: &str| {
        let path = dir.path().join(name);
        // A Unix socket's path has room for 107 bytes; a long TMPDIR would fail obscurely.
        assert!(
            path.as_os_str().len() < 100,
            "{} is too long for an ipc socket: set TMPDIR to a shorter directory",
            path.display()
        );
        format!("ipc://{}", path.display())
    };
    let mut config = template.clone();
    set(&mut config, "/mjolnir/tile_dir", json!(tiles.dir));
    set(
        &mut config,
        "/httpd/service/listen",
        json!(format!("tcp://127.0.0.1:{port}")),
    );
    set(
        &mut config,
        "/httpd/service/loopback",
        json!(socket("loopback")),
    );
    set(
        &mut config,
        "/httpd/service/interrupt",
        json!(socket("interrupt")),
    );
    if let Some(metres) = options.bicycle_max_distance_m {
        set(
            &mut config,
            "/service_limits/bicycle/max_distance",
            json!(metres),
        );
    }
    let config_path = dir.path().join("config.json");
    write_json(&config_path, &config);
    let log = dir.path().join("service.log");
    let child = spawn_logged(
        Command::new(bin.join("valhalla_service"))
            .arg(&config_path)
            // One worker thread per stage: plenty for a test, and light on a 2-core machine.
            .arg("1")
            .current_dir(dir.path()),
        &log,
    );
    let mut valhalla = Valhalla {
        url: format!("http://127.0.0.1:{port}"),
        tiles: tiles.clone(),
        log,
        child,
        _dir: dir,
    };
    let deadline = Instant::now() + READY_WITHIN;
    loop {
        if let Ok(Some(status)) = valhalla.child.try_wait() {
            return Err(format!("exited with {status}:\n{}", valhalla.log_tail()));
        }
        if status_answers(port) {
            return Ok(valhalla);
        }
        assert!(
            Instant::now() < deadline,
            "valhalla_service on port {port} did not answer /status within {}s; its log ends:\n{}",
            READY_WITHIN.as_secs(),
            valhalla.log_tail()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether `GET /status` on the port answers 200. Plain HTTP over a socket: the tests' reqwest
/// is async only, and this runs in blocking code.
fn status_answers(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect((Ipv4Addr::LOCALHOST, port)) else {
        return false;
    };
    let timeout = Some(Duration::from_secs(1));
    if stream.set_read_timeout(timeout).is_err() || stream.set_write_timeout(timeout).is_err() {
        return false;
    }
    let request = "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    // The status line is all we need; it comes in the first read.
    let mut head = [0u8; 64];
    let read = stream.read(&mut head).unwrap_or(0);
    head[..read].starts_with(b"HTTP/1.1 200")
}

/// The configuration every tile build and service starts from: the engine's own generator's
/// defaults (so no key it expects is missing), without the admin, timezone and traffic
/// databases and the tile tar, which the tests do not build. Made once per process.
fn config_template(bin: &Path) -> Value {
    static TEMPLATE: OnceLock<Value> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            // A system install has the generator as a command next to the service; the wheel
            // has it as a script one directory up.
            let installed = bin.join("valhalla_build_config");
            let mut command = if installed.is_file() {
                Command::new(installed)
            } else {
                let mut python = Command::new("python3");
                python.arg(bin.join("../valhalla_build_config.py"));
                python
            };
            let output = command
                .args(["--mjolnir-tile-dir", "/nonexistent"])
                .args(["--mjolnir-tile-extract", ""])
                .args(["--mjolnir-timezone", ""])
                .args(["--mjolnir-admin", ""])
                .args(["--mjolnir-traffic-extract", ""])
                .stdin(Stdio::null())
                .output()
                .expect("run valhalla_build_config (python3 must be installed)");
            assert!(
                output.status.success(),
                "valhalla_build_config failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let mut config: Value =
                serde_json::from_slice(&output.stdout).expect("valhalla_build_config prints JSON");
            // Whatever the generator version does with empty flags, these stay unset: the
            // service must not look for files the build never made.
            for key in ["tile_extract", "admin", "timezone", "traffic_extract"] {
                set(&mut config, &format!("/mjolnir/{key}"), json!(""));
            }
            config
        })
        .clone()
}

/// The tiles of `extract`: from the cache when built before, else built now and cached.
fn tiles_for(bin: &Path, template: &Value, extract: &Path) -> TileBuild {
    let extract = extract
        .canonicalize()
        .unwrap_or_else(|e| panic!("extract {}: {e}", extract.display()));
    let root = cache_root();
    std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("create {}: {e}", root.display()));
    let done = root.join(tile_key(bin, &extract));
    // Tests of one process would otherwise build the same tileset side by side.
    static BUILDING: Mutex<()> = Mutex::new(());
    let _one_at_a_time = BUILDING.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(report) = read_report(&done) {
        return report;
    }
    let build = tempfile::Builder::new()
        .prefix(".building-")
        .tempdir_in(&root)
        .expect("a build directory beside the tile cache");
    let tile_dir = build.path().join("tiles");
    let mut config = template.clone();
    set(&mut config, "/mjolnir/tile_dir", json!(tile_dir));
    let config_path = build.path().join("build-config.json");
    write_json(&config_path, &config);
    let log = build.path().join("build.log");
    let started = Instant::now();
    let mut child = spawn_logged(
        Command::new(bin.join("valhalla_build_tiles"))
            .arg("-c")
            .arg(&config_path)
            .arg(&extract)
            .current_dir(build.path()),
        &log,
    );
    let status = child.wait().expect("wait for valhalla_build_tiles");
    let seconds = started.elapsed().as_secs_f64();
    assert!(
        status.success(),
        "valhalla_build_tiles {} failed ({status}); its log ends:\n{}",
        extract.display(),
        tail(&log, 30)
    );
    let bytes = dir_bytes(&tile_dir);
    assert!(
        bytes > 0,
        "valhalla_build_tiles wrote no tiles for {}",
        extract.display()
    );
    write_json(
        &build.path().join("build.json"),
        &json!({
            "extract": extract,
            "seconds": seconds,
            "bytes": bytes,
            "settings": TILE_SETTINGS,
        }),
    );
    // The cache's path is in the service's config, not the build's, which is written for the
    // temporary directory; it stays beside the tiles as a record of how they were built.
    let building = build.keep();
    match std::fs::rename(&building, &done) {
        Ok(()) => {}
        // Another process finished the same tileset first: use its copy.
        Err(_) if read_report(&done).is_some() => {
            let _ = std::fs::remove_dir_all(&building);
        }
        Err(e) => panic!("move {} to {}: {e}", building.display(), done.display()),
    }
    TileBuild {
        dir: done.join("tiles"),
        bytes,
        seconds,
        reused: false,
    }
}

/// A completed tileset's report, or `None` when there is none (yet) at `dir`.
fn read_report(dir: &Path) -> Option<TileBuild> {
    let text = std::fs::read_to_string(dir.join("build.json")).ok()?;
    let report: Value = serde_json::from_str(&text).ok()?;
    Some(TileBuild {
        dir: dir.join("tiles"),
        bytes: report["bytes"].as_u64()?,
        seconds: report["seconds"].as_f64()?,
        reused: true,
    })
}

/// `<target dir>/valhalla-tiles`, the target directory found from the running executable
/// as the first directory above it holding Cargo's `CACHEDIR.TAG` (a test sits in
/// `<target>/<profile>/deps`, a benchmark binary one level higher): `CARGO_TARGET_DIR` is not
/// passed to tests, and a relative `target` would resolve against the package. Elsewhere,
/// the system's temporary directory.
fn cache_root() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.ancestors()
                .find(|dir| dir.join("CACHEDIR.TAG").is_file())
                .map(Path::to_path_buf)
        })
        .map_or_else(
            || std::env::temp_dir().join("etappe-valhalla-tiles"),
            |target| target.join("valhalla-tiles"),
        )
}

/// The cache key: the engine's version, the build settings and the extract's bytes.
fn tile_key(bin: &Path, extract: &Path) -> String {
    let version = Command::new(bin.join("valhalla_service"))
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .expect("run valhalla_service --version");
    assert!(
        version.status.success(),
        "{} --version failed: {}",
        bin.join("valhalla_service").display(),
        String::from_utf8_lossy(&version.stderr)
    );
    let mut hasher = Sha256::new();
    hasher.update(&version.stdout);
    hasher.update(TILE_SETTINGS.as_bytes());
    let mut file =
        File::open(extract).unwrap_or_else(|e| panic!("open {}: {e}", extract.display()));
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let read = file
            .read(&mut chunk)
            .unwrap_or_else(|e| panic!("read {}: {e}", extract.display()));
        if read == 0 {
            break;
        }
        hasher.update(&chunk[..read]);
    }
    hasher.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Sets the value at a JSON pointer that must exist: a missing key means the generator's
/// layout changed, which should fail loudly rather than start a misconfigured service.
fn set(config: &mut Value, pointer: &str, value: Value) {
    *config
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("Valhalla's configuration has no {pointer}")) = value;
}

fn write_json(path: &Path, value: &Value) {
    let text = serde_json::to_string_pretty(value).expect("JSON");
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Spawns `command` with stdout and stderr both appended to `log`.
fn spawn_logged(command: &mut Command, log: &Path) -> Child {
    let out = File::create(log).unwrap_or_else(|e| panic!("create {}: {e}", log.display()));
    let err = out.try_clone().expect("clone the log's handle");
    command
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("start {command:?}: {e}"))
}

/// The last `lines` lines of a file (empty when it cannot be read).
fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Total bytes of the files under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => dir_bytes(&entry.path()),
            Ok(_) => entry.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

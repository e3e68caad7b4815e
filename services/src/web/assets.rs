//! The rider's page: its files embedded in the binary (no Node, no build step for
//! `cargo run`), each served under a name carrying a hash of its bytes with a year-long
//! immutable cache, gzip-compressed once at first use; and the HTML shell that loads them,
//! sent with a strict Content-Security-Policy (scripts and styles from this origin only, no
//! inline script; tiles from the configured server; no framing).
//!
//! The page's own modules import each other by plain names (`./api.js`); the shell's table
//! rewrites those to the hashed names, so a changed module changes the names of the modules
//! that import it and no browser keeps a stale copy.

use std::collections::HashMap;
use std::io::Write;
use std::sync::LazyLock;

use axum::body::Body;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// The files, in dependency order: a module appears after every module it imports.
const FILES: &[(&str, &str)] = &[
    (
        "leaflet.js",
        include_str!("../../web-assets/vendor/leaflet.js"),
    ),
    (
        "leaflet.css",
        include_str!("../../web-assets/vendor/leaflet.css"),
    ),
    ("uplot.js", include_str!("../../web-assets/vendor/uplot.js")),
    (
        "uplot.css",
        include_str!("../../web-assets/vendor/uplot.css"),
    ),
    ("style.css", include_str!("../../web-assets/app/style.css")),
    (
        "strings.js",
        include_str!("../../web-assets/app/strings.js"),
    ),
    ("dom.js", include_str!("../../web-assets/app/dom.js")),
    ("api.js", include_str!("../../web-assets/app/api.js")),
    ("words.js", include_str!("../../web-assets/app/words.js")),
    ("map.js", include_str!("../../web-assets/app/map.js")),
    (
        "profile.js",
        include_str!("../../web-assets/app/profile.js"),
    ),
    (
        "offline.js",
        include_str!("../../web-assets/app/offline.js"),
    ),
    (
        "settings.js",
        include_str!("../../web-assets/app/settings.js"),
    ),
    ("day.js", include_str!("../../web-assets/app/day.js")),
    ("trip.js", include_str!("../../web-assets/app/trip.js")),
    ("trips.js", include_str!("../../web-assets/app/trips.js")),
    (
        "history.js",
        include_str!("../../web-assets/app/history.js"),
    ),
    (
        "account.js",
        include_str!("../../web-assets/app/account.js"),
    ),
    ("app.js", include_str!("../../web-assets/app/app.js")),
    ("icon.svg", include_str!("../../web-assets/app/icon.svg")),
];

/// The service worker's own code; `/sw.js` serves it after the list of the hashed files
/// it keeps, so a changed page changes the worker and the browser updates it.
const WORKER: &str = include_str!("../../web-assets/app/sw.js");

/// One embedded file under its hashed name.
struct Asset {
    media: &'static str,
    plain: Vec<u8>,
    gzip: Vec<u8>,
}

struct Table {
    /// Plain name → hashed name (`app.js` → `app.3f2a9c01de.js`).
    names: HashMap<&'static str, String>,
    /// Hashed name → file.
    files: HashMap<String, Asset>,
}

fn media(name: &str) -> &'static str {
    if name.ends_with(".js") {
        "text/javascript; charset=utf-8"
    } else if name.ends_with(".svg") {
        "image/svg+xml"
    } else {
        "text/css; charset=utf-8"
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

/// A file's text: embedded, or, when `ETAPPE_WEB_ASSETS_DIR` names the source folder
/// (`services/web-assets`), read from there at the first request (editing the page without
/// rebuilding the binary; a missing file falls back to the embedded copy).
fn text_of(name: &str, embedded: &str) -> String {
    if let Ok(dir) = std::env::var("ETAPPE_WEB_ASSETS_DIR") {
        for sub in ["app", "vendor"] {
            if let Ok(text) =
                std::fs::read_to_string(std::path::Path::new(&dir).join(sub).join(name))
            {
                return text;
            }
        }
    }
    embedded.to_owned()
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    let mut names: HashMap<&'static str, String> = HashMap::new();
    let mut files = HashMap::new();
    for (name, text) in FILES {
        let mut text = text_of(name, text);
        for (earlier, hashed) in &names {
            text = text.replace(&format!("'./{earlier}'"), &format!("'./{hashed}'"));
        }
        let digest = hex::encode(Sha256::digest(text.as_bytes()));
        let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
        let hashed = format!("{stem}.{}.{ext}", &digest[..10]);
        let plain = text.into_bytes();
        files.insert(
            hashed.clone(),
            Asset {
                media: media(name),
                gzip: gzip(&plain),
                plain,
            },
        );
        names.insert(name, hashed);
    }
    Table { names, files }
});

/// The hashed URL path of an embedded file.
pub(super) fn url(name: &str) -> String {
    match TABLE.names.get(name) {
        Some(hashed) => format!("/assets/{hashed}"),
        None => format!("/assets/{name}"),
    }
}

/// `GET /assets/{name}`: an embedded file, gzip when the browser takes it.
pub(super) async fn serve(Path(name): Path<String>, headers: HeaderMap) -> Response {
    let Some(asset) = TABLE.files.get(&name) else {
        return crate::problem::Problem::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "Not found",
            "no such file",
        )
        .into_response();
    };
    let gzip_ok = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|e| e.trim().starts_with("gzip")));
    let mut response = if gzip_ok {
        let mut r = Body::from(asset.gzip.clone()).into_response();
        r.headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        r
    } else {
        Body::from(asset.plain.clone()).into_response()
    };
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.media));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    h.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// `GET /sw.js`: the service worker (at the root, so its scope is the whole page): the
/// hashed files to keep, then its code. Never cached by the browser's HTTP cache, so an
/// update is seen at the next visit.
pub(super) async fn worker() -> Response {
    let mut response = Body::from(worker_source()).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/javascript; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// The worker's code after the hashed files it keeps and a version naming them and it.
fn worker_source() -> String {
    let mut keep: Vec<String> = FILES.iter().map(|(name, _)| url(name)).collect();
    keep.sort();
    let list = serde_json::to_string(&keep).unwrap_or_else(|_| "[]".to_owned());
    let code = text_of("sw.js", WORKER);
    let version = hex::encode(Sha256::digest(format!("{list}{code}").as_bytes()));
    format!(
        "const ASSETS = {list};\nconst VERSION = '{}';\n{code}",
        &version[..12]
    )
}

/// `GET /manifest.webmanifest`: what makes the page an installable web app.
pub(super) async fn manifest() -> Response {
    let body = serde_json::json!({
        "name": "Etappe",
        "short_name": "Etappe",
        "description": "Multi-day bicycle trips cut into days, with what each day passes and where you sleep.",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "background_color": "#ffffff",
        "theme_color": "#0a58ca",
        "icons": [{"src": url("icon.svg"), "sizes": "any", "type": "image/svg+xml", "purpose": "any"}],
    });
    let mut response = Body::from(body.to_string()).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/manifest+json"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    response
}

/// The origin (`scheme://host[:port]`) of a tile URL template, for the CSP's `img-src`.
fn tile_origin(template: &str) -> Option<String> {
    let probe = template
        .replace("{z}", "0")
        .replace("{x}", "0")
        .replace("{y}", "0")
        .replace("{s}", "a");
    let url = url::Url::parse(&probe).ok()?;
    matches!(url.scheme(), "http" | "https").then(|| url.origin().ascii_serialization())
}

/// The page's Content-Security-Policy: nothing inline, nothing from elsewhere but tiles.
pub(super) fn policy(tile_url: &str) -> String {
    let tiles = tile_origin(tile_url)
        .map(|o| format!(" {o}"))
        .unwrap_or_default();
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:{tiles}; \
         connect-src 'self'; manifest-src 'self'; worker-src 'self'; form-action 'self'; \
         frame-ancestors 'none'; base-uri 'none'"
    )
}

/// The shell every screen of the page starts from. `tile_url` is handed to the script in a
/// data attribute (HTML-escaped); `public` marks the read-only page of a share link.
pub(super) fn shell(tile_url: &str, public: bool) -> Response {
    let esc = super::pages::escape;
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"color-scheme\" content=\"light dark\">\
         <meta name=\"theme-color\" content=\"#0a58ca\">\
         <title>Etappe</title><link rel=\"icon\" href=\"{icon}\">\
         <link rel=\"manifest\" href=\"/manifest.webmanifest\">\
         <link rel=\"stylesheet\" href=\"{lcss}\"><link rel=\"stylesheet\" href=\"{ucss}\">\
         <link rel=\"stylesheet\" href=\"{css}\">\
         <script defer src=\"{leaflet}\"></script><script defer src=\"{uplot}\"></script>\
         <script type=\"module\" src=\"{app}\"></script></head>\
         <body data-tiles=\"{tiles}\" data-public=\"{public}\">\
         <a class=\"skip\" href=\"#main\">Skip to content</a>\
         <header class=\"top\"><a class=\"brand\" href=\"/\">Etappe</a><nav id=\"nav\"></nav></header>\
         <main id=\"main\" tabindex=\"-1\"><p class=\"muted\">Loading…</p></main>\
         <div id=\"toast\" role=\"status\" aria-live=\"polite\"></div></body></html>\n",
        lcss = url("leaflet.css"),
        ucss = url("uplot.css"),
        css = url("style.css"),
        leaflet = url("leaflet.js"),
        uplot = url("uplot.js"),
        app = url("app.js"),
        icon = url("icon.svg"),
        tiles = esc(tile_url),
    );
    let mut response = (StatusCode::OK, axum::response::Html(html)).into_response();
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("strict-origin-when-cross-origin"),
    );
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    if let Ok(value) = HeaderValue::from_str(&policy(tile_url)) {
        h.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    // The service worker keeps only this shell for offline navigations, never another page.
    h.insert("x-etappe-shell", HeaderValue::from_static("1"));
    response
}

/// Whether a request asks for a page rather than data: `text/html` before any JSON type.
pub(super) fn wants_html(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    for part in accept.split(',') {
        let kind = part.split(';').next().unwrap_or("").trim();
        if kind == "text/html" {
            return true;
        }
        if kind.contains("json") {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_import_each_other_by_hashed_names() {
        let app = &TABLE.files[&TABLE.names["app.js"]];
        let text = String::from_utf8_lossy(&app.plain);
        assert!(
            text.contains(&TABLE.names["api.js"]),
            "app.js imports api.js by its hash"
        );
        assert!(!text.contains("'./api.js'"));
    }

    #[test]
    fn the_worker_keeps_every_file_under_its_hashed_name() {
        let source = worker_source();
        for (name, _) in FILES {
            assert!(source.contains(&format!("\"{}\"", url(name))), "{name}");
        }
        assert!(source.starts_with("const ASSETS = [\"/assets/"));
        assert!(source.contains("const VERSION = '"));
        let p = policy("");
        assert!(p.contains("worker-src 'self'") && p.contains("manifest-src 'self'"));
    }

    #[test]
    fn the_policy_admits_the_tile_server_only() {
        let p = policy("https://tiles.example/{z}/{x}/{y}.png");
        assert!(p.contains("img-src 'self' data: https://tiles.example;"));
        assert!(p.contains("script-src 'self';"));
        assert!(!p.contains("unsafe"));
        assert!(policy("").contains("img-src 'self' data:;"));
    }

    #[test]
    fn browsers_get_the_page_and_json_clients_the_data() {
        let of = |a: &str| {
            let mut h = HeaderMap::new();
            h.insert(
                header::ACCEPT,
                HeaderValue::from_str(a).expect("a header value"),
            );
            wants_html(&h)
        };
        assert!(of("text/html,application/xhtml+xml,*/*;q=0.8"));
        assert!(!of("application/json"));
        assert!(!of("*/*"));
        assert!(!of("application/json, text/html"));
        assert!(!wants_html(&HeaderMap::new()));
    }

    #[test]
    fn vendored_copies_match_pins() {
        let versions = include_str!("../../web-assets/vendor/VERSIONS");
        let lock: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/web/package-lock.json"))
                .expect("package-lock.json");
        for line in versions.lines() {
            let (name, version) = line.split_once(' ').expect("name version");
            let locked = &lock["packages"][format!("node_modules/{name}")]["version"];
            assert_eq!(locked, version, "{name}: re-run tests/web/vendor.sh");
        }
        assert!(FILES[0].1.contains("\"1.9.4\"") || FILES[0].1.contains("1.9.4"));
        assert!(FILES[2].1.contains("uPlot"));
    }
}

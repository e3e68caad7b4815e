//! Routing on a real Valhalla: the engine through Etappe's adapter (`engine`), plans from
//! places through the whole application on real roads (`real_routes`), and the per-day road
//! analysis checked against Valhalla's own map matching as ground truth (`truth`), and the
//! names a rider types resolved where the extract is, checked against osmium (`places`). Each test
//! starts its own `valhalla_service` (its own port and ipc sockets); the tiles are built once
//! per machine and shared.

mod engine;
mod kept;
mod places;
mod real_routes;
mod truth;

/// Imports the shared Liechtenstein extract into `app`'s OpenStreetMap index (`etappe osm
/// import`), failing the test with the importer's own words when it cannot.
async fn import_liechtenstein(app: &etappe_tests::TestApp) {
    let extract = etappe_tests::valhalla::liechtenstein();
    let imported = app.operator_command(&["osm", "import", &extract.to_string_lossy()]);
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
}

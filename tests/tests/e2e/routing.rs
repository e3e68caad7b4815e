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

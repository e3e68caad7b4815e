//! Routing on a real Valhalla: the engine through Etappe's adapter (`engine`), and plans from
//! places through the whole application on real roads (`real_routes`). Each test starts its
//! own `valhalla_service` (its own port and ipc sockets); the tiles are built once per machine
//! and shared.

mod engine;
mod real_routes;

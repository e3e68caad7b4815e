//! The upstream adapters' integration tests as one binary: each client (Nominatim and its
//! rate limiter, Open-Meteo forecasts and elevations, Overpass and its corridor queries, the
//! router) against local stand-in servers, one module each, with the shared stand-ins in
//! `common`.

mod common;
mod nominatim;
mod nominatim_limiter;
mod open_meteo;
mod open_meteo_elevation;
mod overpass;
mod overpass_corridor;
mod router;

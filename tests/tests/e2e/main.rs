//! Etappe's end-to-end tests as one test binary (`cargo test -p etappe-tests --test e2e`),
//! grouped by area; the harnesses they share are the crate's library (`tests/src`). One binary
//! links the whole services stack once instead of once per file.
//!
//! The tests of every area run side by side in this one process, so whatever used to be
//! isolated by a process of its own is guarded here: a test that stops a shared server
//! (Redis, RabbitMQ) holds [`etappe_tests::servers_alone`], and every test that uses those
//! servers holds [`etappe_tests::servers_shared`]; every test application has its own data
//! directory, database, ports and queue prefix.
//!
//! Run one area with a filter on its path, e.g. `cargo test -p etappe-tests --test e2e mcp::`.

mod compose;
mod mcp;
mod oauth;
mod operations;
mod people;
mod pipeline;
mod rest;
mod routing;
mod servers;
mod web;

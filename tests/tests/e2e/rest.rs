//! The REST surface: trips end to end, the day edits, the request id shared with MCP, the
//! hardening pins, the OpenAPI document against the real server, and the snapshots of the
//! event and problem contracts.

mod contracts;
mod hardening;
mod openapi;
mod stages;
mod transports;
mod trips;

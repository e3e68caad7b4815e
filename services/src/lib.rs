//! Etappe's transports and composition root.
//!
//! # Layout
//!
//! - [`config`]: every setting, from flags or environment variables, with its default (a leaf).
//! - [`telemetry`]: `tracing` set up once, with OpenTelemetry export when configured (owned
//!   by the infrastructure crate, re-exported here).
//! - The application layer is its own crate, [`etappe_app`]: the services every transport
//!   calls and nothing else (so a rule is written once whichever transport a caller uses),
//!   identity's storage, the budgets and live streams. It depends on no transport crate.
//! - [`auth`]: the one reading of a credential (bearer token or session cookie, with the
//!   CSRF rule for cookie writes), for every transport.
//! - [`http`]: the REST transport: routes, problem+json errors, OpenAPI, health.
//! - [`mcp`]: the agent transport, MCP over Streamable HTTP at `/mcp`. A sibling of `http`:
//!   both take the [`etappe_app::App`] and neither imports the other.
//! - [`oauth`]: the authorization server's transport (metadata, authorize and consent,
//!   token, registration, revocation, the person's agents); a sibling of `http` and `mcp`.
//! - [`web`]: the people's transport: login pages, `/auth/*` and the account routes
//!   (`/users/me*`). A sibling of `http` and `mcp`, importing neither.
//! - [`openapi`]: the shapes of the OpenAPI document (its builders and the domain's
//!   schemas), and [`openapi_parts`]: the other transports' parts of the document REST serves.
//! - [`problem`]: application errors as problem+json, shared by the HTTP transports, and how
//!   the OpenAPI document describes them.
//! - [`html`]: the one HTML escaper of the server's own pages (web, oauth).
//! - [`request_layers`]: the layers every request passes through (request id, trace, body
//!   deadline).
//! - [`server`]: the HTTP server's own defences (connection cap, header, idle and body
//!   deadlines).
//! - [`runtime`]: the dispatcher and, on the embedded default, the workers, started and
//!   stopped with the server.
//! - [`startup`]: the composition root: opens the backend chosen by the configuration,
//!   builds the [`etappe_app::App`] once, merges the transports and runs the server.

pub mod auth;
#[cfg(test)]
mod boundaries;
pub mod config;
pub mod html;
pub mod http;
pub mod mcp;
pub mod oauth;
pub mod openapi;
pub mod openapi_parts;
pub mod problem;
pub mod request_layers;
pub mod runtime;
pub mod server;
pub mod startup;
pub mod web;
/// Telemetry is shared with the worker binary, which owns it (dependencies point one way).
pub use etappe_infra::telemetry;

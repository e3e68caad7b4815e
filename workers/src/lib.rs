//! Etappe's computation fleet: the jobs that events ask for, the queue they travel on, and
//! the workers that run them (fetching and parsing the route, pacing, labels, analysis).
//!
//! Depends on the domain (`etappe-domain`), the store and its one command path
//! (`etappe-events`), the infrastructure it shares with the API (`etappe-infra`: telemetry,
//! Redis, metrics, the SSRF-safe fetcher) and the pure crates `etappe-route` and
//! `etappe-analysis`; the transports depend on it.
//!
//! # Layout
//!
//! - [`jobs`]: which events request which work.
//! - [`dispatcher`]: the event log → queue relay (the log is the outbox).
//! - [`queue`]: the queue port, in-process and RabbitMQ adapters.
//! - [`worker`], [`pipeline`]: consuming jobs and what a job does.
//! - [`health`]: the binaries' `health --live|--ready` probe.
//! - `etappe-track` (libs/track): the stored track, its geometry and labels, shared with the API.
//! - [`progress`]: live progress, in memory or Redis.
//! - [`fleet`]: what a process's work is built from, and the worker process's HTTP server.

pub mod dispatcher;
mod enrich;
pub mod flags;
pub mod fleet;
pub mod giving_up;
pub mod health;
pub mod jobs;
pub mod pipeline;
pub mod progress;
pub mod queue;
pub mod readiness;
pub mod upstreams;
pub mod worker;

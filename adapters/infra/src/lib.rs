//! Etappe's infrastructure, shared by the API (`etappe`) and the worker fleet
//! (`etappe-worker`): tracing and its propagation ([`telemetry`]), the process's one Redis
//! handle ([`redis_link`]), the Prometheus metrics ([`metrics`]), and the SSRF-safe fetcher
//! of route sources and client documents ([`fetch`]). None of it knows a trip or a job.

pub mod fetch;
pub mod metrics;
pub mod redis_link;
pub mod telemetry;

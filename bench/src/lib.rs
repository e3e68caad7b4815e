//! Etappe's benchmarks, one module each; the `etappe-bench` binary only parses the command
//! line and calls a module's `run` (or, for the server's defences, a function of [`server`]).
//! They start the real application in process on the embedded defaults or on the servers
//! `DATABASE_URL`, `AMQP_URL` and `REDIS_URL` name, and borrow the end-to-end tests' harnesses
//! (`etappe-tests`: the fixture and Valhalla servers, worker processes) rather than keep
//! copies of them.

pub mod appends;
pub mod common;
pub mod mcp;
pub mod nights;
pub mod oauth;
pub mod patch;
pub mod plan;
pub mod route;
pub mod server;

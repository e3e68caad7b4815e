//! The analysis's integration tests as one binary: the plan, the rules, robustness against
//! odd input, the sunset and the whole trip, one module each, with the shared builders in
//! `common`.

mod common;
mod plan;
mod robustness;
mod rules;
mod sunset;
mod trip;

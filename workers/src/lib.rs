//! Etappe's computation fleet: the jobs that events ask for, the queue they travel on, and
//! the workers that run them (fetching and parsing the route, pacing, labels, analysis).
//!
//! This crate depends on the core (`etappe-events`) and is depended on by the transports.
//! What exists so far is the job vocabulary: which stored events request work. The queue,
//! the dispatcher and the `etappe-worker` binary are issue #3.

pub mod jobs;

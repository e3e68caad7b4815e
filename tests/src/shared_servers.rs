//! The servers every test of the one end-to-end binary shares (PostgreSQL, RabbitMQ, Redis on
//! their fixed ports), and the guard that keeps a test stopping one of them from pulling it
//! out from under another test. When each test file was a process of its own, cargo ran the
//! files one after the other; in one binary, tests of every area run side by side.
//!
//! A test that uses RabbitMQ or Redis ([`crate::Servers`]) holds [`servers_shared`] for its
//! whole run; a test that stops or restarts one of them, or whose timing needs the servers to
//! itself, holds [`servers_alone`]. Take it once per test, at its start, and never a second
//! time while holding it: Tokio's lock is fair, so a second shared take queued behind a waiting
//! exclusive one would wait for ever.

use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static SERVERS: RwLock<()> = RwLock::const_new(());

/// Held by a test that uses the shared servers: any number of them at once, never while a
/// test holding [`servers_alone`] runs.
pub async fn servers_shared() -> RwLockReadGuard<'static, ()> {
    SERVERS.read().await
}

/// Held by a test that stops or restarts a shared server: no test holding
/// [`servers_shared`] runs meanwhile.
pub async fn servers_alone() -> RwLockWriteGuard<'static, ()> {
    SERVERS.write().await
}

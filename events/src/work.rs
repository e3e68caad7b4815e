//! What the worker fleet keeps besides events: blobs, heartbeats, and the lease that lets
//! one dispatcher run at a time.

use std::fmt;

use async_trait::async_trait;
use etappe_domain::ids::{TripId, UserId};

use crate::StoreError;

/// Blobs, heartbeats and leases.
#[async_trait]
pub trait WorkStore: Send + Sync + fmt::Debug {
    /// Stores `data` under `key` (a second put of the same key replaces it).
    async fn put_blob(&self, key: &str, data: &[u8]) -> Result<(), StoreError>;
    /// The blob under `key`.
    async fn get_blob(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Deletes every blob of a trip (its upload, tracks and detours: keys `kind:{trip_id}…`).
    /// Answers how many went.
    async fn delete_trip_blobs(&self, trip_id: TripId) -> Result<u64, StoreError>;
    /// Bytes of uploaded files kept for the live trips of `owner` (the upload quota).
    async fn upload_bytes_of(&self, owner: UserId) -> Result<u64, StoreError>;
    /// Records that `worker_id` is alive now.
    async fn heartbeat(&self, worker_id: &str) -> Result<(), StoreError>;
    /// Workers seen within the last `within`.
    async fn live_workers(&self, within: std::time::Duration) -> Result<u64, StoreError>;
    /// Forgets `worker_id` (it stopped): readiness stops counting it at once.
    async fn forget_worker(&self, worker_id: &str) -> Result<(), StoreError>;
    /// Forgets the workers silent for `silent_for` (killed, never stopped cleanly): their
    /// rows do not pile up. Answers how many.
    async fn forget_silent_workers(
        &self,
        silent_for: std::time::Duration,
    ) -> Result<u64, StoreError>;
    /// Takes the named lease of this store if nobody holds it, or its holder let it expire.
    /// On PostgreSQL it lasts [`LEASE_TTL`] unless renewed ([`Lease::renew`]), so a holder
    /// that hangs (paused, partitioned, stuck) loses it to another replica, whatever its
    /// connection does; dropping the handle gives it back. On SQLite (one process) it is held
    /// until dropped.
    async fn try_lease(&self, name: &str) -> Result<Option<Box<dyn Lease>>, StoreError>;
}

/// How long a lease lasts without renewal (PostgreSQL): a holder renews well within it.
pub const LEASE_TTL: std::time::Duration = std::time::Duration::from_secs(15);

/// A held lease.
#[async_trait]
pub trait Lease: Send + Sync + fmt::Debug {
    /// Extends the lease by [`LEASE_TTL`]; `false` when it expired and another holder took
    /// it meanwhile (the holder must stop what the lease guards).
    async fn renew(&self) -> Result<bool, StoreError> {
        Ok(true)
    }
}

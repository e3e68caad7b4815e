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
    /// Takes the named lease of this store if nobody holds it; it is held until the handle is
    /// dropped (or, on PostgreSQL, until its connection dies, so a crashed holder frees it).
    async fn try_lease(&self, name: &str) -> Result<Option<Box<dyn Lease>>, StoreError>;
}

/// A held lease.
pub trait Lease: Send + Sync + fmt::Debug {}

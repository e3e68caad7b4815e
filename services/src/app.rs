//! Application services: the one place a command is authorized, parsed, decided and
//! appended, and a read is assembled. Transports call these and only translate.

mod access;
pub mod accounts;
pub mod authorization;
pub mod confirmation;
mod error;
pub mod exports;
pub mod follow;
pub mod links;
pub mod places;
pub mod trips;
pub mod views;

pub use self::error::AppError;

use std::sync::Arc;

use uuid::Uuid;

use self::accounts::Accounts;
use self::trips::TripService;
use crate::budgets::Budgets;
use crate::config::{HostSettings, ServerLimits};
use crate::identity::{Identity, Principal};
use crate::streams::StreamSlots;

/// The application: its services and the handles they share, built once by the composition
/// root (`startup`) and handed to every transport (REST, MCP, the people's web routes), none of which builds its own.
#[derive(Clone, Debug)]
pub struct App {
    pub trips: Arc<TripService>,
    /// GPX and FIT files of trips and days, with the cache of those already built.
    pub exports: Arc<self::exports::ExportService>,
    pub identity: Arc<Identity>,
    /// The OAuth authorization server's rules (agents' clients, grants and tokens).
    pub authorization: Arc<authorization::AuthorizationService>,
    /// People's accounts: login by magic link, sessions, tokens, export, deletion.
    pub accounts: Arc<Accounts>,
    /// The queue, progress, Redis and metrics of the work side.
    pub work: crate::runtime::WorkHandles,
    /// The public base URL share links are built on (`ETAPPE_PUBLIC_URL`); unset: the
    /// request's Host, when admitted.
    pub public_url: Option<String>,
    /// The hosts and browser origins the server admits besides loopback.
    pub hosts: HostSettings,
    /// Request budgets, shared by REST and MCP (and by replicas, through Redis).
    pub budgets: Arc<Budgets>,
    /// Live event streams open per user (capped by the budgets' `streams_per_user`).
    pub streams: Arc<StreamSlots>,
    /// The server's deadlines (the body deadline is a layer of the router).
    pub limits: ServerLimits,
    /// Uploads read and checked at once (`ServerLimits::uploads_at_once`).
    pub upload_slots: Arc<tokio::sync::Semaphore>,
}

impl App {
    /// A slot to read and check one upload in, held until the upload is answered: the memory
    /// of uploads is bounded by the slots, not by how many arrive at once. Waits up to half
    /// the body deadline (the body is not read meanwhile), then refuses with a retry delay.
    pub async fn upload_slot(&self) -> Result<tokio::sync::OwnedSemaphorePermit, AppError> {
        let wait = self.limits.body_timeout() / 2;
        match tokio::time::timeout(wait, Arc::clone(&self.upload_slots).acquire_owned()).await {
            Ok(Ok(slot)) => Ok(slot),
            _ => Err(AppError::UploadsBusy(self.limits.uploads_at_once)),
        }
    }
}

/// Who asks, through which request: the principal a service authorizes, and the request's
/// ids that the events it causes carry. Every service that changes a trip takes one; a
/// transport builds it once per request.
#[derive(Clone, Debug)]
pub struct Caller {
    pub principal: Principal,
    pub context: RequestContext,
}

/// What a transport knows about the request that reaches a service.
#[derive(Clone, Debug, Default)]
pub struct RequestContext {
    /// The request id (`X-Request-Id`), carried into event metadata as the correlation id.
    pub correlation_id: Option<Uuid>,
    /// The W3C `traceparent` of the request's span.
    pub traceparent: Option<String>,
}

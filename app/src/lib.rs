//! Etappe's application layer: the one place a command is authorized, parsed, decided and
//! appended, and a read is assembled. Every transport (REST, MCP, the people's pages, the
//! authorization server) calls these services and only translates; none of them lives here.
//! This crate depends on no HTTP framework and no OpenAPI generator (its `Cargo.toml` says
//! so), and it is tested without HTTP.
//!
//! # Layout
//!
//! - [`trips`], [`exports`], [`places`], [`links`], [`follow`]: the trip services, their
//!   files, the places a plan names, share links and the live follow of a trip.
//! - [`accounts`] and [`authorization`]: people's accounts and the OAuth authorization
//!   server's rules; [`identity`]: their storage (users, tokens, sessions, login links, audit).
//! - [`budgets`] and [`streams`]: request budgets per caller and live streams per user,
//!   shared by every transport (and by replicas, through Redis).
//! - [`confirmation`]: what an edit would remove, asked before it is made.
//! - [`views`]: the answers the services give; [`AppError`]: the one error of this layer,
//!   which each transport maps in one place.
//! - [`settings`]: the settings of the above, as flags and environment variables.

mod access;
pub mod accounts;
pub mod authorization;
pub mod budgets;
pub mod confirmation;
mod error;
pub mod exports;
pub mod follow;
pub mod identity;
pub mod links;
pub mod places;
pub mod settings;
pub mod streams;
pub mod trips;
pub mod views;

pub use self::error::AppError;

use std::sync::Arc;

use uuid::Uuid;

use self::accounts::Accounts;
use self::trips::TripService;
use crate::budgets::Budgets;
use crate::identity::{Identity, Principal};
use crate::settings::{HostSettings, ServerLimits};
use crate::streams::StreamSlots;

/// The application: its services and the handles they share, built once by the composition
/// root (`startup`) from [`AppParts`] and handed to every transport (REST, MCP, the people's
/// web routes), none of which builds its own. Its fields are private: a transport reaches
/// a service through its accessor and cannot swap one, and what the application derives
/// itself (the live-stream slots, the upload slots) is built here, once.
#[derive(Clone, Debug)]
pub struct App {
    trips: Arc<TripService>,
    exports: Arc<self::exports::ExportService>,
    identity: Arc<Identity>,
    authorization: Arc<authorization::AuthorizationService>,
    accounts: Arc<Accounts>,
    work: etappe_workers::fleet::WorkHandles,
    public_url: Option<String>,
    hosts: HostSettings,
    budgets: Arc<Budgets>,
    streams: Arc<StreamSlots>,
    limits: ServerLimits,
    upload_slots: Arc<tokio::sync::Semaphore>,
}

/// What the composition root builds the [`App`] from.
#[derive(Debug)]
pub struct AppParts {
    pub trips: TripService,
    pub exports: self::exports::ExportService,
    pub identity: Arc<Identity>,
    pub authorization: Arc<authorization::AuthorizationService>,
    pub accounts: Accounts,
    pub work: etappe_workers::fleet::WorkHandles,
    /// The public base URL share links are built on (`ETAPPE_PUBLIC_URL`); unset: the
    /// request's Host, when admitted.
    pub public_url: Option<String>,
    pub hosts: HostSettings,
    pub budgets: Arc<Budgets>,
    pub limits: ServerLimits,
}

impl App {
    /// The application of `parts`, with no stream open and every upload slot free.
    pub fn new(parts: AppParts) -> Self {
        Self {
            trips: Arc::new(parts.trips),
            exports: Arc::new(parts.exports),
            identity: parts.identity,
            authorization: parts.authorization,
            accounts: Arc::new(parts.accounts),
            work: parts.work,
            public_url: parts.public_url,
            hosts: parts.hosts,
            budgets: parts.budgets,
            streams: Arc::default(),
            limits: parts.limits,
            upload_slots: Arc::new(tokio::sync::Semaphore::new(
                parts.limits.uploads_at_once.max(1),
            )),
        }
    }

    /// Trips and their days.
    pub fn trips(&self) -> &Arc<TripService> {
        &self.trips
    }

    /// GPX and FIT files of trips and days, with the cache of those already built.
    pub fn exports(&self) -> &Arc<self::exports::ExportService> {
        &self.exports
    }

    /// Identity's storage: users, tokens, sessions, login links, the audit trail.
    pub fn identity(&self) -> &Arc<Identity> {
        &self.identity
    }

    /// The OAuth authorization server's rules (agents' clients, grants and tokens).
    pub fn authorization(&self) -> &Arc<authorization::AuthorizationService> {
        &self.authorization
    }

    /// People's accounts: login by magic link, sessions, tokens, export, deletion.
    pub fn accounts(&self) -> &Arc<Accounts> {
        &self.accounts
    }

    /// The queue, progress, Redis and metrics of the work side.
    pub fn work(&self) -> &etappe_workers::fleet::WorkHandles {
        &self.work
    }

    /// The public base URL share links are built on, when one is set.
    pub fn public_url(&self) -> Option<&str> {
        self.public_url.as_deref()
    }

    /// The hosts and browser origins the server admits besides loopback.
    pub fn hosts(&self) -> &HostSettings {
        &self.hosts
    }

    /// Request budgets, shared by REST and MCP (and by replicas, through Redis).
    pub fn budgets(&self) -> &Arc<Budgets> {
        &self.budgets
    }

    /// Live event streams open per user (capped by the budgets' `streams_per_user`).
    pub fn streams(&self) -> &Arc<StreamSlots> {
        &self.streams
    }

    /// The server's deadlines (the body deadline is a layer of the router).
    pub fn limits(&self) -> ServerLimits {
        self.limits
    }

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

//! The trip service: creating, reading, changing the settings of and deleting trips.
//!
//! Every method authorizes first (scope, then ownership looked up by id, so a foreign trip
//! and a missing one are refused alike before anything is loaded), then parses, decides and
//! appends. A stream conflict caused by another writer (a worker result, say) is retried by
//! reloading and deciding again; a stale *trip version* from the caller is never retried.

use std::sync::Arc;

use etappe_events::ids::{TripId, derived_id};
use etappe_events::projection::TripView;
use etappe_events::store::{EventMetadata, ExpectedVersion, Page, Store, StoreError, TripFilter};
use etappe_events::trip::input::{NullMeans, parse_settings, refuse_unknown};
use etappe_events::trip::settings::SettingField;
use etappe_events::trip::source::SourceUrl;
use etappe_events::trip::{FieldError, InputError, Trip, TripCommand, TripEvent, decide, fold};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::views::{TripDetail, TripList, TripListItem, TripSummary, today};
use super::{AppError, RequestContext};
use crate::identity::{Principal, Scope};

/// How many times a command is decided again after losing a race on its stream.
const STREAM_CONFLICT_RETRIES: usize = 5;

/// The largest page of the trip list.
pub const MAX_ITEMS_PER_PAGE: u32 = 30;
/// The page size when none is asked for.
pub const DEFAULT_ITEMS_PER_PAGE: u32 = 20;

/// The version a structural write is based on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseVersion {
    /// The caller read this version.
    Exact(u64),
    /// "Whatever is current" (REST `If-Match: *`); never accepted from agents.
    Current,
}

/// The answer to a creation.
#[derive(Clone, Debug)]
pub struct Created {
    pub trip: TripSummary,
    /// True when an earlier request with the same idempotency key created it.
    pub replayed: bool,
}

/// Creating, reading and editing trips.
#[derive(Debug, Clone)]
pub struct TripService {
    store: Arc<dyn Store>,
    allowed_source_hosts: Vec<String>,
}

/// The names a creation accepts.
pub fn create_fields() -> Vec<&'static str> {
    std::iter::once("sourceUrl")
        .chain(SettingField::ALL.iter().map(|f| f.name()))
        .collect()
}

/// The names a settings update accepts (`sourceUrl` is fixed at creation: create a new trip).
pub fn update_fields() -> Vec<&'static str> {
    SettingField::ALL.iter().map(|f| f.name()).collect()
}

fn require(principal: &Principal, scope: Scope) -> Result<(), AppError> {
    if principal.has(scope) {
        Ok(())
    } else {
        Err(AppError::InsufficientScope(scope))
    }
}

/// The digest of a request's canonical form: object keys sorted at every depth (serde_json's
/// map is ordered), so the same arguments in another order give the same digest.
pub fn canonical_digest(parts: &[&Value]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.to_string().as_bytes());
        hasher.update([0]);
    }
    hex::encode(hasher.finalize())
}

fn metadata(principal: &Principal, context: &RequestContext) -> EventMetadata {
    EventMetadata {
        actor: Some(format!("user:{}", principal.user_id)),
        correlation_id: context.correlation_id,
        causation_id: None,
        traceparent: context.traceparent.clone(),
        request_digest: None,
    }
}

impl TripService {
    /// A service over `store`; `allowed_source_hosts` may be named over plain http.
    pub fn new(store: Arc<dyn Store>, allowed_source_hosts: Vec<String>) -> Self {
        Self {
            store,
            allowed_source_hosts,
        }
    }

    /// Looks the trip up by id and refuses it unless `principal` owns it. Runs before any
    /// event is loaded: someone else's trip answers exactly like a missing one.
    async fn authorize(&self, principal: &Principal, trip_id: TripId) -> Result<(), AppError> {
        match self.store.trip_owner(trip_id).await? {
            Some(owner) if owner == principal.user_id => Ok(()),
            _ => Err(AppError::NotFound),
        }
    }

    async fn view(&self, trip_id: TripId) -> Result<TripView, AppError> {
        self.store
            .trip_view(trip_id)
            .await?
            .ok_or(AppError::NotFound)
    }

    async fn load(&self, trip_id: TripId) -> Result<(u64, Option<Trip>, Vec<TripEvent>), AppError> {
        let stored = self.store.read_stream(&trip_id.stream_id()).await?;
        let events = stored
            .iter()
            .map(|e| TripEvent::from_stored(&e.event_type, e.schema_version, &e.data))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| AppError::Internal(e.to_string()))?;
        Ok((stored.len() as u64, fold(&events), events))
    }

    /// Creates a trip from a source link and settings. With an idempotency key, the same key
    /// and body answer the same trip, and the same key with another body is refused.
    pub async fn create(
        &self,
        principal: &Principal,
        input: &Map<String, Value>,
        idempotency_key: Option<&str>,
        context: &RequestContext,
    ) -> Result<Created, AppError> {
        require(principal, Scope::TripsWrite)?;
        refuse_unknown(input, &create_fields())?;
        let mut errors = Vec::new();
        let source = match input.get("sourceUrl") {
            Some(Value::String(url)) => match SourceUrl::parse(url, &self.allowed_source_hosts) {
                Ok(source) => Some(source),
                Err(e) => {
                    errors.push(e);
                    None
                }
            },
            Some(other) => {
                errors.push(FieldError::new(
                    "sourceUrl",
                    format!(
                        "sourceUrl must be a link (a string); got {}",
                        etappe_events::trip::input::describe(other)
                    ),
                ));
                None
            }
            None => {
                errors.push(FieldError::new(
                    "sourceUrl",
                    "sourceUrl is required: an https link to a Komoot tour or collection, a Strava route, a RideWithGPS route or a GPX file",
                ));
                None
            }
        };
        let settings = match parse_settings(input, NullMeans::Absent) {
            Ok(patch) => Some(patch),
            Err(InputError::Invalid(e)) => {
                errors.extend(e);
                None
            }
            Err(other) => return Err(other.into()),
        };
        let (Some(source), Some(settings), true) = (source, settings, errors.is_empty()) else {
            return Err(InputError::Invalid(errors).into());
        };

        let mut meta = metadata(principal, context);
        let (trip_id, event_ids) = match idempotency_key {
            Some(key) => {
                let scope = format!("create_trip:{}:{key}", principal.user_id);
                meta.request_digest = Some(canonical_digest(&[&Value::Object(input.clone())]));
                (TripId(derived_id(&format!("trip:{scope}"))), Some(scope))
            }
            None => (TripId::new(), None),
        };
        let command = TripCommand::Create {
            trip_id,
            owner_id: principal.user_id,
            source,
            settings,
        };
        let events = decide(None, command)?;
        let new_events = events
            .iter()
            .enumerate()
            .map(|(i, e)| match &event_ids {
                Some(scope) => {
                    e.to_new_event_with_id(derived_id(&format!("event:{scope}:{i}")), &meta)
                }
                None => e.to_new_event(&meta),
            })
            .collect();
        let outcome = self
            .store
            .append(&trip_id.stream_id(), ExpectedVersion::NoStream, new_events)
            .await?;
        if outcome.already_appended {
            return self.replay(trip_id, meta.request_digest.as_deref()).await;
        }
        let view = self.view(trip_id).await?;
        Ok(Created {
            trip: TripSummary::of(&view, today()),
            replayed: false,
        })
    }

    /// Answers a creation repeated with the same idempotency key.
    async fn replay(&self, trip_id: TripId, digest: Option<&str>) -> Result<Created, AppError> {
        let first = self.store.read_stream(&trip_id.stream_id()).await?;
        let original = first
            .first()
            .and_then(|e| e.metadata.request_digest.as_deref());
        if original != digest {
            return Err(AppError::Conflict(
                "this Idempotency-Key was already used with a different body; use a new key for a new trip".into(),
            ));
        }
        match self.store.trip_view(trip_id).await? {
            Some(view) => Ok(Created {
                trip: TripSummary::of(&view, today()),
                replayed: true,
            }),
            None => Err(AppError::Conflict(
                "the trip created with this Idempotency-Key has since been deleted; use a new key"
                    .into(),
            )),
        }
    }

    /// Where a trip stands: `{id, version, partial, isLocked, computationStatus}`.
    pub async fn summary(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<TripSummary, AppError> {
        require(principal, Scope::TripsRead)?;
        self.authorize(principal, trip_id).await?;
        Ok(TripSummary::of(&self.view(trip_id).await?, today()))
    }

    /// The whole trip.
    pub async fn detail(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<TripDetail, AppError> {
        require(principal, Scope::TripsRead)?;
        self.authorize(principal, trip_id).await?;
        Ok(TripDetail::of(&self.view(trip_id).await?, today()))
    }

    /// One page of the caller's trips.
    pub async fn list(
        &self,
        principal: &Principal,
        filter: &TripFilter,
        page: Page,
    ) -> Result<TripList, AppError> {
        require(principal, Scope::TripsRead)?;
        let (views, total) = self
            .store
            .list_trip_views(principal.user_id, filter, page)
            .await?;
        let today = today();
        Ok(TripList {
            items: views.iter().map(|v| TripListItem::of(v, today)).collect(),
            total_items: total,
            page: page.page,
            items_per_page: page.per_page,
        })
    }

    /// Changes settings. Guards run in order: scope, ownership, lock (on the state before
    /// the edit), the presence of a base version, the values, then the version itself; the
    /// version moves only when something must be computed again.
    pub async fn update_settings(
        &self,
        principal: &Principal,
        trip_id: TripId,
        input: &Map<String, Value>,
        base: Option<BaseVersion>,
        context: &RequestContext,
    ) -> Result<TripDetail, AppError> {
        require(principal, Scope::TripsWrite)?;
        self.authorize(principal, trip_id).await?;
        if self.view(trip_id).await?.trip.is_locked(today()) {
            return Err(AppError::Locked);
        }
        let base = base.ok_or(AppError::PreconditionRequired)?;
        refuse_unknown(input, &update_fields())?;
        let patch = parse_settings(input, NullMeans::Clear)?;
        self.execute(principal, trip_id, context, |trip| {
            TripCommand::UpdateSettings {
                patch: patch.clone(),
                expected_version: match base {
                    BaseVersion::Exact(v) => v,
                    BaseVersion::Current => trip.map_or(0, |t| t.version),
                },
                today: today(),
            }
        })
        .await?;
        Ok(TripDetail::of(&self.view(trip_id).await?, today()))
    }

    /// Deletes a trip; allowed when it is locked.
    pub async fn delete(
        &self,
        principal: &Principal,
        trip_id: TripId,
        context: &RequestContext,
    ) -> Result<(), AppError> {
        require(principal, Scope::TripsWrite)?;
        self.authorize(principal, trip_id).await?;
        self.execute(principal, trip_id, context, |_| TripCommand::Delete)
            .await
    }

    /// Load, decide, append; again on a lost stream race, a bounded number of times.
    async fn execute(
        &self,
        principal: &Principal,
        trip_id: TripId,
        context: &RequestContext,
        command: impl Fn(Option<&Trip>) -> TripCommand,
    ) -> Result<(), AppError> {
        let meta = metadata(principal, context);
        for _ in 0..STREAM_CONFLICT_RETRIES {
            let (stream_version, state, _) = self.load(trip_id).await?;
            let events = decide(state.as_ref(), command(state.as_ref()))?;
            if events.is_empty() {
                return Ok(());
            }
            let new_events = events.iter().map(|e| e.to_new_event(&meta)).collect();
            match self
                .store
                .append(
                    &trip_id.stream_id(),
                    ExpectedVersion::Exact(stream_version),
                    new_events,
                )
                .await
            {
                Ok(_) => return Ok(()),
                Err(StoreError::Conflict { .. }) => continue,
                Err(other) => return Err(other.into()),
            }
        }
        Err(AppError::Conflict(
            "the trip is being changed by others right now; retry in a moment".into(),
        ))
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> Result<(), AppError> {
        Ok(self.store.ping().await?)
    }
}

//! The trip service: creating, reading, changing the settings of and deleting trips.
//!
//! Every method authorizes first (scope, then ownership looked up by id, so a foreign trip
//! and a missing one are refused alike before anything is loaded), then parses and hands the
//! command to the store's one command path (`execute`: decide, append, and the view that
//! append projected). A stream conflict caused by another writer (a worker result, say) is
//! retried there; a stale *trip version* from the caller is never retried.

use std::collections::BTreeMap;
use std::sync::Arc;

use etappe_domain::ids::{TripId, derived_id};
use etappe_domain::projection::TripView;
use etappe_domain::trip::input::{NullMeans, parse_settings, refuse_unknown};
use etappe_domain::trip::settings::SettingField;
use etappe_domain::trip::source::{SourceType, SourceUrl};
use etappe_domain::trip::{
    FieldError, InputError, ShareLink, Trip, TripCommand, TripEvent, decide,
};
use etappe_store::{Basis, CommandMetadata, EventIds, EventMetadata, Page, Store, TripFilter};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::confirmation::{self, Confirm};
use super::views::{TripDetail, TripList, TripListItem, TripSummary, today};
use super::{AppError, RequestContext};
use crate::identity::{Principal, Scope};

/// The largest page of the trip list.
pub const MAX_ITEMS_PER_PAGE: u32 = 30;
/// The page size when none is asked for.
pub const DEFAULT_ITEMS_PER_PAGE: u32 = 20;

/// The version a structural write is based on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BaseVersion {
    /// The caller read this version.
    Exact(u64),
    /// One of these versions (an `If-Match` list): the current one when it is among them.
    AnyOf(Vec<u64>),
    /// "Whatever is current" (REST `If-Match: *`); never accepted from agents.
    Current,
}

impl BaseVersion {
    /// The version the caller's change is judged against, given the current one: a list
    /// matches when it holds the current version, else its first entry is the stale one.
    pub fn expected(&self, current: u64) -> u64 {
        match self {
            Self::Exact(v) => *v,
            Self::Current => current,
            Self::AnyOf(list) if list.contains(&current) => current,
            Self::AnyOf(list) => list.first().copied().unwrap_or(0),
        }
    }
}

/// The answer to a creation.
#[derive(Clone, Debug)]
pub struct Created {
    pub trip: TripSummary,
    /// True when an earlier request with the same idempotency key created it.
    pub replayed: bool,
}

/// A request made idempotent by a key: the new trip's id and its events' ids derive from
/// `scope`; `digest` tells a retry from another request under the same key.
struct Keyed {
    scope: String,
    digest: String,
}

impl Keyed {
    fn trip_id(&self) -> TripId {
        TripId(derived_id(&format!("trip:{}", self.scope)))
    }
}

/// Creating, reading and editing trips.
#[derive(Debug, Clone)]
pub struct TripService {
    pub(super) store: Arc<dyn Store>,
    allowed_source_hosts: Vec<String>,
    /// Where trip creations are counted (10 a minute per user, every transport together).
    budgets: Arc<crate::budgets::Budgets>,
    /// Built exports, and the bound on building them.
    pub(super) exports: Arc<super::exports::ExportCache>,
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

pub(super) fn require(principal: &Principal, scope: Scope) -> Result<(), AppError> {
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

/// A caller's command: its events carry the caller and the request, with fresh ids.
fn command_metadata(principal: &Principal, context: &RequestContext) -> CommandMetadata {
    CommandMetadata {
        metadata: metadata(principal, context),
        ids: EventIds::Fresh,
    }
}

impl TripService {
    /// A service over `store`; `allowed_source_hosts` may be named over plain http.
    pub fn new(store: Arc<dyn Store>, allowed_source_hosts: Vec<String>) -> Self {
        Self {
            store,
            allowed_source_hosts,
            budgets: Arc::default(),
            exports: Arc::default(),
        }
    }

    /// The service counting creations in `budgets` (shared with the transports).
    pub fn with_budgets(mut self, budgets: Arc<crate::budgets::Budgets>) -> Self {
        self.budgets = budgets;
        self
    }

    /// Counts a trip creation of `principal`'s, refusing it over the user's budget.
    async fn admit_creation(&self, principal: &Principal) -> Result<(), AppError> {
        let key = crate::budgets::key_of(&[&principal.user_id.to_string()]);
        let budget = self.budgets.settings.creations();
        self.budgets
            .admit(&key, &[budget])
            .await
            .map_err(AppError::RateLimited)
    }

    /// Looks the trip up by id and refuses it unless `principal` owns it, before any event is
    /// read: someone else's trip answers exactly like a missing one. The row read is the
    /// inline projection, which is also the trip's current state (see [`Self::load`]).
    pub(super) async fn owned_view(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<TripView, AppError> {
        match self.store.trip_view(trip_id).await? {
            Some(view) if view.trip.owner_id == principal.user_id => Ok(view),
            _ => Err(AppError::NotFound),
        }
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
                        etappe_domain::trip::input::describe(other)
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
        self.admit_creation(principal).await?;

        let keyed = idempotency_key.map(|key| Keyed {
            scope: format!("create_trip:{}:{key}", principal.user_id),
            digest: canonical_digest(&[&Value::Object(input.clone())]),
        });
        let trip_id = keyed.as_ref().map_or_else(TripId::new, Keyed::trip_id);
        let command = TripCommand::Create {
            trip_id,
            owner_id: principal.user_id,
            source,
            settings,
        };
        self.create_trip(principal, context, trip_id, command, keyed.as_ref())
            .await
    }

    /// Duplicates a trip the caller owns (see `trip::duplicate` for what is copied). The key
    /// makes a retried request answer the same copy; the same key for another trip is refused.
    pub async fn duplicate(
        &self,
        principal: &Principal,
        original_id: TripId,
        idempotency_key: &str,
        context: &RequestContext,
    ) -> Result<Created, AppError> {
        require(principal, Scope::TripsWrite)?;
        let original = self.owned_view(principal, original_id).await?;
        let keyed = Keyed {
            scope: format!("duplicate_trip:{}:{idempotency_key}", principal.user_id),
            digest: canonical_digest(&[&Value::String(original_id.to_string())]),
        };
        let trip_id = keyed.trip_id();
        let mut command = TripCommand::Duplicate {
            trip_id,
            owner_id: principal.user_id,
            original: Box::new(original.trip.clone()),
            today: today(),
            renamed_files: BTreeMap::new(),
        };
        // Deciding is pure: deciding once first tells which files the copy needs, so they are
        // copied before its events exist.
        let planned = decide(None, command.clone())?;
        let renamed = self.copy_files_for(trip_id, &planned).await?;
        if let TripCommand::Duplicate { renamed_files, .. } = &mut command {
            *renamed_files = renamed;
        }
        let recomputes_route = planned
            .iter()
            .any(|e| matches!(e, TripEvent::RouteRequested { .. }));
        if recomputes_route && original.trip.source.source_type == SourceType::GpxUpload {
            // The copy's route job reads its own upload: copy the file before the event.
            if let Some(file) = self
                .store
                .get_blob(&format!("upload:{original_id}"))
                .await?
            {
                self.store
                    .put_blob(&format!("upload:{trip_id}"), &file)
                    .await?;
            }
        }
        self.create_trip(principal, context, trip_id, command, Some(&keyed))
            .await
    }

    /// A copy owns its files: the original's track and detours (as the copy's `events` name
    /// them) are copied under the copy's keys; the answer maps each original key to its copy,
    /// for the copy's image to point at, so deleting the original (which deletes its files)
    /// leaves the copy whole.
    async fn copy_files_for(
        &self,
        copy: TripId,
        events: &[TripEvent],
    ) -> Result<BTreeMap<String, String>, AppError> {
        let mut renamed = BTreeMap::new();
        for event in events {
            let TripEvent::TripDuplicated {
                route,
                stages,
                generation,
                ..
            } = event
            else {
                continue;
            };
            let mut wanted: Vec<(&str, String)> = Vec::new();
            if let Some(route) = route {
                wanted.push((
                    &route.track_key,
                    etappe_track::stored::key(copy, *generation),
                ));
            }
            for stage in stages {
                if let Some(detour) = &stage.detour {
                    wanted.push((
                        &detour.track_key,
                        format!("detour:{copy}:{}:copy", stage.id),
                    ));
                }
            }
            for (from, to) in wanted {
                if let Some(bytes) = self.store.get_blob(from).await? {
                    self.store.put_blob(&to, &bytes).await?;
                    renamed.insert(from.to_owned(), to);
                }
            }
        }
        Ok(renamed)
    }

    /// Creates a new trip through the one command path; with a key, the events have ids
    /// derived from it so that a retry is recognised, and a retry answers the trip the first
    /// one made.
    async fn create_trip(
        &self,
        principal: &Principal,
        context: &RequestContext,
        trip_id: TripId,
        command: TripCommand,
        keyed: Option<&Keyed>,
    ) -> Result<Created, AppError> {
        let mut meta = command_metadata(principal, context);
        meta.metadata.request_digest = keyed.map(|k| k.digest.clone());
        if let Some(k) = keyed {
            meta.ids = EventIds::Derived(format!("event:{}", k.scope));
        }
        let executed = self
            .store
            .execute(trip_id, Basis::NewStream, &meta, |_| command.clone())
            .await?;
        if executed.already_appended {
            let digest = meta.metadata.request_digest.as_deref();
            return self.replay(trip_id, digest, executed.view).await;
        }
        let view = executed.view.ok_or(AppError::NotFound)?;
        Ok(Created {
            trip: TripSummary::of(&view, today()),
            replayed: false,
        })
    }

    /// Answers a creation (or duplication) repeated with the same idempotency key; `current`
    /// is the trip's view now.
    async fn replay(
        &self,
        trip_id: TripId,
        digest: Option<&str>,
        current: Option<TripView>,
    ) -> Result<Created, AppError> {
        let first = self.store.read_stream(&trip_id.stream_id()).await?;
        let original = first
            .first()
            .and_then(|e| e.metadata.request_digest.as_deref());
        if original != digest {
            return Err(AppError::Conflict(
                "this Idempotency-Key was already used for a different request; use a new key for a new trip".into(),
            ));
        }
        match current {
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
        Ok(TripSummary::of(
            &self.owned_view(principal, trip_id).await?,
            today(),
        ))
    }

    /// The whole trip.
    pub async fn detail(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<TripDetail, AppError> {
        require(principal, Scope::TripsRead)?;
        Ok(TripDetail::of(
            &self.owned_view(principal, trip_id).await?,
            today(),
        ))
    }

    /// One page of the caller's trips.
    /// A trip's detail and its share link from one read (what the agent surface's
    /// confirmation checks and summarises).
    pub async fn detail_with_share(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<(TripDetail, Option<ShareLink>), AppError> {
        require(principal, Scope::TripsRead)?;
        let view = self.owned_view(principal, trip_id).await?;
        Ok((TripDetail::of(&view, today()), view.trip.share.clone()))
    }

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
        confirm: &dyn Confirm,
    ) -> Result<TripDetail, AppError> {
        require(principal, Scope::TripsWrite)?;
        let current = self.owned_view(principal, trip_id).await?;
        if current.trip.is_locked(today()) {
            return Err(AppError::Locked);
        }
        let base = base.ok_or(AppError::PreconditionRequired)?;
        refuse_unknown(input, &update_fields())?;
        let patch = parse_settings(input, NullMeans::Clear)?;
        let command = |trip: Option<&Trip>| TripCommand::UpdateSettings {
            patch: patch.clone(),
            expected_version: base.expected(trip.map_or(0, |t| t.version)),
            today: today(),
        };
        confirmation::guard(&current, command(Some(&current.trip)), confirm).await?;
        let after = self
            .execute(principal, trip_id, current, context, command)
            .await?;
        Ok(TripDetail::of(&after.ok_or(AppError::NotFound)?, today()))
    }

    /// Deletes a trip; allowed when it is locked.
    pub async fn delete(
        &self,
        principal: &Principal,
        trip_id: TripId,
        context: &RequestContext,
        confirm: &dyn Confirm,
    ) -> Result<(), AppError> {
        require(principal, Scope::TripsWrite)?;
        let current = self.owned_view(principal, trip_id).await?;
        confirmation::guard(&current, TripCommand::Delete, confirm).await?;
        self.execute(principal, trip_id, current, context, |_| {
            TripCommand::Delete
        })
        .await?;
        // What hangs off the trip goes with it: its upload, tracks and detours. The event is
        // the fact; a blob left by a failure here is only space, never shown again.
        match self.store.delete_trip_blobs(trip_id).await {
            Ok(n) => tracing::debug!(%trip_id, blobs = n, "deleted trip's files"),
            Err(error) => tracing::warn!(%trip_id, %error, "the trip's files were not deleted"),
        }
        Ok(())
    }

    /// A caller's command on the trip it has just read (`loaded`, authorized), through the
    /// store's one command path; answers the trip after it (`None` once deleted), as the
    /// append projected it.
    pub(super) async fn execute(
        &self,
        principal: &Principal,
        trip_id: TripId,
        loaded: TripView,
        context: &RequestContext,
        command: impl Fn(Option<&Trip>) -> TripCommand + Send + Sync,
    ) -> Result<Option<TripView>, AppError> {
        let executed = self
            .store
            .execute(
                trip_id,
                Basis::Loaded(Box::new(loaded)),
                &command_metadata(principal, context),
                command,
            )
            .await?;
        Ok(executed.view)
    }

    /// Re-runs the analysis of the days: refused while one runs (409), without days (422),
    /// on a locked trip (423). Answers at once; the workers do the rest.
    pub async fn analyze(
        &self,
        principal: &Principal,
        trip_id: TripId,
        context: &RequestContext,
    ) -> Result<TripSummary, AppError> {
        require(principal, Scope::TripsWrite)?;
        let current = self.owned_view(principal, trip_id).await?;
        let after = self
            .execute(principal, trip_id, current, context, |_| {
                TripCommand::RequestAnalysis { today: today() }
            })
            .await?;
        Ok(TripSummary::of(&after.ok_or(AppError::NotFound)?, today()))
    }

    /// Creates a trip from an uploaded GPX file: the file is stored, then the trip takes the
    /// same path as a link (the workers parse and pace it). `settings` takes the same names
    /// as a creation, without `sourceUrl`.
    pub async fn create_from_upload(
        &self,
        principal: &Principal,
        file_name: &str,
        bytes: &[u8],
        settings: &Map<String, Value>,
        context: &RequestContext,
    ) -> Result<Created, AppError> {
        require(principal, Scope::TripsWrite)?;
        refuse_unknown(settings, &update_fields())?;
        let patch = parse_settings(settings, NullMeans::Absent)?;
        if bytes.is_empty() {
            return Err(InputError::Invalid(vec![FieldError::new(
                "file",
                "file is empty: send a GPX file",
            )])
            .into());
        }
        // A file that is not a route is refused now, naming what it is, rather than accepted
        // and failed later: the caller is still here to read the reason.
        if let Err(error) = etappe_route::parse_gpx(bytes) {
            return Err(InputError::Invalid(vec![FieldError::new(
                "file",
                format!(
                    "file is not a usable GPX route ({}; found {}): send a GPX 1.0 or 1.1 file with a track or a route",
                    etappe_workers::pipeline::describe_route_error(&error),
                    what_the_file_is(bytes)
                ),
            )])
            .into());
        }
        self.admit_creation(principal).await?;
        let quota = self.budgets.settings.upload_quota_bytes();
        let used = self.store.upload_bytes_of(principal.user_id).await?;
        if used.saturating_add(bytes.len() as u64) > quota {
            return Err(AppError::QuotaExceeded(format!(
                "this upload ({} MB) would take your uploaded files to {} MB, over the {} MB kept per user; delete trips you no longer need",
                bytes.len().div_ceil(1024 * 1024),
                (used + bytes.len() as u64).div_ceil(1024 * 1024),
                quota / (1024 * 1024)
            )));
        }
        let trip_id = TripId::new();
        let name: String = etappe_domain::text::strip_controls(file_name)
            .chars()
            .take(200)
            .collect();
        let source = SourceUrl {
            url: format!("upload:{name}"),
            source_type: SourceType::GpxUpload,
        };
        let command = TripCommand::Create {
            trip_id,
            owner_id: principal.user_id,
            source,
            settings: patch,
        };
        // Deciding is pure: a refusal comes before the file is stored, not after.
        decide(None, command.clone())?;
        // The file first: the route job must find it when the event is dispatched.
        self.store
            .put_blob(&format!("upload:{trip_id}"), bytes)
            .await?;
        self.create_trip(principal, context, trip_id, command, None)
            .await
    }

    /// The trip's current summary, for the live event stream (after ownership is checked).
    pub async fn watch(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<TripView, AppError> {
        require(principal, Scope::TripsRead)?;
        self.owned_view(principal, trip_id).await
    }

    /// The read model of a trip, if it still exists (the live stream polls it).
    pub async fn current_view(&self, trip_id: TripId) -> Result<Option<TripView>, AppError> {
        Ok(self.store.trip_view(trip_id).await?)
    }

    /// Opens the trip's public link, or answers the one already open (`true` when new).
    /// Allowed on a locked trip.
    pub async fn share(
        &self,
        principal: &Principal,
        trip_id: TripId,
        context: &RequestContext,
    ) -> Result<(ShareLink, bool), AppError> {
        require(principal, Scope::TripsWrite)?;
        let current = self.owned_view(principal, trip_id).await?;
        if let Some(link) = current.trip.share.clone() {
            return Ok((link, false));
        }
        let code = new_share_code();
        let at = chrono::Utc::now();
        let after = self
            .execute(principal, trip_id, current, context, |_| {
                TripCommand::Share {
                    code: code.clone(),
                    at,
                }
            })
            .await?
            .ok_or(AppError::NotFound)?;
        after
            .trip
            .share
            .map(|link| (link, true))
            .ok_or_else(|| AppError::Internal("share link not recorded".into()))
    }

    /// The trip's active public link, if any.
    pub async fn share_link(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<Option<ShareLink>, AppError> {
        require(principal, Scope::TripsRead)?;
        Ok(self.owned_view(principal, trip_id).await?.trip.share)
    }

    /// Revokes the public link; the code answers 404 to everyone afterwards.
    pub async fn unshare(
        &self,
        principal: &Principal,
        trip_id: TripId,
        context: &RequestContext,
        confirm: &dyn Confirm,
    ) -> Result<(), AppError> {
        require(principal, Scope::TripsWrite)?;
        let current = self.owned_view(principal, trip_id).await?;
        confirmation::guard(&current, TripCommand::Unshare, confirm).await?;
        self.execute(principal, trip_id, current, context, |_| {
            TripCommand::Unshare
        })
        .await?;
        Ok(())
    }

    /// The trip behind an active public code. A malformed, unknown or revoked code is a 404.
    pub async fn shared_view(&self, code: &str) -> Result<TripView, AppError> {
        let well_formed = code.len() == SHARE_CODE_CHARS
            && code
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !well_formed {
            return Err(AppError::NotFound);
        }
        self.store
            .trip_view_by_share(code)
            .await?
            .ok_or(AppError::NotFound)
    }

    /// The trip's history: every event, oldest first, with who caused it, when, and a sentence.
    pub async fn history(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<Vec<HistoryEntry>, AppError> {
        require(principal, Scope::TripsRead)?;
        self.owned_view(principal, trip_id).await?;
        let events = self.store.read_stream(&trip_id.stream_id()).await?;
        Ok(events
            .iter()
            .map(|e| HistoryEntry {
                stream_version: e.version,
                event_type: e.event_type.clone(),
                actor: e.metadata.actor.clone(),
                at: e.recorded_at,
                summary: TripEvent::from_stored(&e.event_type, e.schema_version, &e.data)
                    .map(|event| describe(&event))
                    .unwrap_or_else(|_| e.event_type.clone()),
            })
            .collect())
    }

    /// The trip as it was at structural version `version` (the last state that had it).
    pub async fn detail_at(
        &self,
        principal: &Principal,
        trip_id: TripId,
        version: u64,
    ) -> Result<TripDetail, AppError> {
        require(principal, Scope::TripsRead)?;
        self.owned_view(principal, trip_id).await?;
        let events = self.store.read_stream(&trip_id.stream_id()).await?;
        let mut state: Option<TripView> = None;
        let mut found: Option<TripView> = None;
        for event in &events {
            state = TripView::apply(state, event).map_err(|e| AppError::Internal(e.to_string()))?;
            if let Some(view) = state.as_ref().filter(|v| v.trip.version == version) {
                found = Some(view.clone());
            }
        }
        let view = found.ok_or(AppError::NoSuchVersion(version))?;
        Ok(TripDetail::of(&view, today()))
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> Result<(), AppError> {
        Ok(self.store.ping().await?)
    }
}

/// Characters of a share code: 64 random bits in URL-safe base64 (11 characters), far beyond
/// what enumeration can reach.
pub const SHARE_CODE_CHARS: usize = 11;

fn new_share_code() -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bits = u128::from(rand::random::<u64>());
    (0..SHARE_CODE_CHARS)
        .map(|_| {
            let c = ALPHABET[(bits & 63) as usize] as char;
            bits >>= 6;
            c
        })
        .collect()
}

/// One line of a trip's history.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub stream_version: u64,
    #[serde(rename = "type")]
    pub event_type: String,
    pub actor: Option<String>,
    pub at: chrono::DateTime<chrono::Utc>,
    pub summary: String,
}

/// A sentence for an event, for people reading the history.
fn describe(event: &TripEvent) -> String {
    match event {
        TripEvent::TripCreated { source, .. } => format!(
            "Trip created from a {:?} link (version 1)",
            source.source_type
        ),
        TripEvent::RouteRequested { generation } => {
            format!("Days requested (pacing generation {generation})")
        }
        TripEvent::TripSettingsUpdated {
            changed, version, ..
        } => format!(
            "Settings changed: {} (version {version})",
            changed
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        TripEvent::TripDeleted => "Trip deleted".into(),
        TripEvent::RouteComputationStarted { generation, .. } => {
            format!("Route computation started (generation {generation})")
        }
        TripEvent::RouteComputed {
            stages,
            route,
            version,
            ..
        } => format!(
            "{} days computed over {:.1} km (version {version})",
            stages.len(),
            route.total_distance_km
        ),
        TripEvent::RouteFailed { reason, .. } => format!("Route failed: {reason}"),
        TripEvent::AnalysisRequested { .. } => "Analysis requested".into(),
        TripEvent::AnalysisStarted { .. } => "Analysis started".into(),
        TripEvent::AnalysisCompleted { stages, .. } => format!(
            "Analysis completed: {} alert(s)",
            stages.iter().map(|s| s.alerts.len()).sum::<usize>()
        ),
        TripEvent::TripShared { .. } => "Public link opened".into(),
        TripEvent::TripUnshared => "Public link revoked".into(),
        TripEvent::StagesEdited {
            action,
            stages,
            version,
            ..
        } => format!(
            "Days edited ({}): now {} days (version {version})",
            action.as_str(),
            stages.len()
        ),
        TripEvent::AccommodationScanRequested { radius_km, .. } => {
            format!("Accommodation scan requested ({radius_km} km around each day's end)")
        }
        TripEvent::AccommodationsFound { stages, .. } => format!(
            "Accommodations found: {} candidate(s)",
            stages.iter().map(|s| s.accommodations.len()).sum::<usize>()
        ),
        TripEvent::WaypointRequested { .. } => "Detour through a waypoint requested".into(),
        TripEvent::TripDuplicated {
            from_trip_id,
            stages,
            ..
        } => format!(
            "Trip created as a copy of trip {from_trip_id} with its {} days (version 1)",
            stages.len()
        ),
        TripEvent::DetourFailed { reason, .. } => format!("Detour failed: {reason}"),
        TripEvent::StageRerouted {
            detour,
            distance_km,
            ..
        } => format!(
            "Day re-routed through a waypoint by {} ({distance_km:.1} km{})",
            detour.router,
            if detour.estimated { ", estimated" } else { "" }
        ),
    }
}

/// What an uploaded file looks like, for a refusal that names it.
fn what_the_file_is(bytes: &[u8]) -> String {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace() && *b != 0xEF && *b != 0xBB && *b != 0xBF)
        .unwrap_or(0);
    let head = &bytes[start..bytes.len().min(start + 512)];
    if bytes.len() > 12 && &bytes[8..12] == b".FIT" {
        return "a FIT file".into();
    }
    if head.starts_with(b"PK") {
        return "a ZIP archive".into();
    }
    if head.starts_with(b"{") || head.starts_with(b"[") {
        return "JSON".into();
    }
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    if text.starts_with("<!doctype html") || text.starts_with("<html") {
        return "an HTML page".into();
    }
    if text.starts_with('<') {
        // The first element that is not a declaration or a comment.
        let root = text
            .split('<')
            .skip(1)
            .find(|t| !t.starts_with('?') && !t.starts_with('!'))
            .map(|t| {
                t.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '_' | '-'))
                    .collect::<String>()
            })
            .filter(|t| !t.is_empty());
        return match root {
            Some(root) => format!("an XML document whose root is <{root}>"),
            None => "an XML document".into(),
        };
    }
    if head
        .iter()
        .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
    {
        "plain text".into()
    } else {
        "binary data".into()
    }
}

//! The trip service: creating, reading, changing the settings of and deleting trips.
//!
//! Every method authorizes first (scope, then ownership looked up by id, so a foreign trip
//! and a missing one are refused alike before anything is loaded), then parses and hands the
//! command to the store's one command path (`execute`: decide, append, and the view that
//! append projected). A stream conflict caused by another writer (a worker result, say) is
//! retried there; a stale *trip version* from the caller is never retried.

use std::sync::Arc;

use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use etappe_domain::trip::input::{NullMeans, parse_settings, refuse_unknown};
use etappe_domain::trip::settings::{NightsMode, SettingField, SettingsPatch};
use etappe_domain::trip::{InputError, ShareLink, Trip, TripCommand, TripEvent};
use etappe_events::command::Gate;
use etappe_events::{CommandMetadata, DecidedOn, EventIds, EventMetadata, Page, Store, TripFilter};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::access::require;
use super::confirmation::{Asks, Confirm, Confirmation};
use super::views::{TripDetail, TripList, TripListItem, TripSummary, today};
use super::{AppError, Caller};
use crate::identity::{Principal, Scope};

mod creation;
pub mod days;
mod history;
mod horizon;
mod sharing;

pub use self::creation::Created;
pub use self::history::HistoryEntry;
pub use self::sharing::SHARE_CODE_CHARS;

/// The largest page of the trip list.
pub const MAX_ITEMS_PER_PAGE: u32 = 30;
/// The highest page number the trip list reads (REST `?page=`, MCP `list_trips.page`).
pub const MAX_PAGE: u32 = 100_000;
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

/// Creating, reading and editing trips.
#[derive(Debug, Clone)]
pub struct TripService {
    pub(super) store: Arc<dyn Store>,
    allowed_source_hosts: Vec<String>,
    /// Where trip creations are counted (10 a minute per user, every transport together).
    budgets: Arc<crate::budgets::Budgets>,
    /// When each trip last asked for its weather on read (see `horizon`).
    weather_refreshes: Arc<horizon::Refreshes>,
    /// The geocoder that resolves a plan's place names and the router that must exist for
    /// a plan to be accepted.
    upstreams: etappe_workers::upstreams::Upstreams,
    /// Where the commands' decide-and-append durations are counted.
    metrics: Arc<etappe_infra::metrics::Metrics>,
}

/// What a plan needs and this deployment lacks, said once for REST and MCP.
pub const PLAN_NEEDS_A_ROUTER: &str = "planning from places needs a routing engine, and none is configured: set ETAPPE_ROUTER=valhalla with ETAPPE_ROUTER_URL (or start Etappe with ETAPPE_ONLINE=1), or create the trip from a route link or a GPX file";

/// The names a creation accepts.
pub fn create_fields() -> Vec<&'static str> {
    ["sourceUrl", "plan"]
        .into_iter()
        .chain(SettingField::ALL.iter().map(|f| f.name()))
        .collect()
}

/// The names a settings update accepts (`sourceUrl` is fixed at creation: create a new trip;
/// a planned trip's `plan` may change).
pub fn update_fields() -> Vec<&'static str> {
    std::iter::once("plan")
        .chain(SettingField::ALL.iter().map(|f| f.name()))
        .collect()
}

/// A plan change on top of the trip's plan: the fields given replace, those absent keep
/// their value (a PATCH merges), so "via Zürich" alone re-routes the same ends.
fn merged_plan(change: &Value, current: Option<&etappe_domain::trip::plan::RoutePlan>) -> Value {
    let (Value::Object(change), Some(current)) = (change, current) else {
        return change.clone();
    };
    let place = |p: &etappe_domain::trip::plan::PlanPlace| {
        let mut object = Map::new();
        object.insert("lat".into(), Value::from(p.lat));
        object.insert("lon".into(), Value::from(p.lon));
        if let Some(name) = &p.name {
            object.insert("name".into(), Value::String(name.clone()));
        }
        Value::Object(object)
    };
    let mut merged = change.clone();
    merged.entry("from").or_insert_with(|| place(&current.from));
    merged.entry("to").or_insert_with(|| place(&current.to));
    merged
        .entry("via")
        .or_insert_with(|| Value::Array(current.via.iter().map(place).collect()));
    merged
        .entry("profile")
        .or_insert_with(|| Value::String(current.profile.as_str().to_owned()));
    Value::Object(merged)
}

/// The digest of a request's canonical form: object keys sorted at every depth (serde_json's
/// map is ordered), so the same arguments in another order give the same digest, and numbers
/// by value (`65.0` is `65`), so one value written two ways is one argument.
pub fn canonical_digest(parts: &[&Value]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(canonical(part).to_string().as_bytes());
        hasher.update([0]);
    }
    hex::encode(hasher.finalize())
}

/// `value` with every whole number written as an integer (below 2^53, where a float is exact).
fn canonical(value: &Value) -> Value {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                // Whole and exactly representable: the integer is the same number.
                Value::from(f as i64)
            }
            _ => value.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), canonical(v))).collect())
        }
        other => other.clone(),
    }
}

fn metadata(caller: &Caller) -> EventMetadata {
    EventMetadata {
        actor: Some(format!("user:{}", caller.principal.user_id)),
        correlation_id: caller.context.correlation_id,
        causation_id: None,
        traceparent: caller.context.traceparent.clone(),
        request_digest: None,
    }
}

/// A caller's command: its events carry the caller and the request, with fresh ids.
fn command_metadata(caller: &Caller) -> CommandMetadata {
    CommandMetadata {
        metadata: metadata(caller),
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
            weather_refreshes: Arc::default(),
            upstreams: etappe_workers::upstreams::Upstreams::default(),
            metrics: Arc::default(),
        }
    }

    /// The service counting its appends' durations in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<etappe_infra::metrics::Metrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// The service resolving plans with these upstreams.
    pub fn with_upstreams(mut self, upstreams: etappe_workers::upstreams::Upstreams) -> Self {
        self.upstreams = upstreams;
        self
    }

    /// A caller's `plan` object resolved to places, refused at once when no routing engine
    /// could route it.
    pub(super) async fn resolve_plan_field(
        &self,
        value: &Value,
    ) -> Result<etappe_domain::trip::plan::RoutePlan, AppError> {
        let input = etappe_domain::trip::plan::parse_plan("plan", value)
            .map_err(|errors| AppError::Input(InputError::Invalid(errors)))?;
        if !self.upstreams.router.routes() {
            return Err(AppError::NotConfigured(PLAN_NEEDS_A_ROUTER.into()));
        }
        super::places::resolve_plan(&self.upstreams, &input).await
    }

    /// Refuses nights at accommodation at once when no OpenStreetMap source could find a bed:
    /// the days would otherwise be paced anywhere without a word.
    pub(super) async fn refuse_nights_without_beds(
        &self,
        patch: &SettingsPatch,
    ) -> Result<(), AppError> {
        if patch.nights != Some(NightsMode::AtAccommodation)
            || self.upstreams.osm_source().await.is_some()
        {
            return Ok(());
        }
        Err(AppError::NotConfigured(format!(
            "nights at_accommodation ends each day at a place to sleep found in OpenStreetMap, and {}",
            self.upstreams.no_osm_source_reason()
        )))
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
    /// inline projection, which is also the trip's current state (the command path appends
    /// against the version it read).
    pub(super) async fn owned_view(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<TripView, AppError> {
        super::access::owned_view(self.store.as_ref(), principal, trip_id).await
    }

    /// The caller's trip, to read: the read scope, then the owner.
    pub(super) async fn readable(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<TripView, AppError> {
        require(principal, Scope::TripsRead)?;
        self.owned_view(principal, trip_id).await
    }

    /// Where a trip stands: `{id, version, partial, isLocked, computationStatus}`.
    pub async fn summary(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<TripSummary, AppError> {
        Ok(TripSummary::of(
            &self.readable(principal, trip_id).await?,
            today(),
        ))
    }

    /// The whole trip.
    pub async fn detail(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<TripDetail, AppError> {
        let view = self.readable(principal, trip_id).await?;
        self.refresh_weather_if_due(&view).await;
        Ok(TripDetail::of(&view, today()))
    }

    /// One page of the caller's trips.
    /// A trip's detail and its share link from one read (what the agent surface's
    /// confirmation checks and summarises).
    pub async fn detail_with_share(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<(TripDetail, Option<ShareLink>), AppError> {
        let view = self.readable(principal, trip_id).await?;
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

    /// Changes settings; answers the trip after it and whether anything changed. Guards run in order: scope, ownership, lock (on the state before
    /// the edit), the presence of a base version, the values, then the version itself; the
    /// version moves only when something must be computed again.
    pub async fn update_settings(
        &self,
        caller: &Caller,
        trip_id: TripId,
        input: &Map<String, Value>,
        base: Option<BaseVersion>,
        confirm: &dyn Confirm,
    ) -> Result<(TripDetail, bool), AppError> {
        let current = self.writable(&caller.principal, trip_id).await?;
        let base = base.ok_or(AppError::PreconditionRequired)?;
        refuse_unknown(input, &update_fields())?;
        let patch = parse_settings(input, NullMeans::Clear)?;
        self.refuse_nights_without_beds(&patch).await?;
        let plan = match input.get("plan") {
            Some(value) if !value.is_null() => {
                if current.trip.source.plan.is_none() {
                    return Err(etappe_domain::trip::TripError::NotPlanned.into());
                }
                Some(
                    self.resolve_plan_field(&merged_plan(
                        value,
                        current.trip.source.plan.as_deref(),
                    ))
                    .await?,
                )
            }
            _ => None,
        };
        let command = |trip: Option<&Trip>| TripCommand::UpdateSettings {
            patch: patch.clone(),
            plan: plan.clone(),
            expected_version: base.expected(trip.map_or(0, |t| t.version)),
            today: today(),
        };
        let confirmation = Confirmation {
            confirm,
            asks: Asks::WhenRecut,
        };
        let (after, events) = self
            .execute_reporting(caller, trip_id, current, Some(confirmation), command)
            .await?;
        // Whether anything changed: the same values again append nothing.
        let changed = !events.is_empty();
        Ok((
            TripDetail::of(&after.ok_or(AppError::NotFound)?, today()),
            changed,
        ))
    }

    /// Deletes a trip; allowed when it is locked.
    pub async fn delete(
        &self,
        caller: &Caller,
        trip_id: TripId,
        confirm: &dyn Confirm,
    ) -> Result<(), AppError> {
        self.confirmed_change(
            caller,
            trip_id,
            confirm,
            Asks::UnlessNothingToLose,
            TripCommand::Delete,
        )
        .await?;
        // What hangs off the trip goes with it: its upload, tracks and detours. The event is
        // the fact; a blob left by a failure here is only space, never shown again.
        match self.store.delete_trip_blobs(trip_id).await {
            Ok(n) => tracing::debug!(%trip_id, blobs = n, "deleted trip's files"),
            Err(error) => tracing::warn!(%trip_id, %error, "the trip's files were not deleted"),
        }
        Ok(())
    }

    /// An irreversible change of the caller's trip, allowed when it is locked: the write
    /// scope, the owner, then `command` through the caller's confirmation.
    pub(super) async fn confirmed_change(
        &self,
        caller: &Caller,
        trip_id: TripId,
        confirm: &dyn Confirm,
        asks: Asks,
        command: TripCommand,
    ) -> Result<(), AppError> {
        require(&caller.principal, Scope::TripsWrite)?;
        let current = self.owned_view(&caller.principal, trip_id).await?;
        let confirmation = Confirmation { confirm, asks };
        self.execute_reporting(caller, trip_id, current, Some(confirmation), |_| {
            command.clone()
        })
        .await?;
        Ok(())
    }

    /// A caller's command on the trip it has just read (`loaded`, authorized), through the
    /// store's one command path; answers the trip after it, as the append projected it (a
    /// trip deleted meanwhile is not found).
    pub(super) async fn execute(
        &self,
        caller: &Caller,
        trip_id: TripId,
        loaded: TripView,
        command: impl Fn(Option<&Trip>) -> TripCommand + Send + Sync,
    ) -> Result<TripView, AppError> {
        self.execute_reporting(caller, trip_id, loaded, None, command)
            .await?
            .0
            .ok_or(AppError::NotFound)
    }

    /// [`execute`](Self::execute) an irreversible change: the caller's `confirmation` is
    /// asked about what the command decided, before anything is appended. Answers the trip
    /// after it (`None` once deleted) and the events decided (what an edit says it did
    /// beyond what was asked is in them).
    pub(super) async fn execute_reporting(
        &self,
        caller: &Caller,
        trip_id: TripId,
        loaded: TripView,
        confirmation: Option<Confirmation<'_>>,
        command: impl Fn(Option<&Trip>) -> TripCommand + Send + Sync,
    ) -> Result<(Option<TripView>, Vec<TripEvent>), AppError> {
        let started = std::time::Instant::now();
        let executed = self
            .store
            .execute_through(
                trip_id,
                DecidedOn::Loaded(Box::new(loaded)),
                &command_metadata(caller),
                command,
                confirmation.as_ref().map(|c| c as &dyn Gate),
            )
            .await;
        self.metrics
            .store_append
            .observe(started.elapsed().as_secs_f64());
        let executed = executed?;
        Ok((executed.view, executed.events))
    }

    /// Re-runs the analysis of the days: refused while one runs (409), without days (422),
    /// on a locked trip (423). Answers at once; the workers do the rest.
    pub async fn analyze(&self, caller: &Caller, trip_id: TripId) -> Result<TripSummary, AppError> {
        require(&caller.principal, Scope::TripsWrite)?;
        let current = self.owned_view(&caller.principal, trip_id).await?;
        let after = self
            .execute(caller, trip_id, current, |_| TripCommand::RequestAnalysis {
                today: today(),
            })
            .await?;
        Ok(TripSummary::of(&after, today()))
    }

    /// The trip's current summary, for the live event stream (after ownership is checked).
    pub async fn watch(
        &self,
        principal: &Principal,
        trip_id: TripId,
    ) -> Result<TripView, AppError> {
        self.readable(principal, trip_id).await
    }

    /// The read model of a trip, if it still exists (the live stream polls it).
    pub async fn current_view(&self, trip_id: TripId) -> Result<Option<TripView>, AppError> {
        Ok(self.store.trip_view(trip_id).await?)
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> Result<(), AppError> {
        Ok(self.store.ping().await?)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::canonical_digest;

    #[test]
    fn one_value_written_two_ways_is_one_argument() {
        let digest = |v: serde_json::Value| canonical_digest(&[&v]);
        assert_eq!(
            digest(json!({"settings": {"maxDistancePerDay": 65.0}, "id": "a"})),
            digest(json!({"id": "a", "settings": {"maxDistancePerDay": 65}}))
        );
        assert_eq!(digest(json!([1.0, -2.0])), digest(json!([1, -2])));
        assert_ne!(digest(json!({"x": 65.5})), digest(json!({"x": 65})));
        assert_ne!(digest(json!({"x": "65"})), digest(json!({"x": 65})));
    }
}

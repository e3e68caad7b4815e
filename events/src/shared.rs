//! What both adapters share: the rules of an append (refusals, idempotent retries, the version
//! guard), the append and rebuild flows over a backend's transaction, and the row shapes of the
//! trip read model. An adapter supplies only its SQL dialect, through [`Backend`].

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::{DateTime, SubsecRound, Utc};
use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use sqlx::Transaction;
use uuid::Uuid;

use crate::{
    AppendOutcome, ExpectedVersion, NewEvent, RebuildReport, RecordedEvent, StoreError, upcast,
};

/// What an append wrote, with the trip view it projected (`None` for a stream that is not a
/// trip's; `Some(None)` once the trip is deleted).
pub(crate) type Appended = (AppendOutcome, Option<Option<TripView>>);

/// One SQL dialect: the statements whose text or types differ between SQLite and PostgreSQL.
/// The flows around them (`append`, `rebuild`) are written once, below.
#[async_trait]
pub(crate) trait Backend: Send + Sync {
    type Db: sqlx::Database;

    /// Opens a writing transaction (SQLite takes its write lock at once).
    async fn begin_write(&self) -> Result<Transaction<'static, Self::Db>, StoreError>;

    /// Inserts the events under the stream guard and folds the trip view, all inside `tx`.
    async fn append_in_tx(
        tx: &mut Transaction<'static, Self::Db>,
        stream_id: &str,
        expected: ExpectedVersion,
        events: &[NewEvent],
    ) -> Result<Appended, StoreError>;

    /// The outcome of an earlier append of exactly these event ids, if there was one.
    async fn find_existing(&self, events: &[NewEvent])
    -> Result<Option<AppendOutcome>, StoreError>;

    /// The stream's version from its guard row (0 when it does not exist).
    async fn current_version(&self, stream_id: &str) -> Result<u64, StoreError>;

    /// Every trip event of the log in position order, read inside `tx` after it has made
    /// appends wait.
    async fn trip_events_in(
        tx: &mut Transaction<'static, Self::Db>,
    ) -> Result<Vec<RecordedEvent>, StoreError>;

    /// Replaces the trip read model with `views`, inside `tx`.
    async fn replace_views(
        tx: &mut Transaction<'static, Self::Db>,
        views: &BTreeMap<TripId, TripView>,
    ) -> Result<(), StoreError>;
}

/// Appends with the store's guarantees: refusals first, then one transaction; a lost race or
/// a repeated id resolves to the first outcome (the same ids) or a named conflict.
pub(crate) async fn append<B: Backend>(
    backend: &B,
    stream_id: &str,
    expected: ExpectedVersion,
    events: &[NewEvent],
) -> Result<Appended, StoreError> {
    check_append(events)?;
    let mut tx = backend.begin_write().await?;
    match B::append_in_tx(&mut tx, stream_id, expected, events).await {
        Ok(appended) => {
            tx.commit().await?;
            Ok(appended)
        }
        Err(error) => {
            tx.rollback().await?;
            let retryable = matches!(error, StoreError::Conflict { .. })
                || matches!(&error, StoreError::Database(sqlx::Error::Database(db)) if db.is_unique_violation());
            if !retryable {
                return Err(error);
            }
            if let Some(existing) = backend.find_existing(events).await? {
                return Ok((existing, None));
            }
            Err(StoreError::Conflict {
                stream_id: stream_id.to_owned(),
                expected,
                actual: backend.current_version(stream_id).await?,
            })
        }
    }
}

/// Folds the whole log into fresh trip views and swaps them in, in one transaction.
pub(crate) async fn rebuild<B: Backend>(backend: &B) -> Result<RebuildReport, StoreError> {
    let mut tx = backend.begin_write().await?;
    let events = B::trip_events_in(&mut tx).await?;
    let mut report = RebuildReport::default();
    let mut views: BTreeMap<TripId, Option<TripView>> = BTreeMap::new();
    for event in &events {
        report.events += 1;
        let Some(trip_id) = TripId::from_stream_id(&event.stream_id) else {
            continue;
        };
        let current = views.remove(&trip_id).flatten();
        views.insert(trip_id, TripView::apply(current, event)?);
    }
    let live: BTreeMap<TripId, TripView> = views
        .into_iter()
        .filter_map(|(id, view)| view.map(|v| (id, v)))
        .collect();
    report.trips = live.len() as u64;
    B::replace_views(&mut tx, &live).await?;
    tx.commit().await?;
    Ok(report)
}

/// An append whose transaction stays open until commit or rollback (the conformance suite's
/// late commit).
#[cfg(feature = "testing")]
pub(crate) struct Pending<DB: sqlx::Database> {
    pub(crate) tx: Transaction<'static, DB>,
    pub(crate) outcome: AppendOutcome,
}

#[cfg(feature = "testing")]
#[async_trait]
impl<DB: sqlx::Database> crate::PendingAppend for Pending<DB> {
    async fn commit(self: Box<Self>) -> Result<AppendOutcome, StoreError> {
        self.tx.commit().await?;
        Ok(self.outcome)
    }

    async fn rollback(self: Box<Self>) -> Result<(), StoreError> {
        self.tx.rollback().await?;
        Ok(())
    }
}

/// Starts an append and leaves its transaction open.
#[cfg(feature = "testing")]
pub(crate) async fn begin_append<B: Backend>(
    backend: &B,
    stream_id: &str,
    expected: ExpectedVersion,
    events: &[NewEvent],
) -> Result<Box<dyn crate::PendingAppend>, StoreError>
where
    B::Db: sqlx::Database,
{
    check_append(events)?;
    let mut tx = backend.begin_write().await?;
    let (outcome, _) = B::append_in_tx(&mut tx, stream_id, expected, events).await?;
    Ok(Box::new(Pending { tx, outcome }))
}

/// Timestamps are stored with microsecond precision on both backends, so that a projection
/// rebuilt from stored events equals the one written live.
pub(crate) fn now_micros() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(6)
}

/// The category of a stream (`trip` for `trip-…`), stored with it.
pub(crate) fn stream_type(stream_id: &str) -> &str {
    stream_id
        .split_once('-')
        .map_or(stream_id, |(kind, _)| kind)
}

/// Refuses appends that could never be right.
pub(crate) fn check_append(events: &[NewEvent]) -> Result<(), StoreError> {
    if events.is_empty() {
        return Err(StoreError::InvalidAppend(
            "an append needs at least one event",
        ));
    }
    let mut ids: Vec<Uuid> = events.iter().map(|e| e.event_id).collect();
    ids.sort();
    ids.dedup();
    if ids.len() != events.len() {
        return Err(StoreError::InvalidAppend(
            "event ids repeat within one append",
        ));
    }
    Ok(())
}

/// The event as it now stands in the log, read in today's shape.
pub(crate) fn recorded(
    stream_id: &str,
    event: &NewEvent,
    version: u64,
    (global_position, tx_id): (i64, u64),
    recorded_at: DateTime<Utc>,
) -> RecordedEvent {
    let (schema_version, data) =
        upcast::upcast(&event.event_type, event.schema_version, event.data.clone());
    RecordedEvent {
        global_position,
        tx_id,
        stream_id: stream_id.to_owned(),
        version,
        event_id: event.event_id,
        event_type: event.event_type.clone(),
        schema_version,
        data,
        metadata: event.metadata.clone(),
        recorded_at,
    }
}

/// Folds the new events of a trip stream into its read model. `None` when the stream is not a
/// trip's; `Some(None)` when the trip's view must be removed.
pub(crate) fn project_trip(
    stream_id: &str,
    current: Option<TripView>,
    events: &[RecordedEvent],
) -> Result<Option<Option<TripView>>, StoreError> {
    if TripId::from_stream_id(stream_id).is_none() {
        return Ok(None);
    }
    let mut view = current;
    for event in events {
        view = TripView::apply(view, event)?;
    }
    Ok(Some(view))
}

/// The outcome of an append whose events are all already stored, if they are.
pub(crate) fn existing_outcome(
    expected_count: usize,
    rows: impl Iterator<Item = (i64, i64)>,
) -> Option<AppendOutcome> {
    let rows: Vec<(i64, i64)> = rows.collect();
    if rows.len() != expected_count || rows.is_empty() {
        return None;
    }
    Some(AppendOutcome {
        first_version: rows[0].0 as u64,
        last_version: rows[rows.len() - 1].0 as u64,
        positions: rows.iter().map(|r| r.1).collect(),
        already_appended: true,
    })
}

/// Whether a stream at `current` may take an append expecting `expected`.
pub(crate) fn version_matches(expected: ExpectedVersion, current: Option<u64>) -> bool {
    match expected {
        ExpectedVersion::NoStream | ExpectedVersion::Exact(0) => current.is_none(),
        ExpectedVersion::Exact(v) => current == Some(v),
        ExpectedVersion::Any => true,
    }
}

/// A trip view as stored in the `doc` column.
pub(crate) fn view_from_doc(doc: serde_json::Value) -> Result<TripView, StoreError> {
    serde_json::from_value(doc).map_err(|e| StoreError::Corrupt(format!("trip view: {e}")))
}

/// The columns of a trip view row, in one shape for both dialects (what a dump shows).
#[cfg(feature = "testing")]
#[derive(Debug)]
pub(crate) struct ViewRow {
    pub(crate) trip_id: String,
    pub(crate) owner_id: String,
    pub(crate) title: Option<String>,
    pub(crate) start_date: Option<String>,
    pub(crate) end_date: Option<String>,
    pub(crate) created_at: DateTime<Utc>,
    pub(crate) updated_at: DateTime<Utc>,
    pub(crate) stream_version: i64,
    pub(crate) doc: serde_json::Value,
}

#[cfg(feature = "testing")]
impl ViewRow {
    /// The row as the rebuild test compares it.
    pub(crate) fn dump(self) -> serde_json::Value {
        serde_json::json!({
            "tripId": self.trip_id,
            "ownerId": self.owner_id,
            "title": self.title,
            "startDate": self.start_date,
            "endDate": self.end_date,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "streamVersion": self.stream_version,
            "doc": self.doc,
        })
    }
}

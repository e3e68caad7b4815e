//! The store written once for both SQL backends: the rules of an append (refusals, idempotent
//! retries, the version guard), the append and rebuild flows, the appending halves of the
//! event-log and read-model ports ([`EventStore`], [`TripViews`]) implemented over any
//! [`SqlDialect`], and the row shapes of the trip read model. A backend supplies its dialect
//! (the statements of those flows whose text, bound types or row decoding differ between
//! SQLite and PostgreSQL) and answers the ports' other halves, the log's reads
//! ([`EventLog`]) and the read model's lookups ([`TripQueries`]), with its own statements.

use async_trait::async_trait;
use chrono::{DateTime, SubsecRound, Utc};
use etappe_domain::ids::TripId;
use etappe_domain::projection::TripView;
use sqlx::{Database, Pool, Transaction};
use tracing::{Instrument, Span};
use uuid::Uuid;

use crate::{
    AppendOutcome, EventLog, EventStore, ExpectedVersion, NewEvent, RebuildReport, RecordedEvent,
    StoreError, TripAppend, TripQueries, TripViews, upcast,
};

/// What an append wrote, with the trip view it projected (`None` for a stream that is not a
/// trip's; `Some(None)` once the trip is deleted).
pub(crate) type Appended = (AppendOutcome, Option<Option<TripView>>);

/// The connection type of a dialect's database.
pub(crate) type ConnectionOf<D> = <<D as SqlDialect>::Db as Database>::Connection;

/// One SQL dialect: the statements of the append and rebuild flows whose text, bound types
/// or row decoding differ between SQLite and PostgreSQL, beside the backend's own reads and
/// lookups. The flows themselves and the trip projection are written once, in this module,
/// for every dialect.
#[async_trait]
pub(crate) trait SqlDialect: EventLog + TripQueries {
    type Db: Database;
    /// The database's name in OpenTelemetry's `db.system.name` ("postgresql", "sqlite").
    const SYSTEM: &'static str;

    /// The store's connection pool.
    fn pool(&self) -> &Pool<Self::Db>;

    // The write path.

    /// Opens a writing transaction (SQLite takes its write lock at once).
    async fn begin_write(&self) -> Result<Transaction<'static, Self::Db>, StoreError>;

    /// Moves the stream guard and inserts the events behind it, inside `tx`, answering them
    /// as recorded. A guard that does not hold inserts nothing and is a
    /// [`StoreError::Conflict`].
    async fn insert_events(
        tx: &mut ConnectionOf<Self>,
        stream_id: &str,
        expected: ExpectedVersion,
        events: &[NewEvent],
    ) -> Result<Vec<RecordedEvent>, StoreError>;

    /// The stored read model of one trip.
    async fn load_view(
        connection: &mut ConnectionOf<Self>,
        trip_id: TripId,
    ) -> Result<Option<TripView>, StoreError>;

    /// Writes (or, with `None`, deletes) the read model of one trip.
    async fn write_view(
        connection: &mut ConnectionOf<Self>,
        trip_id: TripId,
        view: Option<&TripView>,
    ) -> Result<(), StoreError>;

    /// `(version, global_position)` of the stored events among `event_ids`, in position
    /// order.
    async fn stored_places(&self, event_ids: &[Uuid]) -> Result<Vec<(i64, i64)>, StoreError>;

    /// Up to `limit` trip stream ids after `after`, in id order (the rebuild's keyset pages).
    async fn trip_streams_after(
        &self,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<String>, StoreError>;

    /// Inside `tx`: makes appends to `stream_id` wait until it ends, and answers its events
    /// in version order.
    async fn locked_stream(
        tx: &mut ConnectionOf<Self>,
        stream_id: &str,
    ) -> Result<Vec<RecordedEvent>, StoreError>;

    /// Every trip view row as stored, ordered by trip id.
    #[cfg(feature = "testing")]
    async fn view_rows(&self) -> Result<Vec<ViewRow>, StoreError>;
}

#[async_trait]
impl<D: SqlDialect> EventStore for D {
    async fn append(
        &self,
        stream_id: &str,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> Result<AppendOutcome, StoreError> {
        Ok(append(self, stream_id, expected, &events).await?.0)
    }

    #[cfg(feature = "testing")]
    async fn begin_append(
        &self,
        stream_id: &str,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> Result<Box<dyn crate::PendingAppend>, StoreError> {
        check_append(&events)?;
        let mut tx = self.begin_write().await?;
        let (outcome, _) = append_in_tx::<D>(&mut tx, stream_id, expected, &events).await?;
        Ok(Box::new(Pending { tx, outcome }))
    }
}

#[async_trait]
impl<D: SqlDialect> TripViews for D {
    async fn trip_view(&self, trip_id: TripId) -> Result<Option<TripView>, StoreError> {
        let span = store_span::<D>("read", "trip_views", &trip_id.stream_id());
        async {
            let mut connection = self.pool().acquire().await?;
            D::load_view(&mut connection, trip_id).await
        }
        .instrument(span)
        .await
    }

    async fn append_to_trip(
        &self,
        trip_id: TripId,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> Result<TripAppend, StoreError> {
        let (outcome, view) = append(self, &trip_id.stream_id(), expected, &events).await?;
        Ok(TripAppend {
            outcome,
            view: view.flatten(),
        })
    }

    async fn rebuild_projections(&self) -> Result<RebuildReport, StoreError> {
        rebuild(self).await
    }

    #[cfg(feature = "testing")]
    async fn dump_trip_views(&self) -> Result<Vec<serde_json::Value>, StoreError> {
        Ok(self
            .view_rows()
            .await?
            .into_iter()
            .map(ViewRow::dump)
            .collect())
    }
}

/// Appends with the store's guarantees: refusals first, then one transaction; a lost race or
/// a repeated id resolves to the first outcome (the same ids) or a named conflict.
async fn append<D: SqlDialect>(
    dialect: &D,
    stream_id: &str,
    expected: ExpectedVersion,
    events: &[NewEvent],
) -> Result<Appended, StoreError> {
    check_append(events)?;
    let span = store_span::<D>("append", "events", stream_id);
    span.record("etappe.events", events.len());
    append_checked(dialect, stream_id, expected, events)
        .instrument(span)
        .await
}

/// A span of one store call under the request's or the job's, named and attributed as
/// OpenTelemetry's database conventions say (`{operation} {collection}`, `db.system.name`),
/// so a trace shows where a command's time went.
fn store_span<D: SqlDialect>(operation: &str, collection: &str, stream_id: &str) -> Span {
    tracing::info_span!(
        "store",
        otel.name = %format!("{operation} {collection}"),
        otel.kind = "client",
        db.system.name = D::SYSTEM,
        db.operation.name = operation,
        db.collection.name = collection,
        etappe.stream = stream_id,
        etappe.events = tracing::field::Empty,
    )
}

/// [`append`] once its events passed the refusals.
async fn append_checked<D: SqlDialect>(
    dialect: &D,
    stream_id: &str,
    expected: ExpectedVersion,
    events: &[NewEvent],
) -> Result<Appended, StoreError> {
    let mut tx = dialect.begin_write().await?;
    match append_in_tx::<D>(&mut tx, stream_id, expected, events).await {
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
            let event_ids: Vec<Uuid> = events.iter().map(|e| e.event_id).collect();
            let places = dialect.stored_places(&event_ids).await?;
            if let Some(existing) = existing_outcome(events.len(), &places) {
                return Ok((existing, None));
            }
            Err(StoreError::Conflict {
                stream_id: stream_id.to_owned(),
                expected,
                actual: dialect.stream_version(stream_id).await?,
            })
        }
    }
}

/// Inserts the events under the stream guard and folds the trip view, all inside `tx`.
async fn append_in_tx<D: SqlDialect>(
    tx: &mut ConnectionOf<D>,
    stream_id: &str,
    expected: ExpectedVersion,
    events: &[NewEvent],
) -> Result<Appended, StoreError> {
    let recorded = D::insert_events(tx, stream_id, expected, events).await?;
    let mut projected = None;
    if let Some(trip_id) = TripId::from_stream_id(stream_id) {
        let current = D::load_view(tx, trip_id).await?;
        if let Some(view) = project_trip(stream_id, current, &recorded)? {
            D::write_view(tx, trip_id, view.as_ref()).await?;
            projected = Some(view);
        }
    }
    let (Some(first), Some(last)) = (recorded.first(), recorded.last()) else {
        return Err(StoreError::InvalidAppend(
            "an append needs at least one event",
        ));
    };
    let outcome = AppendOutcome {
        first_version: first.version,
        last_version: last.version,
        positions: recorded.iter().map(|r| r.global_position).collect(),
        already_appended: false,
    };
    Ok((outcome, projected))
}

/// Folds the whole log into fresh trip views and swaps them in, in one transaction.
async fn rebuild<D: SqlDialect>(dialect: &D) -> Result<RebuildReport, StoreError> {
    // Online, a trip at a time: each trip's row is folded again from its own stream in a
    // short transaction that holds only that stream (appends to it wait a moment; reads never
    // do, and see the old row until the new one commits). Memory holds one trip's events.
    let mut report = RebuildReport::default();
    let mut after: Option<String> = None;
    loop {
        let page = dialect.trip_streams_after(after.as_deref(), 200).await?;
        let Some(last) = page.last().cloned() else {
            break;
        };
        for stream_id in &page {
            let Some(trip_id) = TripId::from_stream_id(stream_id) else {
                continue;
            };
            let mut tx = dialect.begin_write().await?;
            let events = D::locked_stream(&mut tx, stream_id).await?;
            let mut view = None;
            for event in &events {
                report.events += 1;
                view = TripView::apply(view, event)?;
            }
            report.trips += u64::from(view.is_some());
            D::write_view(&mut tx, trip_id, view.as_ref()).await?;
            tx.commit().await?;
        }
        after = Some(last);
    }
    Ok(report)
}

/// An append whose transaction stays open until commit or rollback (the conformance suite's
/// late commit).
#[cfg(feature = "testing")]
struct Pending<DB: Database> {
    tx: Transaction<'static, DB>,
    outcome: AppendOutcome,
}

#[cfg(feature = "testing")]
#[async_trait]
impl<DB: Database> crate::PendingAppend for Pending<DB> {
    async fn commit(self: Box<Self>) -> Result<AppendOutcome, StoreError> {
        self.tx.commit().await?;
        Ok(self.outcome)
    }

    async fn rollback(self: Box<Self>) -> Result<(), StoreError> {
        self.tx.rollback().await?;
        Ok(())
    }
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
fn check_append(events: &[NewEvent]) -> Result<(), StoreError> {
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
fn project_trip(
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
fn existing_outcome(expected_count: usize, rows: &[(i64, i64)]) -> Option<AppendOutcome> {
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

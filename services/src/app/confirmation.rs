//! Confirmation as a guard of the services, for the changes that cannot be undone (new
//! settings re-cut the days, a revoked link is gone, a deleted trip too). The service runs it
//! on the state it has read, after its own rules: the lock, the version and the values are
//! checked by a dry run of the domain's `decide`, the very decision the write then makes, so a
//! caller is never sent to confirm a change that would be refused anyway, and no transport
//! re-implements those rules. What a caller confirms with is the transport's business: REST
//! confirms by sending the request (its guard is `If-Match`); an agent confirms with a token
//! the first call minted (`mcp::confirm`).

use std::future::Future;
use std::pin::Pin;

use chrono::NaiveDate;
use etappe_domain::projection::TripView;
use etappe_domain::trip::{TripCommand, TripEvent, decide};
use serde::Serialize;

use super::AppError;
use super::views::TripDetail;

/// What the caller's confirmation says, asked once the change would go through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Confirmed: go ahead.
    Confirmed,
    /// Not confirmed yet: answer the impact, write nothing.
    Ask,
    /// A confirmation was given but does not hold (spent, expired, for other arguments).
    Invalid,
}

/// How a caller confirms an irreversible change.
pub trait Confirm: Send + Sync {
    /// Whether this caller confirms at all (REST does not: its request is the decision).
    fn asks(&self) -> bool {
        true
    }
    /// The caller's verdict (a token is spent in asking).
    fn verdict(&self) -> Pin<Box<dyn Future<Output = Verdict> + Send + '_>>;
}

/// The caller whose request is its decision (REST).
#[derive(Clone, Copy, Debug)]
pub struct ConfirmedByRequest;

impl Confirm for ConfirmedByRequest {
    fn asks(&self) -> bool {
        false
    }
    fn verdict(&self) -> Pin<Box<dyn Future<Output = Verdict> + Send + '_>> {
        Box::pin(std::future::ready(Verdict::Confirmed))
    }
}

/// What a change would touch, shown before it is confirmed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Impact {
    pub trip_id: String,
    pub title: Option<String>,
    pub stage_count: usize,
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
    pub has_active_share_link: bool,
    /// What the change does to the days, when it re-cuts them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
}

impl Impact {
    fn of(view: &TripView) -> Self {
        let detail = TripDetail::of(view, super::views::today());
        Self {
            trip_id: detail.id,
            title: detail.title,
            stage_count: detail.stage_count,
            start_date: detail.start_date,
            end_date: detail.end_date,
            has_active_share_link: view.trip.share.is_some(),
            change: None,
        }
    }
}

/// The guard: `command` decided on `current` (the domain's refusals come first), then the
/// caller's verdict.
pub(super) async fn guard(
    current: &TripView,
    command: TripCommand,
    confirm: &dyn Confirm,
) -> Result<(), AppError> {
    if !confirm.asks() {
        return Ok(());
    }
    decide(Some(&current.trip), command)?;
    ask(current, confirm, None).await
}

/// The guard of a settings change: confirmed only when it re-cuts the days (a new pacing
/// generation: new day ids, chosen places and manual splits gone); what keeps the days
/// applies at once, since nothing is lost.
pub(super) async fn guard_recut(
    current: &TripView,
    command: TripCommand,
    confirm: &dyn Confirm,
) -> Result<(), AppError> {
    if !confirm.asks() {
        return Ok(());
    }
    let events = decide(Some(&current.trip), command)?;
    let replanned = events
        .iter()
        .any(|e| matches!(e, TripEvent::TripReplanned { .. }));
    if !events
        .iter()
        .any(|e| matches!(e, TripEvent::RouteRequested { .. }))
    {
        return Ok(());
    }
    let change = if replanned {
        "routes the plan again and re-cuts the days: new day ids; chosen accommodations and manual splits are gone"
    } else {
        "re-cuts the days: new day ids; chosen accommodations and manual splits are gone"
    };
    ask(current, confirm, Some(change)).await
}

async fn ask(
    current: &TripView,
    confirm: &dyn Confirm,
    change: Option<&str>,
) -> Result<(), AppError> {
    match confirm.verdict().await {
        Verdict::Confirmed => Ok(()),
        Verdict::Ask => Err(AppError::ConfirmationRequired(Box::new(Impact {
            change: change.map(str::to_owned),
            ..Impact::of(current)
        }))),
        Verdict::Invalid => Err(AppError::ConfirmationInvalid),
    }
}

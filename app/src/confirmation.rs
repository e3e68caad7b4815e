//! Confirmation of the changes that cannot be undone (new settings re-cut the days, a revoked
//! link is gone, a deleted trip too), as the gate of the store's command path: it is asked
//! about the events the domain's `decide` chose, between the decision and the append, so the
//! change is decided once, a caller is never sent to confirm a change the domain refuses
//! anyway (the lock, the version and the values come first), and no transport re-implements
//! those rules. What a caller confirms with is the transport's business: REST
//! confirms by sending the request (its guard is `If-Match`); an agent confirms with a token
//! the first call minted (`mcp::confirm`).

use std::future::Future;
use std::pin::Pin;

use chrono::NaiveDate;
use etappe_domain::projection::TripView;
use etappe_domain::trip::TripEvent;
use etappe_events::command::{Gate, GateStop};
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
    /// What the change does to the days, when it re-cuts them or removes what a person made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    /// What an edit of the days would remove of what a person made, a sentence each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removes: Vec<String>,
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
            removes: Vec::new(),
        }
    }
}

/// What a confirmation is asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Asks {
    /// Whatever the command decides, a no-op too (a revoked link): a token is spent either
    /// way.
    Always,
    /// A deletion: asked unless nothing can be lost (a trip without days — failed, or still
    /// being computed — and without a public link goes at once).
    UnlessNothingToLose,
    /// A settings change that re-cuts days a person has worked on (a new pacing generation:
    /// new day ids, chosen places, detours and manual splits gone); what keeps the days, or
    /// re-cuts days nobody touched, applies at once, since nothing is lost.
    WhenRecut,
    /// An edit of the days that would remove something a person made (a detour no day can
    /// ride any more, a night they chose where the day no longer ends); every other edit
    /// applies at once and says what else it moved.
    WhenPersonsWorkLost,
}

/// The confirmation as the command path's gate: asked about the events `decide` chose, after
/// the domain's refusals, once per command.
pub(super) struct Confirmation<'a> {
    pub(super) confirm: &'a dyn Confirm,
    pub(super) asks: Asks,
}

impl Gate for Confirmation<'_> {
    fn pass<'a>(
        &'a self,
        state: Option<&'a TripView>,
        events: &'a [TripEvent],
    ) -> Pin<Box<dyn Future<Output = Result<(), GateStop>> + Send + 'a>> {
        Box::pin(async move {
            let Some(current) = state.filter(|_| self.confirm.asks()) else {
                return Ok(());
            };
            let change = match self.asks {
                Asks::Always => None,
                Asks::UnlessNothingToLose => {
                    if !current.trip.has_days() && current.trip.share.is_none() {
                        return Ok(());
                    }
                    None
                }
                // Days as Etappe cut them, untouched by anyone, are cut again without a
                // question: nothing a person made is lost.
                Asks::WhenRecut => {
                    match recut_change(events).filter(|_| current.trip.days_hold_persons_work()) {
                        Some(change) => Some(change.to_owned()),
                        None => return Ok(()),
                    }
                }
                Asks::WhenPersonsWorkLost => {
                    let removes = persons_work_lost(events);
                    if removes.is_empty() {
                        return Ok(());
                    }
                    return ask(
                        current,
                        self.confirm,
                        Some(format!(
                            "also removes what a person made: {}.",
                            removes.join("; ")
                        )),
                        removes,
                    )
                    .await
                    .map_err(|refusal| Box::new(refusal) as GateStop);
                }
            };
            ask(current, self.confirm, change, Vec::new())
                .await
                .map_err(|refusal| Box::new(refusal) as GateStop)
        })
    }
}

/// What re-cutting the days loses, when `events` re-cut them.
fn recut_change(events: &[TripEvent]) -> Option<&'static str> {
    let recut = events
        .iter()
        .any(|e| matches!(e, TripEvent::RouteRequested { .. }));
    let replanned = events
        .iter()
        .any(|e| matches!(e, TripEvent::TripReplanned { .. }));
    match (recut, replanned) {
        (false, _) => None,
        (true, true) => Some(
            "routes the plan again and re-cuts the days: new day ids; chosen accommodations and manual splits are gone",
        ),
        (true, false) => {
            Some("re-cuts the days: new day ids; chosen accommodations and manual splits are gone")
        }
    }
}

/// What an edit of the days would remove of what a person made, a sentence each.
fn persons_work_lost(events: &[TripEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            TripEvent::StagesEdited { effects, .. } => Some(effects),
            _ => None,
        })
        .flatten()
        .filter(|effect| effect.loses_persons_work())
        .map(|effect| effect.sentence())
        .collect()
}

async fn ask(
    current: &TripView,
    confirm: &dyn Confirm,
    change: Option<String>,
    removes: Vec<String>,
) -> Result<(), AppError> {
    match confirm.verdict().await {
        Verdict::Confirmed => Ok(()),
        Verdict::Ask => Err(AppError::ConfirmationRequired(Box::new(Impact {
            change,
            removes,
            ..Impact::of(current)
        }))),
        Verdict::Invalid => Err(AppError::ConfirmationInvalid),
    }
}

//! The one command path: every writer (REST, MCP, the workers) changes a trip through
//! `execute` (a method of `dyn` [`Store`]): load the state, decide the command with the
//! domain's one `decide`, append the events under the stream version the state was read at, and answer the
//! events with the view that same transaction projected. A lost race on the stream (another
//! writer appended meanwhile) reloads and decides again, a bounded number of times; the
//! decision itself (a stale caller version, a lock) is never retried.
//!
//! A caller may put a [`Gate`] between the decision and the append: the person's confirmation
//! of an irreversible change is asked about the events the command decided, so the change is
//! decided once, refused by the domain before anyone is asked, and asked about only when it
//! does what needs asking.

use std::future::Future;
use std::pin::Pin;

use etappe_domain::envelope::{EventMetadata, NewEvent};
use etappe_domain::ids::{TripId, derived_id};
use etappe_domain::projection::TripView;
use etappe_domain::trip::{Trip, TripCommand, TripError, TripEvent, decide};

use crate::{ExpectedVersion, Store, StoreError};

/// How many times a command is decided, at most, when other writers keep winning the race on
/// its stream.
pub const STREAM_CONFLICT_ATTEMPTS: usize = 10;

/// How the events of a command get their ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventIds {
    /// Fresh time-ordered ids.
    Fresh,
    /// `derived_id("{seed}:{i}")` for the `i`-th event: a repeated command (a redelivered job,
    /// a retried request under an idempotency key) appends the same ids, which the store
    /// recognises and does not write again.
    Derived(String),
}

/// What every event of a command carries, and how its ids are made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandMetadata {
    pub metadata: EventMetadata,
    pub ids: EventIds,
}

impl CommandMetadata {
    fn new_events(&self, events: &[TripEvent]) -> Vec<NewEvent> {
        events
            .iter()
            .enumerate()
            .map(|(i, e)| match &self.ids {
                EventIds::Fresh => e.to_new_event(&self.metadata),
                EventIds::Derived(seed) => {
                    e.to_new_event_with_id(derived_id(&format!("{seed}:{i}")), &self.metadata)
                }
            })
            .collect()
    }
}

/// The state a command is first decided on.
#[derive(Clone, Debug)]
pub enum DecidedOn {
    /// A new trip: its stream must not exist (a creation). No retry: a lost race here is
    /// another creation of the same id.
    NewStream,
    /// The view the caller has just read (and authorized); a retry reloads.
    Loaded(Box<TripView>),
    /// Whatever is current.
    Current,
}

/// Why a [`Gate`] stopped a command: the caller's own error, handed back unchanged.
pub type GateStop = Box<dyn std::error::Error + Send + Sync>;

/// The last word on a decided command before its events are appended.
pub trait Gate: Send + Sync {
    /// Lets the events of a decision on `state` through, or stops the command with nothing
    /// written. Asked once per command, about its first decision the domain accepts — one
    /// that changes nothing too (a confirmation token is spent on a no-op as on a change);
    /// a retry after a lost race appends what was let through once.
    fn pass<'a>(
        &'a self,
        state: Option<&'a TripView>,
        events: &'a [TripEvent],
    ) -> Pin<Box<dyn Future<Output = Result<(), GateStop>> + Send + 'a>>;
}

/// What a command did.
#[derive(Clone, Debug, PartialEq)]
pub struct Executed {
    /// The events decided (empty when the command changed nothing).
    pub events: Vec<TripEvent>,
    /// The trip after the command, as projected in the append's transaction (or the state
    /// decided on, when nothing was appended); `None` when the trip is gone.
    pub view: Option<TripView>,
    /// True when the same event ids were already stored: an earlier identical command wrote
    /// them, and nothing was written now (`view` is then the current one).
    pub already_appended: bool,
}

/// Why a command did not go through.
#[derive(Debug, thiserror::Error)]
pub enum ExecuteError {
    /// The domain refused the command.
    #[error(transparent)]
    Refused(#[from] TripError),
    /// Other writers kept winning the race on the stream.
    #[error("the trip kept changing while the command was written")]
    Contended,
    /// The command's gate stopped it before its events were appended.
    #[error("{0}")]
    Stopped(GateStop),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl dyn Store {
    /// Decides `command` (built from the state it is decided on) and appends its events,
    /// answering them with the trip's view after them. See the module's documentation.
    pub async fn execute(
        &self,
        trip_id: TripId,
        decided_on: DecidedOn,
        meta: &CommandMetadata,
        command: impl Fn(Option<&Trip>) -> TripCommand + Send + Sync,
    ) -> Result<Executed, ExecuteError> {
        self.execute_through(trip_id, decided_on, meta, command, None)
            .await
    }

    /// `execute`, with `gate` asked about the decision before its
    /// events are appended.
    pub async fn execute_through(
        &self,
        trip_id: TripId,
        decided_on: DecidedOn,
        meta: &CommandMetadata,
        command: impl Fn(Option<&Trip>) -> TripCommand + Send + Sync,
        mut gate: Option<&dyn Gate>,
    ) -> Result<Executed, ExecuteError> {
        let new_stream = matches!(decided_on, DecidedOn::NewStream);
        let mut loaded = match decided_on {
            DecidedOn::NewStream => Some((ExpectedVersion::NoStream, None)),
            DecidedOn::Loaded(view) => {
                Some((ExpectedVersion::Exact(view.stream_version), Some(*view)))
            }
            DecidedOn::Current => None,
        };
        for _ in 0..STREAM_CONFLICT_ATTEMPTS {
            let (expected, view) = match loaded.take() {
                Some(state) => state,
                None => self.current(trip_id).await?,
            };
            let state = view.as_ref().map(|v| &v.trip);
            let events = decide(state, command(state))?;
            if let Some(gate) = gate.take() {
                gate.pass(view.as_ref(), &events)
                    .await
                    .map_err(ExecuteError::Stopped)?;
            }
            if events.is_empty() {
                return Ok(Executed {
                    events,
                    view,
                    already_appended: false,
                });
            }
            match self
                .append_to_trip(trip_id, expected, meta.new_events(&events))
                .await
            {
                Ok(appended) if appended.outcome.already_appended => {
                    return Ok(Executed {
                        events,
                        view: self.trip_view(trip_id).await?,
                        already_appended: true,
                    });
                }
                Ok(appended) => {
                    return Ok(Executed {
                        events,
                        view: appended.view,
                        already_appended: false,
                    });
                }
                Err(StoreError::Conflict { .. }) if !new_stream => continue,
                Err(other) => return Err(other.into()),
            }
        }
        Err(ExecuteError::Contended)
    }

    /// The trip's current view and the version its stream is at: the view is written in the
    /// same transaction as every append, so it is the fold of the stream; without one (a
    /// deleted trip) the length comes from the stream's guard row, never from its events.
    async fn current(
        &self,
        trip_id: TripId,
    ) -> Result<(ExpectedVersion, Option<TripView>), StoreError> {
        Ok(match self.trip_view(trip_id).await? {
            Some(view) => (ExpectedVersion::Exact(view.stream_version), Some(view)),
            None => (
                ExpectedVersion::Exact(self.stream_version(&trip_id.stream_id()).await?),
                None,
            ),
        })
    }
}
